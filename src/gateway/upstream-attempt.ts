/**
 * One attempt against one target: reserve the worst case, call the upstream, and either settle at
 * once (errors, non-streaming answers) or hand back a stream that settles when it ends.
 *
 * Settlement by what happened:
 *   connect failure (nothing sent)            released
 *   upstream answered an error status         settled at 0 (the upstream billed nothing)
 *   answer with usage                         settled at its actual cost
 *   timeout, drop, unreadable answer, client
 *   gone, stream ended without its terminal   unknown (the whole reservation is committed)
 */

import type { MessagesRequest, Usage } from '../canonical/types.js';
import { GatewayError } from '../errors/gateway-error.js';
import { vendoraError } from '../errors/render.js';
import type { Attempt, AttemptSubject, Ledger } from '../ledger/ledger.js';
import { actualCost, worstCaseCost } from '../ledger/pricing.js';
import { newId } from '../lib/ids.js';
import { type messagesPrimitive, passthroughResponse, replaceModel } from '../primitives/messages/index.js';
import { createSseDecoder, encodeFrame } from '../primitives/shared/sse.js';
import {
  type ClientFrame,
  type StreamTranslator,
  type TranslateContext,
  UpstreamProtocolError,
} from '../primitives/shared/types.js';
import {
  callUpstream,
  readJsonBody,
  UpstreamFailure,
  type UpstreamResponse,
} from '../primitives/shared/upstream-call.js';
import type { PlannedTarget, RouteMode } from './route-plan.js';
import {
  settleTransportFailure,
  settleUnreadableAnswer,
  settleUpstreamStatus,
  transportError,
} from './upstream-errors.js';

export interface AttemptInput {
  planned: PlannedTarget;
  mode: RouteMode;
  request: MessagesRequest;
  /** The client's body object (native mode forwards it with only the model replaced). */
  rawBody: Record<string, unknown>;
  betaTokens: string[];
  inputBoundTokens: number;
  subject: Omit<AttemptSubject, 'connection' | 'profile' | 'upstreamModel'>;
  /** Fires when the client goes away. */
  clientSignal: AbortSignal;
}

export type AttemptResult =
  | { kind: 'json'; body: unknown; attemptId: string }
  | { kind: 'stream'; frames: AsyncGenerator<string>; attemptId: string }
  | { kind: 'failed'; error: GatewayError; retryable: boolean };

function usageOf(usage: Usage | undefined) {
  return usage
    ? {
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        cacheCreationInputTokens: usage.cache_creation_input_tokens,
        cacheReadInputTokens: usage.cache_read_input_tokens,
      }
    : null;
}

export class UpstreamAttempts {
  constructor(private readonly ledger: Ledger) {}

  async run(input: AttemptInput): Promise<AttemptResult> {
    const { target, binding } = input.planned;
    const { connection } = target;
    const reservation = worstCaseCost(target.price, input.inputBoundTokens, input.request.max_tokens);
    const attempt = await this.ledger.reserve(
      {
        ...input.subject,
        connection: connection.name,
        profile: connection.row.id,
        upstreamModel: target.upstreamModel,
      },
      reservation,
    );
    const context: TranslateContext = {
      upstreamModel: target.upstreamModel,
      responseModel: input.request.model,
      messageId: newId('msg'),
    };
    const wire =
      input.mode === 'native'
        ? {
            path: '/v1/messages',
            body: replaceModel(input.rawBody, target.upstreamModel),
            headers: nativeHeaders(input.betaTokens),
          }
        : binding.primitive.buildRequest(input.request, context, binding.options);
    const upstreamAbort = new AbortController();
    const onClientGone = () => upstreamAbort.abort();
    input.clientSignal.addEventListener('abort', onClientGone, { once: true });
    const detach = () => input.clientSignal.removeEventListener('abort', onClientGone);

    let response: UpstreamResponse;
    try {
      response = await callUpstream(connection, { ...wire, signal: upstreamAbort.signal });
    } catch (error) {
      detach();
      const failure = error as UpstreamFailure;
      const failed = await settleTransportFailure(attempt, failure);
      return { kind: 'failed', error: failed, retryable: failure.kind !== 'aborted' };
    }

    if (response.status < 200 || response.status >= 300) {
      detach();
      return this.upstreamError(attempt, response, binding.primitive.mapError.bind(binding.primitive));
    }
    if (input.request.stream === true) {
      const translator = binding.primitive.createStreamTranslator(context, binding.options);
      return {
        kind: 'stream',
        attemptId: attempt.id,
        frames: this.stream(attempt, response, translator, target.price, upstreamAbort, detach),
      };
    }
    try {
      return await this.json(attempt, response, input, context);
    } finally {
      detach();
    }
  }

