/**
 * Batch translations (pure; ids are injected). Outbound: checked lines -> the upstream's batch
 * payload (message batches: inline requests; chat batches: a JSONL input file). Inbound: the
 * upstream's result lines -> our output file (vendorb batch output lines whose body is a
 * /v1/messages response) and error file, the request counts, and the cost of what succeeded.
 *
 * Cost: each succeeded line at its own target's price from the usage it reports; a succeeded line
 * whose answer cannot be read is counted at its worst case (never below what it may have cost).
 */

import type { Usage } from '../../canonical/types.js';
import type { PrimitiveBinding } from '../../gateway/primitive-registry.js';
import { actualCost } from '../../ledger/pricing.js';
import type { BatchLinePlan, BatchRequestCounts } from '../../store/batches-port.js';
import type { AttemptUsage } from '../../store/port.js';
import type { CheckedLine } from './lines.js';

export interface LineResult {
  customId: string;
  kind: 'succeeded' | 'errored' | 'canceled' | 'expired';
  /** Succeeded: the upstream wire answer; errored: the upstream error body. */
  body?: unknown;
  statusCode?: number;
}

export interface Ids {
  requestId(): string;
  messageId(): string;
}

export interface Outputs {
  outputLines: string[];
  errorLines: string[];
  counts: BatchRequestCounts;
  costMicrosUsd: number;
  usage: AttemptUsage;
}

function context(plan: BatchLinePlan, messageId: string) {
  return { upstreamModel: plan.upstreamModel, responseModel: plan.alias, messageId };
}

/** POST {base}/v1/messages/batches body: every request inline, translated by the messages primitive. */
export function messageBatchPayload(
  lines: CheckedLine[],
  binding: PrimitiveBinding,
  ids: Ids,
): { requests: unknown[] } {
  return {
    requests: lines.map((line) => {
      const wire = binding.primitive.buildRequest(
        line.request,
        context(line.plan, ids.messageId()),
        binding.options,
      );
      const { stream: _stream, ...params } = wire.body as Record<string, unknown>;
      return { custom_id: line.customId, params };
    }),
  };
}

/** The chat-wire input file: one `POST /v1/chat/completions` line per request. */
export function chatBatchInput(lines: CheckedLine[], binding: PrimitiveBinding, ids: Ids): string {
  return lines
    .map((line) => {
      const wire = binding.primitive.buildRequest(
        line.request,
        context(line.plan, ids.messageId()),
        binding.options,
      );
      const { stream: _stream, stream_options: _options, ...body } = wire.body as Record<string, unknown>;
      return JSON.stringify({ custom_id: line.customId, method: 'POST', url: `/v1${wire.path}`, body });
    })
    .join('\n')
    .concat('\n');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        return undefined;
      }
    });
}

/** Message batch results JSONL: {custom_id, result: {type, message | error}}. */
export function messageBatchResults(text: string): LineResult[] {
  const results: LineResult[] = [];
  for (const line of jsonLines(text)) {
    if (!isRecord(line) || typeof line.custom_id !== 'string' || !isRecord(line.result)) continue;
    const result = line.result;
    switch (result.type) {
      case 'succeeded':
        results.push({ customId: line.custom_id, kind: 'succeeded', body: result.message, statusCode: 200 });
        break;
      case 'errored':
        results.push({ customId: line.custom_id, kind: 'errored', body: result.error, statusCode: 400 });
        break;
      case 'canceled':
        results.push({ customId: line.custom_id, kind: 'canceled' });
        break;
      case 'expired':
        results.push({ customId: line.custom_id, kind: 'expired' });
        break;
      default:
        break;
    }
  }
  return results;
}

