/**
 * Why a simulated call fails before any answer: the wire's own 400 for a body it cannot read comes
 * first, then the behaviour's error status. Each wire renders the failure in its own error body.
 */
import type { SimCall } from '../types.js';

export interface CallFailure {
  status: number;
  /** Undefined: the wire's default message for the status. */
  message: string | undefined;
  retryAfter: string | undefined;
}

/** `invalid` is the wire's validation message for the body, undefined when the body is fine. */
export function callFailure(call: SimCall, invalid: string | undefined): CallFailure | undefined {
  if (invalid !== undefined) return { status: 400, message: invalid, retryAfter: undefined };
  const status = call.behaviour.status;
  if (status === undefined || status < 400) return undefined;
  return { status, message: call.behaviour.errorMessage, retryAfter: call.behaviour.retryAfter };
}
