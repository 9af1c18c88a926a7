/**
 * POST /v1/messages/count_tokens: served natively by the direct vendora profile only. The body goes
 * upstream verbatim with only the model replaced; the count is the upstream's. It takes a ledger
 * attempt like any call: per-token prices are zero here, so only the configured fee is reserved
 * and charged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { validateCountTokensRequest } from '../canonical/validate-messages.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Caller } from '../governance/service.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  buildCountTokensRequest,
  DEFAULT_MESSAGES_OPTIONS,
  mapMessagesError,
  parseCountTokensResponse,
} from '../primitives/messages/index.js';
import { callUpstream, readJsonBody } from '../primitives/shared/upstream-call.js';
import { attachedRun, checkVendoraVersion, routeMode } from './call-headers.js';
import type { Upstreams } from './connections.js';
import { parseBetaHeader } from './route-plan.js';
import { settleTransportFailure, settleUnreadableAnswer, settleUpstreamStatus } from './upstream-errors.js';

export interface CountTokensCall {
  caller: Caller;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export class CountTokensService {
  constructor(
    private readonly upstreams: Upstreams,
    private readonly ledger: Ledger,
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
    const alias = this.upstreams.aliases.get(request.model);
    if (!alias)
      throw new GatewayError('model_not_found', `model: ${request.model} is not a configured model alias`, {
        param: 'model',
      });
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
    const attempt = await this.ledger.reserve(
      {
        projectId: call.caller.projectId,
        keyId: call.caller.keyId,
        runId,
        endpoint: '/v1/messages/count_tokens',
        alias: alias.alias,
        connection: connection.name,
        profile: connection.row.id,
        upstreamModel: target.upstreamModel,
      },
      fee,
    );
    const wire = buildCountTokensRequest(
      call.body as Record<string, unknown>,
      { upstreamModel: target.upstreamModel, responseModel: alias.alias, messageId: '' },
      DEFAULT_MESSAGES_OPTIONS,
    );
    if (betaTokens.length > 0) wire.headers = { ...wire.headers, 'vendora-beta': betaTokens.join(',') };
    let status: number;
    let body: unknown;
    let responseHeaders: Record<string, string | string[] | undefined>;
    try {
      const response = await callUpstream(connection, wire);
      status = response.status;
      responseHeaders = response.headers;
      body = await readJsonBody(response.body, connection.name);
    } catch (error) {
      throw await settleTransportFailure(attempt, error);
    }
    if (status !== 200) {
      throw await settleUpstreamStatus(attempt, status, mapMessagesError(status, body, responseHeaders));
    }
    try {
      const counted = parseCountTokensResponse(body);
      await attempt.settle({
        state: 'settled',
        costMicrosUsd: fee,
        usage: null,
        outcome: 'ok',
        httpStatus: 200,
      });
      return { headers: { 'svc-route': connection.name, 'svc-attempt-id': attempt.id }, body: counted };
    } catch (error) {
      await settleUnreadableAnswer(attempt, 200);
      throw new GatewayError(
        'upstream_error',
        `The upstream count could not be read: ${(error as Error).message}`,
      );
    }
  }
}
