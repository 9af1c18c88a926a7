/**
 * POST /v1/messages: validate -> plan route -> (per eligible target) reserve -> call -> settle.
 * In portable mode a retryable failure before any byte reached the client moves on to the next
 * eligible target, each try its own ledger attempt; native mode has exactly one target.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { MessagesRequest } from '../../canonical/types.js';
import {
  hasCacheControl,
  providerExecutedTools,
  requestFacts,
  validateMessagesRequest,
} from '../../canonical/validate-messages.js';
import type { NativeFacts } from '../../catalogue/eligibility.js';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Caller } from '../../governance/service.js';
import type { AttemptRunner } from '../../ledger/attempt-runner.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { inputTokenBound } from '../../money/pricing.js';
import type { Upstreams } from '../connections.js';
import { attachedRun, checkVendoraVersion, routeMode } from './call-headers.js';
import {
  type FaceSkips,
  parseBetaHeader,
  planNative,
  planPortable,
  type RouteMode,
  type RoutePlan,
  type SkippedTarget,
  skippedHeader,
} from './route-plan.js';
import { runMessagesAttempt, type SameWireBody } from './upstream-attempt.js';

export interface MessagesCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
  bodyBytes: number;
  clientSignal: CancelSignal;
}

export type MessagesOutcome =
  | { kind: 'json'; headers: Record<string, string>; body: unknown }
  | { kind: 'stream'; headers: Record<string, string>; frames: AsyncGenerator<string> };

export interface ServeInput {
  caller: Caller;
  runId: string | null;
  mode: RouteMode;
  request: MessagesRequest;
  /** The client's body (native mode forwards it with only the model replaced). */
  rawBody: Record<string, unknown>;
  bodyBytes: number;
  betaHeader: string | string[] | undefined;
  endpoint: string;
  /** Only this connection's target of the alias (Svc-Route on /v1/responses). */
  connection?: string | undefined;
  /** A face's client body for targets of its own wire (/v1/chat/completions to a chat target). */
  sameWire?: SameWireBody | undefined;
  /** Reasons a face routes a target away (fields only its own wire carries), before any I/O. */
  faceSkips?: FaceSkips | undefined;
  clientSignal: CancelSignal;
}

type Alias = ReturnType<MessagesService['alias']>;

