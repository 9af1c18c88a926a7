/**
 * The input file's lines, parsed and checked against the ONE connection the batch goes to, before
 * the batch exists (SPEC 4.4 batch rule 1). Each line is vendorb-batch JSONL
 *   {"custom_id": "...", "method": "POST", "url": <the batch's endpoint>, "body": <a request>}
 * in one of two formats, chosen by the batch's `endpoint` (every line's url must equal it):
 *   /v1/messages          a /v1/messages request, on any batch connection: it passes when it
 *                         validates in portable mode, is not streaming, names a model alias with a
 *                         target on the connection, and the connection's profile can carry it (the
 *                         route planner with a one-target alias, reasons included); translated to
 *                         the connection's wire.
 *   /v1/chat/completions  a chat-completions request, on a chat-completions connection only (its
 *                         own line format): the pure check of primitives/chat-completions/
 *                         batch-line.ts (model, messages, no stream, an output bound, no audio) and
 *                         a model alias with a target on the connection; forwarded as it is with
 *                         only the model replaced.
 * The first line that fails fails the request, naming its line number (1-based) and custom_id.
 * Each line's worst case is priced from its body bytes and its output bound.
 */

import type { MessagesRequest } from '../../canonical/types.js';
import {
  providerExecutedTools,
  requestFacts,
  validateMessagesRequest,
} from '../../canonical/validate-messages.js';
import type { Config } from '../../config/schema.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Connection, ModelTarget, Upstreams } from '../../gateway/connections.js';
import { planPortable } from '../../gateway/messages/route-plan.js';
import { inputTokenBound, worstCaseCost } from '../../money/pricing.js';
import { ChatLineError, checkChatBatchBody } from '../../primitives/chat-completions/batch-line.js';
import type { BatchLinePlan } from '../../store/batches-port.js';

/** The batch endpoints, each naming its line format. */
export const MESSAGES_LINES = '/v1/messages';
export const CHAT_LINES = '/v1/chat/completions';
export type LineFormat = typeof MESSAGES_LINES | typeof CHAT_LINES;

export type CheckedLine = {
  lineNumber: number;
  customId: string;
  plan: BatchLinePlan;
  /** Input bound + max_tokens: taken from the tokens-per-minute limits at the batch's admission. */
  worstCaseTokens: number;
} & (
  | { format: typeof MESSAGES_LINES; request: MessagesRequest }
  | { format: typeof CHAT_LINES; body: Record<string, unknown> }
);

const CUSTOM_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_LINES = 50_000;

function lineError(lineNumber: number, customId: string | undefined, reason: string): GatewayError {
  const who = customId === undefined ? '' : ` (custom_id ${customId})`;
  return new GatewayError('invalid_request', `input file line ${lineNumber}${who}: ${reason}`, {
    param: 'input_file_id',
  });
}

export function checkLines(
  content: string,
  format: LineFormat,
  connection: Connection,
  upstreams: Upstreams,
  config: Config,
): CheckedLine[] {
  const texts = content.split('\n');
  const checked: CheckedLine[] = [];
  const seen = new Set<string>();
  for (const [index, raw] of texts.entries()) {
    const text = raw.trim();
    if (text === '') continue;
    const lineNumber = index + 1;
    if (checked.length >= MAX_LINES)
      throw lineError(lineNumber, undefined, `a batch holds at most ${MAX_LINES} lines`);
    checked.push(checkLine(text, lineNumber, seen, format, connection, upstreams, config));
  }
  if (checked.length === 0)
    throw new GatewayError('invalid_request', 'input_file_id: the input file holds no lines', {
      param: 'input_file_id',
    });
  return checked;
}