/** Chat batch output and error file JSONL: {custom_id, response: {status_code, body} | null, error}. */
export function chatBatchResults(text: string): LineResult[] {
  const results: LineResult[] = [];
  for (const line of jsonLines(text)) {
    if (!isRecord(line) || typeof line.custom_id !== 'string') continue;
    const response = isRecord(line.response) ? line.response : undefined;
    const status = typeof response?.status_code === 'number' ? response.status_code : undefined;
    if (response && status !== undefined && status >= 200 && status < 300) {
      results.push({ customId: line.custom_id, kind: 'succeeded', body: response.body, statusCode: status });
    } else if (response && status !== undefined) {
      results.push({ customId: line.custom_id, kind: 'errored', body: response.body, statusCode: status });
    } else {
      const code = isRecord(line.error) ? line.error.code : undefined;
      const kind = code === 'batch_expired' ? 'expired' : code === 'batch_cancelled' ? 'canceled' : 'errored';
      results.push({ customId: line.custom_id, kind, body: line.error, statusCode: 500 });
    }
  }
  return results;
}

function ledgerUsage(usage: Usage): AttemptUsage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheCreationInputTokens: usage.cache_creation_input_tokens,
    cacheReadInputTokens: usage.cache_read_input_tokens,
  };
}

function errorLine(id: string, customId: string, code: string, message: string): string {
  return JSON.stringify({ id, custom_id: customId, response: null, error: { code, message } });
}

/** Our output and error files from the upstream's results, with counts and cost. */
export function buildOutputs(
  lines: BatchLinePlan[],
  results: LineResult[],
  binding: PrimitiveBinding,
  ids: Ids,
): Outputs {
  const byId = new Map(results.map((result) => [result.customId, result]));
  const outputs: Outputs = {
    outputLines: [],
    errorLines: [],
    counts: { total: lines.length, completed: 0, failed: 0 },
    costMicrosUsd: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
  };
  for (const plan of lines) {
    const result = byId.get(plan.customId);
    const id = ids.requestId();
    if (!result) {
      outputs.counts.failed += 1;
      outputs.errorLines.push(
        errorLine(id, plan.customId, 'missing_result', 'The upstream reported no result for this request.'),
      );
      continue;
    }
    switch (result.kind) {
      case 'succeeded': {
        try {
          const message = binding.primitive.parseResponse(
            result.body,
            context(plan, ids.messageId()),
            binding.options,
          );
          const usage = ledgerUsage(message.usage);
          outputs.costMicrosUsd += actualCost(plan.price, usage);
          outputs.usage.inputTokens += usage.inputTokens;
          outputs.usage.outputTokens += usage.outputTokens;
          outputs.usage.cacheCreationInputTokens += usage.cacheCreationInputTokens;
          outputs.usage.cacheReadInputTokens += usage.cacheReadInputTokens;
          outputs.counts.completed += 1;
          outputs.outputLines.push(
            JSON.stringify({
              id,
              custom_id: plan.customId,
              response: { status_code: 200, request_id: null, body: message },
              error: null,
            }),
          );
        } catch (error) {
          outputs.costMicrosUsd += plan.worstCaseMicrosUsd;
          outputs.counts.failed += 1;
          outputs.errorLines.push(
            errorLine(
              id,
              plan.customId,
              'untranslatable_result',
              `The upstream answer could not be translated: ${(error as Error).message}`,
            ),
          );
        }
        break;
      }
      case 'errored':
        outputs.counts.failed += 1;
        outputs.errorLines.push(
          JSON.stringify({
            id,
            custom_id: plan.customId,
            response: { status_code: result.statusCode ?? 400, request_id: null, body: result.body ?? null },
            error: null,
          }),
        );
        break;
      case 'canceled':
        outputs.counts.failed += 1;
        outputs.errorLines.push(
          errorLine(id, plan.customId, 'batch_cancelled', 'The batch was cancelled before this request ran.'),
        );
        break;
      case 'expired':
        outputs.counts.failed += 1;
        outputs.errorLines.push(
          errorLine(id, plan.customId, 'batch_expired', 'The batch expired before this request ran.'),
        );
        break;
      default: {
        const never: never = result.kind;
        throw new Error(`unknown result kind ${String(never)}`);
      }
    }
  }
  return outputs;
}
