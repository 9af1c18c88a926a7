/**
 * Inbound responses-wire request (a client's POST /v1/responses body) -> canonical request, so an
 * alias whose target speaks another wire can serve it (protocols 5.4, R->M). Pure.
 *
 * - `instructions` and every system/developer message become `system` (in order).
 * - `input` (a string, or items) becomes alternating turns: assistant messages and function_call
 *   items join one assistant turn (text then tool_use in item order, id = call_id);
 *   function_call_output items join the next user turn as tool_result blocks placed before that
 *   turn's other content; reasoning items are dropped (their handles mean nothing elsewhere).
 * - `max_output_tokens` (or the caller's default) -> max_tokens; flat function tools -> custom
 *   tools; tool_choice and parallel_tool_calls; text.format json_schema -> output_config.format;
 *   reasoning.effort -> output_config.effort (minimal -> low; none -> no effort); stream.
 * - Hints without a canonical home are dropped: metadata, user, safety_identifier,
 *   prompt_cache_key, include, store, background, stream_options, truncation, service_tier.
 * Anything the canonical model cannot carry faithfully raises ResponsesInputError naming the field.
 */

import {
  argumentsObject,
  canonicalToolChoice,
  effortOf,
  InboundFieldError,
  Turns,
} from '../../canonical/inbound-turns.js';
import type {
  ContentBlockParam,
  CustomTool,
  Effort,
  ImageBlock,
  MessagesRequest,
  TextBlock,
  ToolChoice,
  ToolResultBlock,
} from '../../canonical/types.js';
import { isRecord } from './response.js';

/** A field of the inbound request the canonical model cannot carry; `param` names it. */
export class ResponsesInputError extends InboundFieldError {
  override readonly name = 'ResponsesInputError';
}

export interface InboundOptions {
  /** Used when the request has no max_output_tokens (undefined: the field is required). */
  defaultMaxOutputTokens?: number | undefined;
}

export function responsesRequestToCanonical(
  body: Record<string, unknown>,
  options: InboundOptions = {},
): MessagesRequest {
  const turns = new Turns(invalid, 'input');
  const system: TextBlock[] = [];
  if (typeof body.instructions === 'string' && body.instructions.length > 0) {
    system.push({ type: 'text', text: body.instructions });
  }
  const input = body.input;
  if (typeof input === 'string') turns.add('user', [{ type: 'text', text: input }]);
  else if (Array.isArray(input)) {
    for (const [index, item] of input.entries()) addItem(turns, system, item, `input[${index}]`);
  } else throw new ResponsesInputError('input', 'a string or an array of input items is required');
  const request: MessagesRequest = {
    model: text(body.model, 'model'),
    max_tokens: maxTokens(body.max_output_tokens, options.defaultMaxOutputTokens),
    messages: turns.messages(),
  };
  if (system.length > 0) request.system = system;
  if (typeof body.temperature === 'number') request.temperature = body.temperature;
  if (typeof body.top_p === 'number') request.top_p = body.top_p;
  if (Array.isArray(body.tools) && body.tools.length > 0) request.tools = body.tools.map(functionTool);
  const choice = toolChoice(body.tool_choice, body.parallel_tool_calls === false);
  if (choice !== undefined) request.tool_choice = choice;
  const format = outputFormat(body.text);
  const effort = reasoningEffort(body.reasoning);
  if (format !== undefined || effort !== undefined) {
    request.output_config = {
      ...(format !== undefined ? { format } : {}),
      ...(effort !== undefined ? { effort } : {}),
    };
  }
  if (body.stream === true) request.stream = true;
  return request;
}

function addItem(turns: Turns, system: TextBlock[], item: unknown, at: string): void {
  if (!isRecord(item)) throw new ResponsesInputError(at, 'must be an object');
  const type = item.type ?? 'message';
  switch (type) {
    case 'message':
      addMessage(turns, system, item, at);
      return;
    case 'function_call':
      turns.add('assistant', [
        {
          type: 'tool_use',
          id: text(item.call_id, `${at}.call_id`),
          name: text(item.name, `${at}.name`),
          input: argumentsObject(item.arguments, `${at}.arguments`, invalid),
        },
      ]);
      return;
    case 'function_call_output':
      turns.add('user', [toolResult(item, at)]);
      return;
    case 'reasoning':
      return;
    default:
      throw new ResponsesInputError(`${at}.type`, `input items of type ${String(type)} are not supported`);
  }
}

function addMessage(turns: Turns, system: TextBlock[], item: Record<string, unknown>, at: string): void {
  const role = item.role;
  const content = item.content;
  if (role === 'system' || role === 'developer') {
    system.push(...parts(content, `${at}.content`).map((part) => textOnly(part, `${at}.content`)));
    return;
  }
  if (role !== 'user' && role !== 'assistant') {
    throw new ResponsesInputError(`${at}.role`, 'must be user, assistant, system or developer');
  }
  turns.add(role, parts(content, `${at}.content`));
}

function textOnly(block: ContentBlockParam, at: string): TextBlock {
  if (block.type !== 'text')
    throw new ResponsesInputError(at, 'system and developer messages hold text only');
  return block;
}

