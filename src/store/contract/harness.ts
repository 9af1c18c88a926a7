/** What every store contract suite needs: a fresh store per test and the code of a refusal. */
import { GatewayError } from '../../errors/gateway-error.js';
import type { Store } from '../port.js';

export interface StoreHarness {
  store: Store;
  cleanup(): Promise<void>;
}

/** 'ok' when the operation succeeds, else the GatewayError code it was refused with. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}
