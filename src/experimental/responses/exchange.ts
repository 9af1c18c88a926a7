/**
 * A deferred or synchronous response's exchange for the attempt runner (ledger/attempt-runner.ts
 * holds the settlement table): the client's checked body POSTed on the responses wire, its error
 * statuses read by the responses primitive, its answer read into status, result and usage (priced
 * at the target's price; no usage means the cost cannot be known).
 */
import { GatewayError } from '../../errors/gateway-error.js';
import type { ReadAnswer, RefusalInfo, UpstreamExchange } from '../../ledger/attempt-runner.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { actualCost, type Price } from '../../money/pricing.js';
import { mapResponsesError } from '../../primitives/responses/error.js';
import { RESPONSES_PATH } from '../../primitives/responses/fields.js';
import { modelNamed } from '../../primitives/shared/types.js';
import {
  callUpstream,
  readJsonBody,
  type UpstreamEndpoint,
  type UpstreamResponse,
} from '../../primitives/shared/upstream-call.js';
import { type ReadResult, readUpstreamResult } from './upstream-result.js';

export interface ResponsesAnswer {
  /** The upstream's answer as it came. */
  body: unknown;
  read: ReadResult;
}

export class ResponsesExchange implements UpstreamExchange<ResponsesAnswer> {
  constructor(
    private readonly connection: UpstreamEndpoint,
    private readonly body: unknown,
    private readonly price: Price,
  ) {}

  send(signal: CancelSignal | undefined): Promise<UpstreamResponse> {
    return callUpstream(this.connection, {
      path: RESPONSES_PATH,
      body: this.body,
      ...(signal ? { signal } : {}),
    });
  }

  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo {
    return mapResponsesError(status, body, headers);
  }

  async read(response: UpstreamResponse): Promise<ReadAnswer<ResponsesAnswer>> {
    const body = await readJsonBody(response.body, this.connection.name);
    let read: ReadResult;
    try {
      read = readUpstreamResult(body);
    } catch (error) {
      throw new GatewayError('upstream_error', `unreadable upstream answer: ${(error as Error).message}`);
    }
    return {
      answer: { body, read },
      costMicrosUsd: read.usage ? actualCost(this.price, read.usage) : null,
      usage: read.usage,
      responseModel: modelNamed(body) ?? null,
    };
  }
}
