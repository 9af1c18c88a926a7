/**
 * GET /v1/models and GET /v1/models/{id}: the model aliases a Gateway Key may use (every
 * configured alias, given the inference scope, or only those of a key restricted to some aliases:
 * another one is 403 model_not_allowed), each with the endpoints it serves, in the dialect
 * the client speaks (vendora's paged list when the request carries vendora-version, vendorb's
 * list otherwise). No upstream call, no ledger work. Aliases keep their configuration order.
 *
 *   messages alias  /v1/messages, /v1/messages/count_tokens (when a target's profile counts
 *                   tokens), /v1/responses, /v1/chat/completions, /v1/batches (when a
 *                   target's wire has batches: messages or chat-completions)
 *   media alias     its own endpoint (/v1/embeddings, /v1/audio/speech, /v1/audio/transcriptions,
 *                   /v1/images/generations, /v1/moderations)
 */
import { findProfile } from '../../catalogue/profiles.js';
import { servesResource } from '../../catalogue/resource-profiles.js';
import {
  type AnyModelConfig,
  type Config,
  isMessagesModel,
  type MediaEndpoint,
} from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { requireModel, requireScopes } from '../../governance/scopes.js';
import type { Caller } from '../../governance/service.js';
import { isoTime, unixSeconds } from '../../lib/clock.js';

export type ModelsDialect = 'vendora' | 'vendorb';

export interface ModelEntry {
  alias: string;
  endpoints: string[];
}

const MEDIA_PATHS = {
  'audio.speech': '/v1/audio/speech',
  'audio.transcriptions': '/v1/audio/transcriptions',
  'images.generations': '/v1/images/generations',
  moderations: '/v1/moderations',
  embeddings: '/v1/embeddings',
} as const satisfies Record<MediaEndpoint, string>;

export function endpointsOf(model: AnyModelConfig, config: Config): string[] {
  if (!isMessagesModel(model)) return [MEDIA_PATHS[model.endpoint]];
  const profiles = model.targets.map((target) => {
    const connection = config.connections.find((candidate) => candidate.name === target.connection);
    return connection ? findProfile(connection.profile) : undefined;
  });
  const countsTokens = profiles.some((row) => row?.countTokens === true);
  const batches = profiles.some((row) => row !== undefined && servesResource(row, 'batches'));
  return [
    '/v1/messages',
    ...(countsTokens ? ['/v1/messages/count_tokens'] : []),
    '/v1/responses',
    '/v1/chat/completions',
    ...(batches ? ['/v1/batches'] : []),
  ];
}

export interface ListQuery {
  limit?: string | undefined;
  after_id?: string | undefined;
  before_id?: string | undefined;
}

export class ModelsCatalogue {
  private readonly entries: readonly ModelEntry[];

  /** `listedAt` (ms) stands for every alias's creation time: aliases exist since the configuration was loaded. */
  constructor(
    config: Config,
    private readonly listedAt: number,
  ) {
    this.entries = config.models.map((model) => ({
      alias: model.alias,
      endpoints: endpointsOf(model, config),
    }));
  }

  list(caller: Caller, dialect: ModelsDialect, query: ListQuery): unknown {
    requireScopes(caller, ['inference']);
    const allowed = caller.models;
    const entries = allowed ? this.entries.filter((entry) => allowed.includes(entry.alias)) : this.entries;
    if (dialect === 'vendorb') {
      return { object: 'list', data: entries.map((entry) => this.view(entry, dialect)) };
    }
    const page = pageOf(entries, query);
    return {
      data: page.items.map((entry) => this.view(entry, dialect)),
      has_more: page.hasMore,
      first_id: page.items[0]?.alias ?? null,
      last_id: page.items.at(-1)?.alias ?? null,
    };
  }

  retrieve(caller: Caller, dialect: ModelsDialect, id: string): unknown {
    requireScopes(caller, ['inference']);
    const entry = this.entries.find((candidate) => candidate.alias === id);
    if (!entry) {
      throw new GatewayError('model_not_found', `model: ${id} is not a configured model alias`, {
        param: 'model',
      });
    }
    requireModel(caller, { model: id });
    return this.view(entry, dialect);
  }

  private view(entry: ModelEntry, dialect: ModelsDialect): Record<string, unknown> {
    switch (dialect) {
      case 'vendora':
        return {
          type: 'model',
          id: entry.alias,
          display_name: entry.alias,
          created_at: isoTime(this.listedAt),
          endpoints: entry.endpoints,
        };
      case 'vendorb':
        return {
          id: entry.alias,
          object: 'model',
          created: unixSeconds(this.listedAt),
          owned_by: 'svc',
          endpoints: entry.endpoints,
        };
      default: {
        const never: never = dialect;
        throw new Error(`unknown dialect ${String(never)}`);
      }
    }
  }
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${message}`, { param });
}

/** vendora's cursor paging: `limit` (1-1000, default 20), then after `after_id` or before `before_id`. */
function pageOf(entries: readonly ModelEntry[], query: ListQuery): { items: ModelEntry[]; hasMore: boolean } {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || !/^\d+$/.test(query.limit ?? '20')) {
    throw invalid('limit', 'must be an integer from 1 to 1000');
  }
  if (query.after_id !== undefined && query.before_id !== undefined) {
    throw invalid('before_id', 'send after_id or before_id, not both');
  }
  const position = (param: 'after_id' | 'before_id', id: string) => {
    const index = entries.findIndex((entry) => entry.alias === id);
    if (index < 0) throw invalid(param, `${id} is not a configured model alias`);
    return index;
  };
  if (query.before_id !== undefined) {
    const end = position('before_id', query.before_id);
    const start = Math.max(0, end - limit);
    return { items: entries.slice(start, end), hasMore: start > 0 };
  }
  const start = query.after_id === undefined ? 0 : position('after_id', query.after_id) + 1;
  return { items: entries.slice(start, start + limit), hasMore: start + limit < entries.length };
}
