/**
 * Chat usage -> canonical usage. The wires count input differently: chat `prompt_tokens` includes
 * the cached subset (`prompt_tokens_details.cached_tokens`) and, on 2026 models, the subset written
 * to cache (`cache_write_tokens`); canonical `input_tokens` excludes both. So
 *   input_tokens = prompt_tokens - cached_tokens - cache_write_tokens (never below 0)
 *   cache_read_input_tokens = cached_tokens, cache_creation_input_tokens = cache_write_tokens (0 when absent)
 *   output_tokens = completion_tokens (which already includes reasoning tokens).
 */
import type { Usage } from '../../canonical/types.js';
import type { ChatUsage } from './wire-types.js';

export function canonicalUsage(usage: ChatUsage): Usage {
  const promptTokens = count(usage.prompt_tokens);
  const cachedTokens = count(usage.prompt_tokens_details?.cached_tokens);
  const cacheWriteTokens = count(usage.prompt_tokens_details?.cache_write_tokens);
  return {
    input_tokens: Math.max(0, promptTokens - cachedTokens - cacheWriteTokens),
    output_tokens: count(usage.completion_tokens),
    cache_creation_input_tokens: cacheWriteTokens,
    cache_read_input_tokens: cachedTokens,
  };
}

/** True when the value looks like a chat usage object (lenient: any object with a token count). */
export function isChatUsage(value: unknown): value is ChatUsage {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.prompt_tokens === 'number' || typeof record.completion_tokens === 'number';
}

/** Token counts are non-negative integers; anything else from the upstream counts as 0. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0;
}

/** The outbound usage object of a chat answer: the inverse of `canonicalUsage`. */
export interface ChatUsageOut {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** Canonical usage -> chat usage: prompt_tokens counts the cached and cache-written tokens too. */
export function chatUsageOf(usage: Usage): ChatUsageOut {
  const promptTokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: usage.output_tokens,
    total_tokens: promptTokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cache_read_input_tokens },
  };
}