function checkLine(
  text: string,
  lineNumber: number,
  seen: Set<string>,
  format: LineFormat,
  connection: Connection,
  upstreams: Upstreams,
  config: Config,
): CheckedLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw lineError(lineNumber, undefined, 'not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw lineError(lineNumber, undefined, 'not a JSON object');
  const line = parsed as Record<string, unknown>;
  const customId = typeof line.custom_id === 'string' ? line.custom_id : undefined;
  if (customId === undefined || !CUSTOM_ID.test(customId)) {
    throw lineError(lineNumber, customId, 'custom_id: required, 1-64 characters of A-Z a-z 0-9 _ -');
  }
  if (seen.has(customId)) throw lineError(lineNumber, customId, 'custom_id: used by an earlier line');
  seen.add(customId);
  for (const name of Object.keys(line)) {
    if (!['custom_id', 'method', 'url', 'body'].includes(name))
      throw lineError(lineNumber, customId, `${name}: unknown field`);
  }
  if (line.method !== 'POST') throw lineError(lineNumber, customId, 'method: must be POST');
  if (line.url !== format)
    throw lineError(lineNumber, customId, `url: must be ${format} (the batch's endpoint)`);
  if (format === CHAT_LINES)
    return checkChatLine(line.body, lineNumber, customId, connection, upstreams, config);
  let request: MessagesRequest;
  try {
    request = validateMessagesRequest(line.body, 'portable');
  } catch (error) {
    if (error instanceof GatewayError) throw lineError(lineNumber, customId, error.message);
    throw error;
  }
  if (request.stream === true)
    throw lineError(lineNumber, customId, 'body.stream: batch requests cannot stream');
  const target = targetFor(request.model, lineNumber, customId, connection, upstreams);
  try {
    planPortable(request, { alias: request.model, targets: [target] }, [], providerExecutedTools(request));
  } catch (error) {
    if (error instanceof GatewayError) throw lineError(lineNumber, customId, error.message);
    throw error;
  }
  const facts = requestFacts(request);
  const inputBound = inputTokenBound(
    {
      bodyBytes: Buffer.byteLength(JSON.stringify(line.body)),
      embeddedDataBytes: facts.embeddedDataBytes,
      images: facts.images,
      documents: facts.documents,
    },
    {
      imageTokens: config.ledger.image_input_bound_tokens,
      documentTokens: config.ledger.document_input_bound_tokens,
    },
  );
  return {
    lineNumber,
    customId,
    format: MESSAGES_LINES,
    request,
    worstCaseTokens: inputBound + request.max_tokens,
    plan: {
      customId,
      alias: request.model,
      upstreamModel: target.upstreamModel,
      price: target.price,
      worstCaseMicrosUsd: worstCaseCost(target.price, inputBound, request.max_tokens),
    },
  };
}

function targetFor(
  model: string,
  lineNumber: number,
  customId: string,
  connection: Connection,
  upstreams: Upstreams,
): ModelTarget {
  const target = upstreams.aliases
    .get(model)
    ?.targets.find((candidate) => candidate.connection.name === connection.name);
  if (!target)
    throw lineError(lineNumber, customId, `model: ${model} has no target on connection ${connection.name}`);
  return target;
}

/**
 * A chat line that gives no output bound is bounded at its alias's `default_max_tokens`, as
 * POST /v1/chat/completions is: written into the line under the connection's token field, so the
 * bound the reservation is priced at is the one the upstream is asked to honour.
 */
function withDefaultBound(body: unknown, upstreams: Upstreams, connection: Connection): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const line = body as Record<string, unknown>;
  if (line.max_completion_tokens !== undefined || line.max_tokens !== undefined) return body;
  const alias = typeof line.model === 'string' ? upstreams.aliases.get(line.model) : undefined;
  if (!alias) return body;
  return { ...line, [connection.row.tokenField ?? 'max_tokens']: alias.defaultMaxTokens };
}

/** A line in the chat connection's own format: the pure check, the alias's target, the worst case. */
function checkChatLine(
  body: unknown,
  lineNumber: number,
  customId: string,
  connection: Connection,
  upstreams: Upstreams,
  config: Config,
): CheckedLine {
  let facts: ReturnType<typeof checkChatBatchBody>;
  body = withDefaultBound(body, upstreams, connection);
  try {
    facts = checkChatBatchBody(body);
  } catch (error) {
    if (error instanceof ChatLineError) throw lineError(lineNumber, customId, error.message);
    throw error;
  }
  const target = targetFor(facts.model, lineNumber, customId, connection, upstreams);
  const inputBound = inputTokenBound(facts, {
    imageTokens: config.ledger.image_input_bound_tokens,
    documentTokens: config.ledger.document_input_bound_tokens,
  });
  return {
    lineNumber,
    customId,
    format: CHAT_LINES,
    body: body as Record<string, unknown>,
    worstCaseTokens: inputBound + facts.maxOutputTokens,
    plan: {
      customId,
      alias: facts.model,
      upstreamModel: target.upstreamModel,
      price: target.price,
      worstCaseMicrosUsd: worstCaseCost(target.price, inputBound, facts.maxOutputTokens),
    },
  };
}
