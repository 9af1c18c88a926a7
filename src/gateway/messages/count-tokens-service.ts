/**
 * POST /v1/messages/count_tokens: served natively by the direct vendora profile only. The body goes
 * upstream verbatim with only the model replaced; the count is the upstream's. It takes a ledger
 * attempt like any call: per-token prices are zero here, so only the configured fee is reserved
 * and charged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { validateCountTokensRequest } from '../../canonical/validate-messages.js';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Caller } from '../../governance/service.js';
import type {
  AttemptRunner,
  ReadAnswer,
  RefusalInfo,
  UpstreamExchange,
} from '../../ledger/attempt-runner.js';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import {
  buildCountTokensRequest,
  DEFAULT_MESSAGES_OPTIONS,
  mapMessagesError,
  parseCountTokensResponse,
  withBetaTokens,
} from '../../primitives/messages/index.js';
import {
  buildOrNotSent,
  callUpstream,
  readJsonBody,
  type UpstreamResponse,
} from '../../primitives/shared/upstream-call.js';
import type { ModelTarget, Upstreams } from '../connections.js';
import { attachedRun, checkVendoraVersion, routeMode } from './call-headers.js';
import { messagesAlias } from './messages-service.js';
import { parseBetaHeader } from './route-plan.js';

export interface CountTokensCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export class CountTokensService {
  constructor(
    private readonly upstreams: Upstreams,
    private readonly config: Config,
    private readonly runner: AttemptRunner,
  ) {}

  async count(call: CountTokensCall): Promise<{ headers: Record<string, string>; body: unknown }> {
    const runId = attachedRun(call.caller, call.headers);
    checkVendoraVersion(call.headers);
    if (routeMode(call.headers) === 'portable') {
      throw new GatewayError(
        'unsupported_field',
        'Svc-Route-Mode: count_tokens is served natively only; portable mode is refused.',
        {
          param: 'svc-route-mode',
        },
      );
    }
    const request = validateCountTokensRequest(call.body);
    const alias = messagesAlias(this.upstreams, this.config, request.model);
    const target = alias.targets.find((candidate) => candidate.connection.row.countTokens);
    if (!target) {
      throw new GatewayError(
        'no_eligible_route',
        `count_tokens is served only by the direct vendora profile; model ${alias.alias} has no such target.`,
      );
    }
    const { connection } = target;
    const betaTokens = parseBetaHeader(call.headers['vendora-beta']);
    const refused = betaTokens.filter((token) => !connection.betaTokens.has(token));
    if (refused.length > 0) {
      throw new GatewayError(
        'unsupported_field',
        `vendora-beta: connection ${connection.name} does not accept ${refused.join(', ')}`,
        {
          param: 'vendora-beta',
        },
      );
    }
    const fee = target.price.requestFee;
    const result = await this.runner.call(
      {
        projectId: call.caller.projectId,
        keyId: call.caller.keyId,
        runId,
        endpoint: '/v1/messages/count_tokens',
        alias: alias.alias,
        connection: connection.name,
        profile: connection.row.id,
        primitive: connection.row.primitive,
        upstreamModel: target.upstreamModel,
        streamed: false,
        reservationMicrosUsd: fee,
        request: call.caller.request,
      },
      new CountTokensExchange(call.body as Record<string, unknown>, target, betaTokens),
    );
    if (!result.ok) throw result.error;
    return {
      headers: { 'svc-route': connection.name, 'svc-attempt-id': result.attemptId },
      body: result.answer,
    };
  }
}

/** count_tokens on the attempt runner: the body verbatim (model replaced); the fee is the cost. */
class CountTokensExchange implements UpstreamExchange<unknown> {
  constructor(
    private readonly body: Record<string, unknown>,
    private readonly target: ModelTarget,
    private readonly betaTokens: string[],
  ) {}

  send(signal: CancelSignal | undefined): Promise<UpstreamResponse> {
    const { target } = this;
    const wire = buildOrNotSent(() =>
      withBetaTokens(
        buildCountTokensRequest(
          this.body,
          { upstreamModel: target.upstreamModel, responseModel: '', messageId: '' },
          DEFAULT_MESSAGES_OPTIONS,
        ),
        this.betaTokens,
      ),
    );
    return callUpstream(target.connection, { ...wire, signal });
  }

  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo {
    return mapMessagesError(status, body, headers);
  }

  async read(response: UpstreamResponse): Promise<ReadAnswer<unknown>> {
    const body = await readJsonBody(response.body, this.target.connection.name);
    let counted: unknown;
    try {
      counted = parseCountTokensResponse(body);
    } catch (error) {
      throw new GatewayError(
        'upstream_error',
        `The upstream count could not be read: ${(error as Error).message}`,
      );
    }
    return { answer: counted, costMicrosUsd: this.target.price.requestFee, usage: null };
  }
}
