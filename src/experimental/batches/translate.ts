/**
 * Batch translations (pure; ids are injected). Outbound: checked lines -> the upstream's batch
 * payload (message batches: inline requests; chat batches: a JSONL input file, messages lines
 * translated, chat lines as they came with the target's model id). Inbound: the upstream's result
 * lines -> our output file (vendorb batch output lines whose body is in the input lines' format: a
 * /v1/messages response, or the upstream's chat completion with the alias as its model) and error
 * file, the request counts, and the cost of what succeeded.
 *
 * Cost: each succeeded line at its own target's price from the usage it reports; a succeeded line
 * whose answer cannot be read is counted at its worst case (never below what it may have cost).
 */

import type { Usage } from '../../canonical/types.js';
import type { PrimitiveBinding } from '../../gateway/primitive-registry.js';
import { actualCost } from '../../money/pricing.js';
import type { AttemptUsage } from '../../money/settlement.js';
import { withUpstreamModel } from '../../primitives/chat-completions/batch-line.js';
import { chatBatchLine } from '../../primitives/chat-completions/batch-lines.js';
import { messageBatchRequest } from '../../primitives/messages/batch-lines.js';
import type { LineResult } from '../../primitives/shared/batch-lines.js';
import type { BatchLinePlan, BatchRequestCounts } from '../../store/batches-port.js';
import { CHAT_LINES, type CheckedLine, type LineFormat } from './lines.js';

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
      // The service accepts chat lines only for a chat-completions connection.
      if (line.format === CHAT_LINES) throw new Error('chat lines have no message-batches form');
      const wire = binding.primitive.buildRequest(
        line.request,
        context(line.plan, ids.messageId()),
        binding.options,
      );
      return messageBatchRequest(line.customId, wire.body as Record<string, unknown>);
    }),
  };
}

/** The chat-wire input file: one `POST /v1/chat/completions` line per request. */
export function chatBatchInput(lines: CheckedLine[], binding: PrimitiveBinding, ids: Ids): string {
  return lines
    .map((line) => {
      if (line.format === CHAT_LINES) {
        const body = withUpstreamModel(line.body, line.plan.upstreamModel);
        return JSON.stringify({ custom_id: line.customId, method: 'POST', url: CHAT_LINES, body });
      }
      const wire = binding.primitive.buildRequest(
        line.request,
        context(line.plan, ids.messageId()),
        binding.options,
      );
      return chatBatchLine(line.customId, wire);
    })
    .join('\n')
    .concat('\n');
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

/**
 * Our output and error files from the upstream's results, with counts and cost. `format`: the input
 * lines' format, which the output lines' bodies follow.
 */
export function buildOutputs(
  lines: BatchLinePlan[],
  results: LineResult[],
  binding: PrimitiveBinding,
  ids: Ids,
  format: LineFormat,
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
              response: {
                status_code: 200,
                request_id: null,
                body: format === CHAT_LINES ? { ...(result.body as object), model: plan.alias } : message,
              },
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