/** The alias reduced to its target on one connection (400 naming its connections when it has none). */
function pinned(alias: Alias, connection: string | undefined): Alias {
  if (connection === undefined) return alias;
  const targets = alias.targets.filter((target) => target.connection.name === connection);
  if (targets.length === 0) {
    const names = alias.targets.map((target) => target.connection.name).join(', ');
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: model ${alias.alias} has no target on connection ${JSON.stringify(connection)} (its connections: ${names}).`,
      { param: 'svc-route' },
    );
  }
  return { ...alias, targets };
}

export interface MessagesServiceDeps {
  config: Config;
  upstreams: Upstreams;
  runner: AttemptRunner;
}

function nativeFacts(request: MessagesRequest): NativeFacts {
  const blockTypes = new Set<string>();
  let hasSystemTurn = false;
  for (const message of request.messages) {
    if ((message.role as string) === 'system') hasSystemTurn = true;
    if (Array.isArray(message.content)) for (const block of message.content) blockTypes.add(block.type);
  }
  return { hasCacheControl: hasCacheControl(request), blockTypes, hasSystemTurn };
}

/**
 * The messages alias named `model` (for /v1/messages and count_tokens): 404 model_not_found
 * otherwise, naming the endpoint a media alias serves.
 */
export function messagesAlias(upstreams: Upstreams, config: Config, model: string) {
  const alias = upstreams.aliases.get(model);
  if (alias) return alias;
  const media = config.models.find((entry) => entry.alias === model);
  const reason =
    media?.endpoint === undefined || media.endpoint === 'messages'
      ? 'is not a configured model alias'
      : `is ${/^[aeiou]/.test(media.endpoint) ? 'an' : 'a'} ${media.endpoint} alias; this endpoint serves the messages aliases`;
  throw new GatewayError('model_not_found', `model: ${model} ${reason}`, { param: 'model' });
}

export class MessagesService {
  constructor(private readonly deps: MessagesServiceDeps) {}

  alias(model: string) {
    return messagesAlias(this.deps.upstreams, this.deps.config, model);
  }

  async create(call: MessagesCall): Promise<MessagesOutcome> {
    const runId = attachedRun(call.caller, call.headers);
    checkVendoraVersion(call.headers);
    const mode = routeMode(call.headers) ?? 'portable';
    const request = validateMessagesRequest(call.body, mode);
    return this.serve({
      caller: call.caller,
      runId,
      mode,
      request,
      rawBody: call.body as Record<string, unknown>,
      bodyBytes: call.bodyBytes,
      betaHeader: call.headers['vendora-beta'],
      endpoint: '/v1/messages',
      clientSignal: call.clientSignal,
    });
  }

  /**
   * A validated canonical request, routed and tried target by target (also how /v1/responses
   * serves an alias whose targets speak another wire: `endpoint` names the ledger's endpoint and
   * `connection` pins one target, as Svc-Route does there).
   */
  /**
   * The route of a validated request without calling anything: its eligible targets in order (the
   * alias pinned to `connection` when given), those routed away with reasons, and the input bound
   * its reservations are priced from. Background responses plan here and call later (their job).
   */
  route(
    input: Pick<ServeInput, 'request' | 'mode' | 'betaHeader' | 'bodyBytes' | 'connection' | 'faceSkips'>,
  ): {
    alias: Alias;
    plan: RoutePlan;
    inputBoundTokens: number;
  } {
    const { request, mode } = input;
    const alias = pinned(this.alias(request.model), input.connection);
    const betaTokens = parseBetaHeader(input.betaHeader);
    const providerTools = providerExecutedTools(request);
    const plan: RoutePlan =
      mode === 'portable'
        ? planPortable(request, alias, betaTokens, providerTools, input.faceSkips)
        : planNative(request, alias, betaTokens, providerTools, nativeFacts(request));
    const facts = requestFacts(request);
    const ledger = this.deps.config.ledger;
    const inputBoundTokens = inputTokenBound(
      {
        bodyBytes: input.bodyBytes,
        embeddedDataBytes: facts.embeddedDataBytes,
        images: facts.images,
        documents: facts.documents,
      },
      { imageTokens: ledger.image_input_bound_tokens, documentTokens: ledger.document_input_bound_tokens },
    );
    return { alias, plan, inputBoundTokens };
  }

  async serve(input: ServeInput): Promise<MessagesOutcome> {
    const { request, mode } = input;
    const { alias, plan, inputBoundTokens } = this.route(input);
    const skipped: SkippedTarget[] = [...plan.skipped];
    const { runner } = this.deps;
    const record = input.caller.request;
    for (const away of plan.skipped)
      runner.routedAway(alias.alias, away.connection, away.code, record, away.reasons);
    let lastError: GatewayError | undefined;
    let failedOn: string | undefined;
    let failure = '';
    for (const planned of plan.eligible) {
      if (failedOn !== undefined && lastError !== undefined)
        runner.fallback(alias.alias, failedOn, planned.target.connection.name, failure, record);
      const result = await runMessagesAttempt(runner, {
        planned,
        mode,
        request,
        rawBody: input.rawBody,
        betaTokens: plan.betaTokens,
        sameWire: input.sameWire,
        inputBoundTokens,
        subject: {
          projectId: input.caller.projectId,
          keyId: input.caller.keyId,
          runId: input.runId,
          endpoint: input.endpoint,
          alias: alias.alias,
          request: record,
        },
        clientSignal: input.clientSignal,
      });
      const headers = () => {
        const routeHeaders: Record<string, string> = { 'svc-route': planned.target.connection.name };
        if (skipped.length > 0) routeHeaders['svc-route-skipped'] = skippedHeader(skipped);
        return routeHeaders;
      };
      switch (result.kind) {
        case 'json':
          return {
            kind: 'json',
            headers: { ...headers(), 'svc-attempt-id': result.attemptId },
            body: result.body,
          };
        case 'stream':
          return {
            kind: 'stream',
            headers: { ...headers(), 'svc-attempt-id': result.attemptId },
            frames: result.frames,
          };
        case 'failed':
          lastError = result.error;
          failedOn = planned.target.connection.name;
          failure = result.errorType ?? lastError.code;
          if (!result.retryable || input.clientSignal.aborted) throw result.error;
          skipped.push({
            connection: planned.target.connection.name,
            reasons: [`failed: ${result.error.message}`],
          });
          break;
        default: {
          const never: never = result;
          throw new Error(`unknown attempt result ${String(never)}`);
        }
      }
    }
    throw lastError ?? new GatewayError('upstream_unavailable', 'No upstream answered.');
  }
}
