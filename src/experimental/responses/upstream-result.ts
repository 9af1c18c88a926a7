/**
 * Reads a responses-wire answer (pure): its terminal status, the stored result, the usage in wire
 * form for the record and in ledger form for settlement. The wire's input_tokens include the cached
 * subset (canonicalUsage splits it for pricing).
 */

import type { AttemptUsage } from '../../money/settlement.js';
import { canonicalUsage, readResponse } from '../../primitives/responses/response.js';
import type { DeferredError, DeferredStatus, DeferredUsage } from '../../store/deferred-responses-port.js';
import type { StoredResult } from './view.js';

export interface ReadResult {
  status: Extract<DeferredStatus, 'completed' | 'incomplete' | 'failed'>;
  error: DeferredError | null;
  result: StoredResult;
  wireUsage: DeferredUsage | null;
  usage: AttemptUsage | null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

export function readUpstreamResult(body: unknown): ReadResult {
  const response = readResponse(body);
  const raw = response.status ?? 'completed';
  const status: ReadResult['status'] =
    raw === 'incomplete' ? 'incomplete' : raw === 'failed' ? 'failed' : 'completed';
  const canonical = canonicalUsage(response.usage);
  const usage = canonical
    ? {
        inputTokens: canonical.input_tokens,
        outputTokens: canonical.output_tokens,
        cacheCreationInputTokens: canonical.cache_creation_input_tokens,
        cacheReadInputTokens: canonical.cache_read_input_tokens,
      }
    : null;
  const wire = response.usage as Record<string, unknown> | undefined | null;
  const wireUsage: DeferredUsage | null =
    wire && typeof wire === 'object'
      ? {
          input_tokens: count(wire.input_tokens),
          input_tokens_details: {
            cached_tokens: count(
              (wire.input_tokens_details as Record<string, unknown> | null)?.cached_tokens,
            ),
          },
          output_tokens: count(wire.output_tokens),
          output_tokens_details: {
            reasoning_tokens: count(
              (wire.output_tokens_details as Record<string, unknown> | null)?.reasoning_tokens,
            ),
          },
          total_tokens: count(wire.total_tokens) || count(wire.input_tokens) + count(wire.output_tokens),
        }
      : null;
  const upstreamError = response.error;
  const error =
    status === 'failed'
      ? {
          code: String(upstreamError?.code ?? 'upstream_failed'),
          message: String(upstreamError?.message ?? 'The upstream response failed.'),
        }
      : null;
  return {
    status,
    error,
    result: {
      output: Array.isArray(response.output) ? (response.output as unknown[]) : [],
      incomplete_details: response.incomplete_details ?? null,
    },
    wireUsage,
    usage,
  };
}
