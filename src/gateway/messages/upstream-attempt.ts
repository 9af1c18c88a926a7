/**
 * The messages use case of the attempt runner (ledger/attempt-runner.ts holds the settlement
 * table): how to send one /v1/messages attempt to one target (the primitive's request, or the
 * client's own body in native mode), how to read its answer (the primitive's parser; the usage
 * priced at the target's price) and how to translate its stream into vendora SSE text.
 */

import type { MessagesRequest, StreamEvent, Usage } from '../../canonical/types.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { vendoraError } from '../../errors/render.js';
import type {
  AttemptRunner,
  ReadAnswer,
  RefusalInfo,
  StreamReader,
  StreamResult,
  UpstreamExchange,
} from '../../ledger/attempt-runner.js';
import type { AttemptPlan } from '../../ledger/ledger.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { newId } from '../../lib/ids.js';
import { actualCost, type Price, worstCaseCost } from '../../money/pricing.js';
import type { AttemptUsage } from '../../money/settlement.js';
import { buildNativeRequest, passthroughResponse } from '../../primitives/messages/index.js';
import {
  createFastSseDecoder,
  createSseForwarder,
  encodeFrame,
  forwardsNothing,
  type SseDecoder,
} from '../../primitives/shared/sse.js';
import type {
  ClientFrame,
  PrimitiveName,
  SseEvent,
  StreamTranslator,
  TranslateContext,
  WireRequest,
} from '../../primitives/shared/types.js';
import {
  buildOrNotSent,
  callUpstream,
  readJsonBody,
  type UpstreamResponse,
} from '../../primitives/shared/upstream-call.js';
import type { PlannedTarget, RouteMode } from './route-plan.js';

/**
 * A face's own client body for the targets that speak the face's wire (pass-through: the body
 * with the model replaced, as native mode does for /v1/messages); other targets get the
 * primitive's translation of the canonical request.
 */
export interface SameWireBody {
  primitive: PrimitiveName;
  build(upstreamModel: string, options: unknown): WireRequest;
}

/**
 * A face that writes the canonical stream in its own wire (/v1/chat/completions): the text each
 * canonical event becomes (often none). One per stream; without one, the stream is vendora SSE text.
 */
export interface StreamEventRenderer {
  event(event: StreamEvent): string;
}

export interface AttemptInput {
  planned: PlannedTarget;
  mode: RouteMode;
  request: MessagesRequest;
  /** The client's body object (native mode forwards it with only the model replaced). */
  rawBody: Record<string, unknown>;
  betaTokens: string[];
  /** Pass-through body for targets of the face's own wire (/v1/chat/completions to a chat target). */
  sameWire?: SameWireBody | undefined;
  /** The face's renderer of the canonical events, made when the answer streams (vendora SSE text without one). */
  renderEvents?: (() => StreamEventRenderer) | undefined;
  inputBoundTokens: number;
  subject: Pick<AttemptPlan, 'projectId' | 'keyId' | 'runId' | 'endpoint' | 'alias' | 'request'>;
  /** Fires when the client goes away. */
  clientSignal: CancelSignal;
}

export type AttemptResult =
  | { kind: 'json'; body: unknown; attemptId: string }
  | { kind: 'stream'; frames: AsyncGenerator<string>; attemptId: string }
  | { kind: 'failed'; error: GatewayError; retryable: boolean; errorType: string | null };

export function ledgerUsage(usage: Usage): AttemptUsage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheCreationInputTokens: usage.cache_creation_input_tokens,
    cacheReadInputTokens: usage.cache_read_input_tokens,
  };
}

/** The canonical error event that ends an interrupted stream. */
function interruption(message: string): StreamEvent {
  return vendoraError(
    new GatewayError('upstream_unavailable', message, { type: 'api_error' }),
  ) as StreamEvent;
}

