/**
 * Inbound chat-completions request (a client's POST /v1/chat/completions body) -> canonical
 * request, so every alias can serve it whatever its targets' wires (protocols 5, C->M). Pure.
 *
 * - system and developer messages become `system` text blocks, in order, wherever they stand.
 * - user content (a string, or text and image_url parts; data URLs become base64 images, other URLs
 *   url images) becomes user turns; assistant content (text and refusal parts) and `tool_calls`
 *   (arguments parsed as a JSON object, ids kept) become assistant turns; each tool message becomes
 *   a tool_result placed before the other content of the next user turn. Consecutive turns of one
 *   role join.
 * - `max_completion_tokens` / `max_tokens` (the larger when both are given, so the reservation stays
 *   a worst case; the caller's per-alias default when neither) -> max_tokens.
 * - function tools -> custom tools; tool_choice and parallel_tool_calls; response_format
 *   json_schema -> output_config.format, text -> nothing; reasoning_effort -> output_config.effort;
 *   temperature, top_p, stop; stream and stream_options.include_usage.
 * - Fields only the chat wire itself carries (seed, penalties, logit_bias, response_format
 *   json_object, a temperature above 1) are listed in `chatOnly`: a chat-wire target gets the
 *   client's body as it is, every other target is routed away naming the field.
 * - Hints without a canonical home are dropped: user, metadata, store, safety_identifier,
 *   prompt_cache_key.
 * Anything else (n other than 1, unknown fields, legacy functions, audio, logprobs) raises
 * ChatInputError naming the field, before any upstream I/O.
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
  ImageBlock,
  MessagesRequest,
  TextBlock,
  ToolChoice,
  ToolResultBlock,
} from '../../canonical/types.js';

/** A field of the inbound request that cannot be served; `param` names it. */
export class ChatInputError extends InboundFieldError {
  override readonly name = 'ChatInputError';
}

/** A field only a chat-wire target can carry (it gets the client's body as it is). */
export interface ChatOnlyField {
  param: string;
  detail: string;
}

export interface InboundChat {
  request: MessagesRequest;
  /** stream_options.include_usage: the stream ends with a usage chunk whose choices are empty. */
  includeUsage: boolean;
  /** True when the body carries max_tokens or max_completion_tokens. */
  hasTokenBound: boolean;
  chatOnly: ChatOnlyField[];
}

export interface InboundChatOptions {
  /** The alias's default output bound, used when the request carries none. */
  defaultMaxTokens: number;
}

/** Hints with no canonical home: accepted, dropped on translation, forwarded in pass-through. */
const HINTS = ['user', 'metadata', 'store', 'safety_identifier', 'prompt_cache_key'] as const;

const TRANSLATED = [
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'n',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'reasoning_effort',
] as const;

/** Carried only by a chat-wire target (pass-through). */
const CHAT_ONLY = ['seed', 'frequency_penalty', 'presence_penalty', 'logit_bias'] as const;

/** Known fields of the wire that are not offered (each refused by name when set). */
const REFUSED: Record<string, string> = {
  logprobs: 'log probabilities are not offered',
  top_logprobs: 'log probabilities are not offered',
  functions: 'legacy functions are not offered; use tools',
  function_call: 'legacy function_call is not offered; use tool_choice',
  audio: 'audio output is not offered',
  modalities: 'only text output is offered',
  prediction: 'predicted outputs are not offered',
  web_search_options: 'web search is not offered',
  service_tier: 'service tiers are not offered',
};

export const CHAT_REQUEST_FIELDS: ReadonlySet<string> = new Set<string>([
  ...HINTS,
  ...TRANSLATED,
  ...CHAT_ONLY,
  ...Object.keys(REFUSED),
]);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Absent and null mean the same on this wire. */
const given = (value: unknown): boolean => value !== undefined && value !== null;

export function chatRequestToCanonical(body: unknown, options: InboundChatOptions): InboundChat {
  if (!isRecord(body)) throw new ChatInputError('body', 'must be a JSON object');
  checkFields(body);
  const chatOnly: ChatOnlyField[] = [];
  for (const field of CHAT_ONLY) {
    if (given(body[field]))
      chatOnly.push({ param: field, detail: `${field} is carried only by the chat wire` });
  }
  const system: TextBlock[] = [];
  const turns = new Turns(invalid, 'messages');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new ChatInputError('messages', 'a non-empty array of messages is required');
  }
  for (const [index, message] of body.messages.entries()) {
    addMessage(turns, system, message, `messages[${index}]`);
  }
  const bound = tokenBound(body);
  const request: MessagesRequest = {
    model: text(body.model, 'model'),
    max_tokens: bound ?? options.defaultMaxTokens,
    messages: turns.messages(),
  };
  if (system.length > 0) request.system = system;
  sampling(body, request, chatOnly);
  const tools = toolsOf(body.tools);
  if (tools.length > 0) {
    request.tools = tools;
    const choice = toolChoice(body.tool_choice, body.parallel_tool_calls === false);
    if (choice !== undefined) request.tool_choice = choice;
  }
  const format = responseFormat(body.response_format, chatOnly);
  const effort = effortOf(body.reasoning_effort, 'reasoning_effort', invalid);
  if (format !== undefined || effort !== undefined) {
    request.output_config = {
      ...(format !== undefined ? { format } : {}),
      ...(effort !== undefined ? { effort } : {}),
    };
  }
  if (given(body.stream) && typeof body.stream !== 'boolean') {
    throw new ChatInputError('stream', 'must be a boolean');
  }
  if (body.stream === true) request.stream = true;
  return { request, includeUsage: includeUsage(body), hasTokenBound: bound !== undefined, chatOnly };
}

