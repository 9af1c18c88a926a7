/**
 * Canonical request -> chat-completions request (pure).
 *
 * Steps: refuse what the wire cannot carry (same check routing runs), then map the conversation
 * (messages.ts), the tools and tool_choice, the sampling and output fields. `thinking`, `top_k`,
 * `service_tier` and `metadata` are never sent: every chat profile lists them as unsupported, so
 * routing sends such requests elsewhere before they get here.
 */
import type { CustomTool, MessagesRequest, OutputConfig, Tool, ToolChoice } from '../../canonical/types.js';
import type { TranslateContext, WireRequest } from '../shared/types.js';
import { assertNever } from './assert-never.js';
import { CannotCarryError, findChatUncarriable } from './cannot-carry.js';
import { conversationMessages, systemMessage } from './messages.js';
import type { ChatOptions } from './options.js';
import type { ChatFunctionTool, ChatRequestBody, ChatToolChoice } from './wire-types.js';

/** Path below the connection's base URL (which ends in `/v1` or a vendor prefix such as `/openai/v1`). */
export const CHAT_COMPLETIONS_PATH = '/chat/completions';

/** Name given to the schema of `output_config.format` (the chat wire requires one). */
export const RESPONSE_FORMAT_NAME = 'output';

export function buildChatRequest(
  request: MessagesRequest,
  context: TranslateContext,
  options: ChatOptions,
): WireRequest {
  const problem = findChatUncarriable(request);
  if (problem !== undefined) throw new CannotCarryError(problem.field, problem.reason);

  const body: ChatRequestBody = {
    model: context.upstreamModel,
    messages: [...systemMessage(request.system), ...conversationMessages(request.messages)],
    [options.tokenField]: request.max_tokens,
    ...samplingFields(request),
    ...toolFields(request.tools, request.tool_choice),
    ...outputFields(request.output_config),
    ...streamFields(request.stream),
  };
  return { path: CHAT_COMPLETIONS_PATH, body };
}

function samplingFields(request: MessagesRequest): Partial<ChatRequestBody> {
  const fields: Partial<ChatRequestBody> = {};
  if (request.temperature !== undefined) fields.temperature = request.temperature;
  if (request.top_p !== undefined) fields.top_p = request.top_p;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0) {
    fields.stop = [...request.stop_sequences];
  }
  return fields;
}

/**
 * Tools and tool_choice. Without tools, tool_choice and parallel_tool_calls are left out: the chat
 * wire answers 400 to parallel_tool_calls without tools, and auto/none then mean the same as nothing.
 */
function toolFields(tools: Tool[] | undefined, choice: ToolChoice | undefined): Partial<ChatRequestBody> {
  if (tools === undefined || tools.length === 0) return {};
  const fields: Partial<ChatRequestBody> = {
    tools: tools.map((tool, position) => functionTool(tool, position)),
  };
  if (choice === undefined) return fields;
  fields.tool_choice = chatToolChoice(choice);
  if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) fields.parallel_tool_calls = false;
  return fields;
}

function functionTool(tool: Tool, position: number): ChatFunctionTool {
  if (!isCustomTool(tool)) {
    throw new CannotCarryError(
      `tools[${position}]`,
      `vendora-defined tool type "${tool.type}" cannot be carried`,
    );
  }
  const { name, description, input_schema: parameters } = tool;
  return {
    type: 'function',
    function: description === undefined ? { name, parameters } : { name, description, parameters },
  };
}

function isCustomTool(tool: Tool): tool is CustomTool {
  return tool.type === undefined || tool.type === 'custom';
}

function chatToolChoice(choice: ToolChoice): ChatToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default:
      return assertNever(choice, 'tool_choice');
  }
}

/**
 * `output_config.effort` -> `reasoning_effort` word for word: the chat wire knows all five words
 * (low, medium, high, xhigh, max). Whether a model accepts a word is a profile rule routing applies.
 */
function outputFields(outputConfig: OutputConfig | undefined): Partial<ChatRequestBody> {
  const fields: Partial<ChatRequestBody> = {};
  if (outputConfig?.effort !== undefined && outputConfig.effort !== null) {
    fields.reasoning_effort = outputConfig.effort;
  }
  const format = outputConfig?.format;
  if (format !== undefined && format !== null) {
    fields.response_format = {
      type: 'json_schema',
      json_schema: { name: RESPONSE_FORMAT_NAME, schema: format.schema, strict: true },
    };
  }
  return fields;
}

/** Streams always ask for the trailing usage chunk: without it the ledger could not settle. */
function streamFields(stream: boolean | undefined): Partial<ChatRequestBody> {
  return stream === true ? { stream: true, stream_options: { include_usage: true } } : {};
}