/** Message content (a string or parts) -> canonical blocks. */
function parts(content: unknown, at: string): ContentBlockParam[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new ResponsesInputError(at, 'must be a string or an array of parts');
  return content.map((part, index) => contentPart(part, `${at}[${index}]`));
}

function contentPart(part: unknown, at: string): TextBlock | ImageBlock | ContentBlockParam {
  if (!isRecord(part)) throw new ResponsesInputError(at, 'must be an object');
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: text(part.text, `${at}.text`) };
    case 'refusal':
      return { type: 'text', text: text(part.refusal, `${at}.refusal`) };
    case 'input_image':
      return imageBlock(part, at);
    case 'input_file':
      return documentBlock(part, at);
    default:
      throw new ResponsesInputError(
        `${at}.type`,
        `content parts of type ${String(part.type)} are not supported`,
      );
  }
}

const DATA_URI = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(part: Record<string, unknown>, at: string): ImageBlock {
  if (typeof part.image_url !== 'string') {
    throw new ResponsesInputError(
      `${at}.image_url`,
      'an image URL or data URI is required (file_id is not supported)',
    );
  }
  const data = DATA_URI.exec(part.image_url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } };
  return { type: 'image', source: { type: 'url', url: part.image_url } };
}

function documentBlock(part: Record<string, unknown>, at: string): ContentBlockParam {
  if (typeof part.file_data === 'string') {
    const data = DATA_URI.exec(part.file_data);
    if (!data) throw new ResponsesInputError(`${at}.file_data`, 'must be a base64 data URI');
    return { type: 'document', source: { type: 'base64', media_type: data[1]!, data: data[2]! } };
  }
  if (typeof part.file_url === 'string')
    return { type: 'document', source: { type: 'url', url: part.file_url } };
  throw new ResponsesInputError(at, 'an input_file needs file_data or file_url (file_id is not supported)');
}

function toolResult(item: Record<string, unknown>, at: string): ToolResultBlock {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: text(item.call_id, `${at}.call_id`) };
  const output = item.output;
  if (typeof output === 'string') block.content = output;
  else if (Array.isArray(output)) {
    block.content = output.map((part, index) => {
      const mapped = contentPart(part, `${at}.output[${index}]`);
      if (mapped.type !== 'text' && mapped.type !== 'image' && mapped.type !== 'document') {
        throw new ResponsesInputError(`${at}.output[${index}]`, 'not allowed in a function_call_output');
      }
      return mapped;
    });
  } else throw new ResponsesInputError(`${at}.output`, 'must be a string or an array of parts');
  return block;
}

function functionTool(tool: unknown, index: number): CustomTool {
  const at = `tools[${index}]`;
  if (!isRecord(tool) || tool.type !== 'function') {
    const type = isRecord(tool) ? String(tool.type) : typeof tool;
    throw new ResponsesInputError(`${at}.type`, `only function tools are offered (got ${type})`);
  }
  const parameters = tool.parameters ?? { type: 'object', properties: {} };
  if (!isRecord(parameters) || parameters.type !== 'object') {
    throw new ResponsesInputError(`${at}.parameters`, 'must be a JSON Schema of type object');
  }
  const mapped: CustomTool = {
    name: text(tool.name, `${at}.name`),
    input_schema: parameters as CustomTool['input_schema'],
  };
  if (typeof tool.description === 'string') mapped.description = tool.description;
  if (tool.strict === true) mapped.strict = true;
  return mapped;
}

function toolChoice(choice: unknown, serial: boolean): ToolChoice | undefined {
  return canonicalToolChoice(
    choice,
    serial,
    (named) => text(named.name, 'tool_choice.name'),
    () => new ResponsesInputError('tool_choice', 'must be auto, required, none or {type: function, name}'),
  );
}

function outputFormat(
  textConfig: unknown,
): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  if (textConfig === undefined || textConfig === null) return undefined;
  if (!isRecord(textConfig)) throw new ResponsesInputError('text', 'must be an object');
  const format = textConfig.format;
  if (format === undefined || format === null || (isRecord(format) && format.type === 'text'))
    return undefined;
  if (isRecord(format) && format.type === 'json_schema' && isRecord(format.schema)) {
    return { type: 'json_schema', schema: format.schema };
  }
  throw new ResponsesInputError('text.format', 'only text and json_schema (with a schema) are offered');
}

function reasoningEffort(reasoning: unknown): Effort | undefined {
  if (reasoning === undefined || reasoning === null) return undefined;
  if (!isRecord(reasoning)) throw new ResponsesInputError('reasoning', 'must be an object');
  return effortOf(reasoning.effort, 'reasoning.effort', invalid);
}

function maxTokens(value: unknown, fallback: number | undefined): number {
  const max = value ?? fallback;
  if (max === undefined || max === null) {
    throw new ResponsesInputError('max_output_tokens', 'required (it bounds the reservation of the call)');
  }
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 1) {
    throw new ResponsesInputError('max_output_tokens', 'must be a positive integer');
  }
  return max;
}

const invalid = (param: string, message: string) => new ResponsesInputError(param, message);

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ResponsesInputError(at, 'a non-empty string is required');
  return value;
}