function checkFields(body: Record<string, unknown>): void {
  for (const name of Object.keys(body)) {
    if (!CHAT_REQUEST_FIELDS.has(name)) throw new ChatInputError(name, 'unknown field');
    const refusal = REFUSED[name];
    if (refusal !== undefined && given(body[name]) && !harmless(name, body[name])) {
      throw new ChatInputError(name, refusal);
    }
  }
  if (given(body.n) && body.n !== 1) {
    throw new ChatInputError('n', 'only one choice per request is offered (n must be 1)');
  }
}

/** Values of refused fields that ask for nothing (what some clients send by default). */
function harmless(name: string, value: unknown): boolean {
  if (name === 'logprobs') return value === false;
  if (name === 'modalities') return Array.isArray(value) && value.every((modality) => modality === 'text');
  if (name === 'service_tier') return value === 'auto' || value === 'default';
  return false;
}

function tokenBound(body: Record<string, unknown>): number | undefined {
  let bound: number | undefined;
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const value = body[field];
    if (!given(value)) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ChatInputError(field, 'must be a positive integer');
    }
    bound = Math.max(bound ?? 0, value);
  }
  return bound;
}

function sampling(body: Record<string, unknown>, request: MessagesRequest, chatOnly: ChatOnlyField[]): void {
  const temperature = body.temperature;
  if (given(temperature)) {
    if (typeof temperature !== 'number' || temperature < 0 || temperature > 2) {
      throw new ChatInputError('temperature', 'must be a number between 0 and 2');
    }
    if (temperature > 1) {
      chatOnly.push({
        param: 'temperature',
        detail: 'a temperature above 1 is carried only by the chat wire',
      });
    }
    request.temperature = Math.min(temperature, 1);
  }
  const topP = body.top_p;
  if (given(topP)) {
    if (typeof topP !== 'number' || topP < 0 || topP > 1) {
      throw new ChatInputError('top_p', 'must be a number between 0 and 1');
    }
    request.top_p = topP;
  }
  const stop = body.stop;
  if (typeof stop === 'string') request.stop_sequences = [stop];
  else if (Array.isArray(stop)) {
    if (!stop.every((sequence) => typeof sequence === 'string')) {
      throw new ChatInputError('stop', 'must be a string or an array of strings');
    }
    if (stop.length > 0) request.stop_sequences = [...stop];
  } else if (given(stop)) throw new ChatInputError('stop', 'must be a string or an array of strings');
}

function includeUsage(body: Record<string, unknown>): boolean {
  const options = body.stream_options;
  if (!given(options)) return false;
  if (!isRecord(options)) throw new ChatInputError('stream_options', 'must be an object');
  return options.include_usage === true;
}

function addMessage(turns: Turns, system: TextBlock[], message: unknown, at: string): void {
  if (!isRecord(message)) throw new ChatInputError(at, 'must be an object');
  switch (message.role) {
    case 'system':
    case 'developer':
      // Empty texts are dropped, as in turns: the messages wire refuses an empty text block.
      for (const part of textParts(message.content, `${at}.content`)) {
        if (part.trim().length > 0) system.push({ type: 'text', text: part });
      }
      return;
    case 'user':
      turns.add('user', userContent(message.content, `${at}.content`));
      return;
    case 'assistant':
      turns.add('assistant', assistantContent(message, at));
      return;
    case 'tool':
      turns.add('user', [toolResult(message, at)]);
      return;
    default:
      throw new ChatInputError(`${at}.role`, 'must be system, developer, user, assistant or tool');
  }
}

/** A string, or an array of text parts, as the texts it holds. */
function textParts(content: unknown, at: string): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) throw new ChatInputError(at, 'must be a string or an array of text parts');
  return content.map((part, index) => {
    if (!isRecord(part) || part.type !== 'text' || typeof part.text !== 'string') {
      throw new ChatInputError(`${at}[${index}]`, 'must be a text part');
    }
    return part.text;
  });
}

function userContent(content: unknown, at: string): ContentBlockParam[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new ChatInputError(at, 'must be a string or an array of parts');
  return content.map((part, index) => userPart(part, `${at}[${index}]`));
}

