/**
 * Which upstream model serves a media request (embeddings, speech, transcription, image,
 * moderation): the request's `model` is a media alias of that endpoint; the first target serves it,
 * or, when `Svc-Route` names a connection, the alias's first target on that connection. Embeddings
 * fall back along the alias's targets in order (resolveMediaTargets). The target gives
 * the connection, the model id sent upstream and the prices the ledger reserves and settles at.
 * Pure over the configuration; every refusal names what to send instead.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Config, MediaEndpoint, MediaModelConfig } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { svcRoute } from '../resource-route.js';

export type MediaTarget<E extends MediaEndpoint> = {
  alias: string;
  connection: string;
  upstreamModel: string;
  price: Extract<MediaModelConfig, { endpoint: E }>['targets'][number]['price'];
};

export function resolveMediaTarget<E extends MediaEndpoint>(
  config: Config,
  endpoint: E,
  model: string | undefined,
  headers: IncomingHttpHeaders,
): MediaTarget<E> {
  return resolveMediaTargets(config, endpoint, model, headers)[0]!;
}

/** Every target of the alias in order, or only the first one on the Svc-Route connection. */
export function resolveMediaTargets<E extends MediaEndpoint>(
  config: Config,
  endpoint: E,
  model: string | undefined,
  headers: IncomingHttpHeaders,
): MediaTarget<E>[] {
  const serving = config.models
    .filter((candidate) => candidate.endpoint === endpoint)
    .map((candidate) => candidate.alias);
  const choices =
    serving.length > 0 ? `aliases serving ${endpoint}: ${serving.join(', ')}` : `no alias serves ${endpoint}`;
  if (model === undefined || model === '') {
    throw new GatewayError('invalid_request', `model: a model alias is required (${choices}).`, {
      param: 'model',
    });
  }
  const alias = config.models.find((candidate) => candidate.alias === model);
  if (!alias) {
    throw new GatewayError(
      'model_not_found',
      `model: ${model} is not a configured model alias (${choices}).`,
      {
        param: 'model',
      },
    );
  }
  if (alias.endpoint !== endpoint) {
    throw new GatewayError(
      'invalid_request',
      `model: ${model} serves ${alias.endpoint ?? 'messages'}, not ${endpoint} (${choices}).`,
      { param: 'model' },
    );
  }
  const targets = (alias as Extract<MediaModelConfig, { endpoint: E }>).targets as Array<{
    connection: string;
    model: string;
    price: MediaTarget<E>['price'];
  }>;
  const connection = svcRoute(headers);
  const pinned =
    connection === undefined ? undefined : targets.find((each) => each.connection === connection);
  if (connection !== undefined && !pinned) {
    const names = targets.map((candidate) => candidate.connection).join(', ');
    throw new GatewayError(
      'invalid_request',
      `Svc-Route: alias ${model} has no target on connection ${JSON.stringify(connection)} (its connections: ${names}).`,
      { param: 'svc-route' },
    );
  }
  return (pinned ? [pinned] : targets).map((each) => ({
    alias: alias.alias,
    connection: each.connection,
    upstreamModel: each.model,
    price: each.price,
  }));
}
