/**
 * Where a caller's inference limits come from (inference-limits.ts): the Project's from the
 * configuration; a key's from the configuration when the key is declared there, else from its
 * store record (keys API, CLI), looked up at most once per auth.key_cache_ms per key on each
 * replica (so a limit set on a new key applies at once; the record's limits never change).
 */
import type { Config } from '../config/schema.js';
import type { Clock } from '../lib/clock.js';
import type { InferenceLimits, LimitsSource } from './inference-limits.js';

export interface InferenceLimitsFields {
  requests_per_minute?: number | undefined;
  tokens_per_minute?: number | undefined;
}

export function inferenceLimitsOf(fields: InferenceLimitsFields | undefined): InferenceLimits {
  if (!fields) return {};
  return {
    ...(fields.requests_per_minute === undefined ? {} : { requestsPerMinute: fields.requests_per_minute }),
    ...(fields.tokens_per_minute === undefined ? {} : { tokensPerMinute: fields.tokens_per_minute }),
  };
}

export function inferenceLimitsFields(limits: InferenceLimits): InferenceLimitsFields {
  return {
    ...(limits.requestsPerMinute === undefined ? {} : { requests_per_minute: limits.requestsPerMinute }),
    ...(limits.tokensPerMinute === undefined ? {} : { tokens_per_minute: limits.tokensPerMinute }),
  };
}

function anyLimit(limits: InferenceLimits): InferenceLimits | undefined {
  return limits.requestsPerMinute === undefined && limits.tokensPerMinute === undefined ? undefined : limits;
}

const MAX_CACHED = 10_000;

/** The one store read the limits need: a key's record (store/keys-port.ts), which the Store has. */
export interface KeyRecordReader {
  keys: {
    get(projectId: string, keyId: string): Promise<{ limits: InferenceLimits } | undefined>;
  };
}

export function configuredLimitsSource(config: Config, store: KeyRecordReader, clock: Clock): LimitsSource {
  const projects = new Map(
    config.projects.map((project) => [project.id, anyLimit(inferenceLimitsOf(project.inference_limits))]),
  );
  const declared = new Map(
    config.keys.map((key) => [key.id, anyLimit(inferenceLimitsOf(key.inference_limits))]),
  );
  const cacheMs = config.auth.key_cache_ms;
  const stored = new Map<string, { limits: InferenceLimits | undefined; fetchedMs: number }>();
  const keyLimits = async (projectId: string, keyId: string) => {
    if (declared.has(keyId)) return declared.get(keyId);
    const now = clock.now();
    const cached = stored.get(keyId);
    if (cached && now - cached.fetchedMs < cacheMs) return cached.limits;
    const record = await store.keys.get(projectId, keyId);
    const limits = record ? anyLimit(record.limits) : undefined;
    if (stored.size >= MAX_CACHED) stored.clear();
    stored.set(keyId, { limits, fetchedMs: now });
    return limits;
  };
  return async (projectId, keyId) => {
    const project = projects.get(projectId);
    return { key: await keyLimits(projectId, keyId), project };
  };
}
