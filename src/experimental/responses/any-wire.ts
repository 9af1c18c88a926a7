/**
 * POST /v1/responses served through the canonical model, for an alias target of any wire
 * (issue 15): responses request -> canonical request (primitives/responses/inbound-request.ts) ->
 * the same routing, routing-away and fallback as /v1/messages (MessagesService.serve, each try its
 * own attempt through the attempt runner) -> the canonical answer translated back into a Response
 * object, or the canonical stream into responses-wire events (outbound-stream.ts).
 */

import type { MessageResponse, MessagesRequest } from '../../canonical/types.js';
import { validateMessagesRequest } from '../../canonical/validate-messages.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { canonicalEvents } from '../../gateway/messages/canonical-events.js';
import type { MessagesService } from '../../gateway/messages/messages-service.js';
import type { Caller } from '../../governance/service.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { type Clock, unixSeconds } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import {
  ResponsesInputError,
  responsesRequestToCanonical,
} from '../../primitives/responses/inbound-request.js';
import type { OutboundContext } from '../../primitives/responses/outbound-object.js';
import { canonicalToResponsesResponse } from '../../primitives/responses/outbound-response.js';
import {
  finish,
  INITIAL_OUTBOUND_STATE,
  type OutboundStreamState,
  step,
} from '../../primitives/responses/outbound-stream.js';
import type { ResponsesServerEvent } from '../../primitives/responses/server-events.js';
import { encodeSseEvent } from '../../primitives/shared/sse.js';

export type AnyWireAnswer =
  | { kind: 'json'; headers: Record<string, string>; body: unknown }
  | { kind: 'stream'; headers: Record<string, string>; frames: AsyncGenerator<string> };

export interface AnyWireCall {
  caller: Caller;
  runId: string | null;
  body: Record<string, unknown>;
  /** Svc-Route: only the alias's target on this connection. */
  connection: string | undefined;
  clientSignal: CancelSignal;
}

/** The client's responses request as a validated canonical request, refusals naming the field. */
export function canonicalRequestOf(
  body: Record<string, unknown>,
  defaultMaxOutputTokens: number | undefined,
): MessagesRequest {
  let canonical: MessagesRequest;
  try {
    canonical = responsesRequestToCanonical(body, { defaultMaxOutputTokens });
  } catch (error) {
    if (error instanceof ResponsesInputError) {
      throw new GatewayError('unsupported_field', error.message, { param: error.param });
    }
    throw error;
  }
  return validateMessagesRequest(JSON.parse(JSON.stringify(canonical)), 'portable');
}

export async function serveAnyWire(
  messages: MessagesService,
  clock: Clock,
  request: MessagesRequest,
  call: AnyWireCall,
): Promise<AnyWireAnswer> {
  const outcome = await messages.serve({
    caller: call.caller,
    runId: call.runId,
    mode: 'portable',
    request,
    rawBody: request as unknown as Record<string, unknown>,
    bodyBytes: Buffer.byteLength(JSON.stringify(request)),
    betaHeader: undefined,
    endpoint: '/v1/responses',
    connection: call.connection,
    clientSignal: call.clientSignal,
  });
  const context: OutboundContext = {
    responseId: newId('resp'),
    createdAt: unixSeconds(clock.now()),
    completedAt: unixSeconds(clock.now()),
    model: request.model,
    background: false,
    request: call.body,
  };
  if (outcome.kind === 'json') {
    return {
      kind: 'json',
      headers: outcome.headers,
      body: canonicalToResponsesResponse(outcome.body as MessageResponse, context),
    };
  }
  return {
    kind: 'stream',
    headers: outcome.headers,
    frames: responsesFrames(outcome.frames, context, clock),
  };
}

/** The canonical SSE text decoded, translated event by event, and encoded as responses-wire SSE. */
async function* responsesFrames(
  canonical: AsyncGenerator<string>,
  context: OutboundContext,
  clock: Clock,
): AsyncGenerator<string> {
  let state: OutboundStreamState = INITIAL_OUTBOUND_STATE;
  const now = () => ({ ...context, completedAt: unixSeconds(clock.now()) });
  const encode = (events: ResponsesServerEvent[]) =>
    events.map((event) => encodeSseEvent(event.type, JSON.stringify(event))).join('');
  for await (const event of canonicalEvents(canonical)) {
    const result = step(state, event, now());
    state = result.state;
    const text = encode(result.events);
    if (text.length > 0) yield text;
  }
  const last = finish(state, now());
  const text = encode(last.events);
  if (text.length > 0) yield text;
}