function userPart(part: unknown, at: string): TextBlock | ImageBlock {
  if (!isRecord(part)) throw new ChatInputError(at, 'must be an object');
  switch (part.type) {
    case 'text':
      return { type: 'text', text: stringField(part.text, `${at}.text`) };
    case 'image_url':
      return imageBlock(part.image_url, `${at}.image_url`);
    default:
      throw new ChatInputError(`${at}.type`, `content parts of type ${String(part.type)} are not offered`);
  }
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(image: unknown, at: string): ImageBlock {
  if (!isRecord(image) || typeof image.url !== 'string' || image.url.length === 0) {
    throw new ChatInputError(`${at}.url`, 'an image URL or data URL is required');
  }
  const data = DATA_URL.exec(image.url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1]!, data: data[2]! } };
  if (image.url.startsWith('data:')) throw new ChatInputError(`${at}.url`, 'a data URL must be base64');
  return { type: 'image', source: { type: 'url', url: image.url } };
}

function assistantContent(message: Record<string, unknown>, at: string): ContentBlockParam[] {
  if (given(message.function_call)) {
    throw new ChatInputError(`${at}.function_call`, 'legacy function_call is not offered; use tool_calls');
  }
  if (given(message.audio)) throw new ChatInputError(`${at}.audio`, 'audio is not offered');
  const blocks: ContentBlockParam[] = [];
  const content = message.content;
  if (typeof content === 'string') blocks.push({ type: 'text', text: content });
  else if (Array.isArray(content)) {
    for (const [index, part] of content.entries()) {
      const where = `${at}.content[${index}]`;
      if (isRecord(part) && part.type === 'text')
        blocks.push({ type: 'text', text: stringField(part.text, `${where}.text`) });
      else if (isRecord(part) && part.type === 'refusal')
        blocks.push({ type: 'text', text: stringField(part.refusal, `${where}.refusal`) });
      else throw new ChatInputError(where, 'must be a text or refusal part');
    }
  } else if (given(content))
    throw new ChatInputError(`${at}.content`, 'must be a string, an array of parts or null');
  const calls = message.tool_calls;
  if (given(calls)) {
    if (!Array.isArray(calls)) throw new ChatInputError(`${at}.tool_calls`, 'must be an array');
    for (const [index, call] of calls.entries()) {
      const where = `${at}.tool_calls[${index}]`;
      if (!isRecord(call) || (given(call.type) && call.type !== 'function') || !isRecord(call.function)) {
        throw new ChatInputError(where, 'must be a function tool call');
      }
      blocks.push({
        type: 'tool_use',
        id: text(call.id, `${where}.id`),
        name: text(call.function.name, `${where}.function.name`),
        input: argumentsObject(call.function.arguments, `${where}.function.arguments`, invalid),
      });
    }
  }
  return blocks;
}

function toolResult(message: Record<string, unknown>, at: string): ToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: text(message.tool_call_id, `${at}.tool_call_id`),
    content: textParts(message.content, `${at}.content`).join(''),
  };
}

function toolsOf(tools: unknown): CustomTool[] {
  if (!given(tools)) return [];
  if (!Array.isArray(tools)) throw new ChatInputError('tools', 'must be an array');
  return tools.map((tool, index) => functionTool(tool, `tools[${index}]`));
}

function functionTool(tool: unknown, at: string): CustomTool {
  if (!isRecord(tool) || tool.type !== 'function' || !isRecord(tool.function)) {
    const type = isRecord(tool) ? String(tool.type) : typeof tool;
    throw new ChatInputError(`${at}.type`, `only function tools are offered (got ${type})`);
  }
  const fn = tool.function;
  const parameters = fn.parameters ?? { type: 'object', properties: {} };
  if (!isRecord(parameters) || parameters.type !== 'object') {
    throw new ChatInputError(`${at}.function.parameters`, 'must be a JSON Schema of type object');
  }
  const mapped: CustomTool = {
    name: text(fn.name, `${at}.function.name`),
    input_schema: parameters as CustomTool['input_schema'],
  };
  if (typeof fn.description === 'string') mapped.description = fn.description;
  return mapped;
}

function toolChoice(choice: unknown, serial: boolean): ToolChoice | undefined {
  return canonicalToolChoice(
    choice,
    serial,
    (named) => text(isRecord(named.function) ? named.function.name : undefined, 'tool_choice.function.name'),
    () =>
      new ChatInputError('tool_choice', 'must be auto, required, none or {type: function, function: {name}}'),
  );
}

function responseFormat(
  format: unknown,
  chatOnly: ChatOnlyField[],
): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  if (!given(format)) return undefined;
  if (!isRecord(format)) throw new ChatInputError('response_format', 'must be an object');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      chatOnly.push({
        param: 'response_format',
        detail: 'response_format json_object is carried only by the chat wire',
      });
      return undefined;
    case 'json_schema': {
      const schema = isRecord(format.json_schema) ? format.json_schema.schema : undefined;
      if (!isRecord(schema)) {
        throw new ChatInputError('response_format.json_schema.schema', 'a JSON Schema object is required');
      }
      return { type: 'json_schema', schema };
    }
    default:
      throw new ChatInputError('response_format.type', 'must be text, json_object or json_schema');
  }
}

const invalid = (param: string, message: string) => new ChatInputError(param, message);

function stringField(value: unknown, at: string): string {
  if (typeof value !== 'string') throw new ChatInputError(at, 'must be a string');
  return value;
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ChatInputError(at, 'a non-empty string is required');
  return value;
}