  private async upstreamError(
    attempt: Attempt,
    response: UpstreamResponse,
    mapError: (
      status: number,
      body: unknown,
      headers: UpstreamResponse['headers'],
    ) => ReturnType<typeof messagesPrimitive.mapError>,
  ): Promise<AttemptResult> {
    let body: unknown;
    try {
      body = await readJsonBody(response.body, 'upstream');
    } catch {
      body = undefined;
    }
    const info = mapError(response.status, body, response.headers);
    const error = await settleUpstreamStatus(attempt, response.status, info);
    return { kind: 'failed', error, retryable: info.retryable };
  }

  private async json(
    attempt: Attempt,
    response: UpstreamResponse,
    input: AttemptInput,
    context: TranslateContext,
  ): Promise<AttemptResult> {
    const { target, binding } = input.planned;
    try {
      const body = await readJsonBody(response.body, target.connection.name);
      const message = binding.primitive.parseResponse(body, context, binding.options);
      const usage = usageOf(message.usage)!;
      await attempt.settle({
        state: 'settled',
        costMicrosUsd: actualCost(target.price, usage),
        usage,
        outcome: 'ok',
        httpStatus: 200,
      });
      const reply =
        input.mode === 'native' ? { ...passthroughResponse(body, context), id: context.messageId } : message;
      return { kind: 'json', body: reply, attemptId: attempt.id };
    } catch (error) {
      await settleUnreadableAnswer(attempt, 200);
      if (error instanceof UpstreamFailure)
        return { kind: 'failed', error: transportError(error), retryable: error.kind !== 'aborted' };
      const message = error instanceof UpstreamProtocolError ? error.message : 'unreadable answer';
      // Not retried: the upstream answered 200 and may have billed; only transport failures,
      // timeouts, 429 and 5xx move on to the next target.
      return {
        kind: 'failed',
        error: new GatewayError('upstream_error', `The upstream answer could not be translated: ${message}`),
        retryable: false,
      };
    }
  }

  /** Pipes translated frames; settles exactly once however the stream ends. */
  private async *stream(
    attempt: Attempt,
    response: UpstreamResponse,
    translator: StreamTranslator,
    price: PlannedTarget['target']['price'],
    upstreamAbort: AbortController,
    detach: () => void,
  ): AsyncGenerator<string> {
    let sawError = false;
    let complete = false;
    // Whether the upstream body ended or failed; false in `finally` means the consumer stopped early.
    let upstreamEnded = false;
    let clientGone = false;
    const renew = setInterval(
      () => {
        attempt.renewLease().catch(() => undefined);
      },
      Math.max(1000, Math.floor(this.ledger.settings.leaseMs / 3)),
    );
    renew.unref();
    const emit = (frames: ClientFrame[]) => {
      let text = '';
      for (const frame of frames) {
        if (frame.event === 'error') sawError = true;
        text += encodeFrame(frame);
      }
      return text;
    };
    try {
      // One client write per upstream chunk (every event it completed), not one per event.
      let pending = '';
      const decoder = createSseDecoder((event) => {
        pending += emit(translator.push(event));
      });
      for await (const chunk of response.body) {
        decoder.feed(chunk);
        if (pending) {
          const batch = pending;
          pending = '';
          yield batch;
        }
      }
      decoder.end();
      upstreamEnded = true;
      const ending = translator.end();
      const text = pending + emit(ending.frames);
      complete = ending.complete && !sawError;
      if (text) yield text;
      if (!complete && !sawError)
        yield errorFrame('The upstream stream ended before the message was complete.');
    } catch (error) {
      upstreamEnded = true;
      // Only the client's departure aborts the upstream request before `finally`.
      clientGone = upstreamAbort.signal.aborted;
      if (!clientGone && !sawError) {
        const reason =
          error instanceof UpstreamProtocolError
            ? `untranslatable upstream event: ${error.message}`
            : 'the upstream connection was lost';
        yield errorFrame(`Stream interrupted: ${reason}.`);
      }
    } finally {
      clearInterval(renew);
      detach();
      if (!upstreamEnded) clientGone = true;
      const usage = translator.usage();
      if (complete && usage) {
        await attempt.settle({
          state: 'settled',
          costMicrosUsd: actualCost(price, usageOf(usage)!),
          usage: usageOf(usage),
          outcome: 'ok',
          httpStatus: 200,
        });
      } else {
        if (!complete) upstreamAbort.abort();
        await attempt.settle({
          state: 'unknown',
          costMicrosUsd: 0,
          usage: usageOf(usage),
          outcome: clientGone && !sawError ? 'stream_aborted' : 'stream_incomplete',
          httpStatus: 200,
        });
      }
    }
  }
}

function errorFrame(message: string): string {
  const error = new GatewayError('upstream_unavailable', message, { type: 'api_error' });
  return encodeFrame({ event: 'error', data: JSON.stringify(vendoraError(error)) });
}

function nativeHeaders(betaTokens: string[]): Record<string, string> {
  const headers: Record<string, string> = { 'vendora-version': '2023-06-01' };
  if (betaTokens.length > 0) headers['vendora-beta'] = betaTokens.join(',');
  return headers;
}