/** A translator's events: its own (`pushEvents`), or read back from the frames it writes (JSON data only). */
function eventsOfFrames(frames: ClientFrame[]): StreamEvent[] {
  const events: StreamEvent[] = [];
  for (const frame of frames) {
    try {
      events.push(JSON.parse(frame.data) as StreamEvent);
    } catch {
      // not JSON: skipped (the translators write only JSON data)
    }
  }
  return events;
}

/** One attempt's exchange: the wire call, its answer, its stream (one object per attempt). */
class MessagesExchange implements UpstreamExchange<unknown>, StreamReader {
  private readonly context: TranslateContext;
  private translator: StreamTranslator | undefined;
  /** The face's renderer when it writes the canonical events in its own wire. */
  private renderer: StreamEventRenderer | undefined;
  private decoder: SseDecoder | undefined;
  private pending = '';
  private sawError = false;
  private sawStop = false;

  constructor(private readonly input: AttemptInput) {
    this.context = {
      upstreamModel: input.planned.target.upstreamModel,
      responseModel: input.request.model,
      messageId: newId('msg'),
    };
  }

  private get price(): Price {
    return this.input.planned.target.price;
  }

  send(signal: CancelSignal | undefined): Promise<UpstreamResponse> {
    const { input, context } = this;
    const { target, binding } = input.planned;
    const sameWire = input.sameWire;
    const wire: WireRequest = buildOrNotSent(() => {
      if (input.mode === 'native')
        return buildNativeRequest(input.rawBody, target.upstreamModel, input.betaTokens);
      if (sameWire !== undefined && sameWire.primitive === target.connection.row.primitive)
        return sameWire.build(target.upstreamModel, binding.options);
      return binding.primitive.buildRequest(input.request, context, binding.options);
    });
    return callUpstream(target.connection, {
      path: wire.path,
      body: wire.body,
      headers: wire.headers,
      signal,
    });
  }

  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo {
    return this.input.planned.binding.primitive.mapError(status, body, headers);
  }

  async read(response: UpstreamResponse): Promise<ReadAnswer<unknown>> {
    const { input, context } = this;
    const { target, binding } = input.planned;
    const body = await readJsonBody(response.body, target.connection.name);
    const message = binding.primitive.parseResponse(body, context, binding.options);
    const usage = ledgerUsage(message.usage);
    const answer =
      input.mode === 'native' ? { ...passthroughResponse(body, context), id: context.messageId } : message;
    return {
      answer,
      costMicrosUsd: actualCost(this.price, usage),
      usage,
      responseModel: binding.primitive.answeredModel(body) ?? null,
    };
  }

  stream(): StreamReader {
    const { binding } = this.input.planned;
    const translator = binding.primitive.createStreamTranslator(this.context, binding.options);
    this.translator = translator;
    const render = this.input.renderEvents;
    if (render !== undefined) {
      // The face renders the canonical events themselves: every upstream event is decoded and
      // translated, and no canonical text is written or read back.
      this.renderer = render();
      this.decoder = createFastSseDecoder((event) => {
        const events = translator.pushEvents?.(event) ?? eventsOfFrames(translator.push(event));
        for (const canonical of events) this.pending += this.rendered(canonical);
      });
      return this;
    }
    const onEvent = (event: SseEvent) => {
      for (const frame of translator.push(event)) {
        if (frame.event === 'error') this.sawError = true;
        else if (frame.event === 'message_stop') this.sawStop = true;
        this.pending += encodeFrame(frame);
      }
    };
    // Same wire as the client's: content events go out as the bytes they came in as. Another
    // wire's events are all decoded, by the same fast reader (the chat wire's data-only events too).
    const forwards = translator.forwards?.bind(translator) ?? forwardsNothing;
    this.decoder = createSseForwarder({
      forwards,
      raw: (text) => {
        this.pending += text;
      },
      event: onEvent,
    });
    return this;
  }

  /** What the face writes for one canonical event, noting an error or the stream's stop. */
  private rendered(event: StreamEvent): string {
    if (event.type === 'error') this.sawError = true;
    else if (event.type === 'message_stop') this.sawStop = true;
    return this.renderer!.event(event);
  }

  // ---- StreamReader: one client write per upstream chunk (every event it completed) ----

  push(chunk: Buffer): string {
    this.decoder!.feed(chunk);
    const text = this.pending;
    this.pending = '';
    return text;
  }

  finished(): boolean {
    return this.sawStop;
  }

  end(): { text: string; complete: boolean } {
    this.decoder!.end();
    const translator = this.translator!;
    let text = this.pending;
    this.pending = '';
    if (this.renderer !== undefined) {
      const ending = translator.endEvents?.() ?? this.endingEvents(translator);
      for (const event of ending.events) {
        if (event.type === 'error') this.sawError = true;
        text += this.renderer.event(event);
      }
      return { text, complete: ending.complete && !this.sawError };
    }
    const ending = translator.end();
    for (const frame of ending.frames) {
      if (frame.event === 'error') this.sawError = true;
      text += encodeFrame(frame);
    }
    return { text, complete: ending.complete && !this.sawError };
  }

  private endingEvents(translator: StreamTranslator): { events: StreamEvent[]; complete: boolean } {
    const ending = translator.end();
    return { events: eventsOfFrames(ending.frames), complete: ending.complete };
  }

  interrupted(error: unknown): string {
    if (this.sawError) return '';
    const reason =
      error === undefined
        ? undefined
        : error instanceof Error && error.name === 'UpstreamProtocolError'
          ? `untranslatable upstream event: ${error.message}`
          : 'the upstream connection was lost';
    const event = interruption(
      reason === undefined
        ? 'The upstream stream ended before the message was complete.'
        : `Stream interrupted: ${reason}.`,
    );
    if (this.renderer !== undefined) return this.renderer.event(event);
    return encodeFrame({ event: 'error', data: JSON.stringify(event) });
  }

  usage(): AttemptUsage | null {
    const usage = this.translator?.usage();
    return usage ? ledgerUsage(usage) : null;
  }

  cost(usage: AttemptUsage): number {
    return actualCost(this.price, usage);
  }

  responseModel(): string | undefined {
    return this.translator?.answeredModel();
  }
}

/** One attempt's exchange, for a caller that reserves and settles the attempt itself (background responses). */
export function messagesExchange(input: AttemptInput): UpstreamExchange<unknown> {
  return new MessagesExchange(input);
}

/** One attempt's ledger plan: its labels and the worst case at the target's price. */
export function messagesAttemptPlan(input: AttemptInput): AttemptPlan {
  const { target } = input.planned;
  const { connection } = target;
  return {
    projectId: input.subject.projectId,
    keyId: input.subject.keyId,
    runId: input.subject.runId,
    endpoint: input.subject.endpoint,
    alias: input.subject.alias,
    connection: connection.name,
    profile: connection.row.id,
    primitive: connection.row.primitive,
    upstreamModel: target.upstreamModel,
    streamed: input.request.stream === true,
    reservationMicrosUsd: worstCaseCost(target.price, input.inputBoundTokens, input.request.max_tokens),
    worstCaseTokens: input.inputBoundTokens + input.request.max_tokens,
    request: input.subject.request,
  };
}

/** Runs one attempt on one target through the attempt runner. */
export async function runMessagesAttempt(runner: AttemptRunner, input: AttemptInput): Promise<AttemptResult> {
  const plan = messagesAttemptPlan(input);
  const exchange = new MessagesExchange(input);
  if (plan.streamed) {
    const result: StreamResult = await runner.callStreamed(plan, exchange, input.clientSignal);
    if (result.ok) return { kind: 'stream', frames: result.frames, attemptId: result.attemptId };
    return { kind: 'failed', error: result.error, retryable: result.retryable, errorType: result.errorType };
  }
  const result = await runner.call(plan, exchange, input.clientSignal);
  if (result.ok) return { kind: 'json', body: result.answer, attemptId: result.attemptId };
  return { kind: 'failed', error: result.error, retryable: result.retryable, errorType: result.errorType };
}
