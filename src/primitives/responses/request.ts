/**
 * Canonical request -> stateless `POST /responses` body.
 *
 * The whole history is sent as `input` items every turn and `store: false` keeps nothing upstream.
 * Inside a user turn, tool results become top-level `function_call_output` items placed before the
 * turn's other content (call/answer adjacency); inside an assistant turn, text and `function_call`
 * items keep their original order. Assumes `responsesCannotCarry(request)` returned undefined.
 */

import type {
  ContentBlockParam,
  CustomTool,
  ImageBlock,
  MessageParam,
  MessagesRequest,
  Tool,
  ToolChoice,
  ToolResultBlock,
} from '../../canonical/types.js';
import type { TranslateContext, WireRequest } from '../shared/types.js';
import { RESPONSES_PATH } from './fields.js';
import type { ResponsesOptions } from './options.js';
import type {
  FunctionTool,
  InputImagePart,
  InputItem,
  InputPart,
  OutputTextPart,
  ResponsesRequestBody,
  ResponsesToolChoice,
} from './wire-types.js';

export function buildResponsesRequest(
  request: MessagesRequest,
  context: TranslateContext,
  options: ResponsesOptions,
): WireRequest {
  const body: ResponsesRequestBody = {
    model: context.upstreamModel,
    input: request.messages.flatMap(messageItems),
    max_output_tokens: request.max_tokens,
    store: false,
  };
  const instructions = systemText(request.system);
  if (instructions !== undefined) body.instructions = instructions;
  if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools.map(functionTool);
  if (request.tool_choice !== undefined) {
    body.tool_choice = toolChoice(request.tool_choice);
    if (
      'disable_parallel_tool_use' in request.tool_choice &&
      request.tool_choice.disable_parallel_tool_use === true
    ) {
      body.parallel_tool_calls = false;
    }
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  const format = request.output_config?.format;
  if (format != null) {
    body.text = {
      format: { type: 'json_schema', name: options.schemaName, schema: format.schema, strict: true },
    };
  }
  if (request.stream === true) body.stream = true;
  return { path: RESPONSES_PATH, body };
}

function systemText(system: MessagesRequest['system']): string | undefined {
  if (system === undefined) return undefined;
  const text = typeof system === 'string' ? system : system.map((block) => block.text).join('\n');
  return text.length > 0 ? text : undefined;
}

function messageItems(message: MessageParam): InputItem[] {
  const blocks: ContentBlockParam[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return message.role === 'user' ? userItems(blocks) : assistantItems(blocks);
}

function userItems(blocks: ContentBlockParam[]): InputItem[] {
  const outputs: InputItem[] = [];
  const parts: InputPart[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') outputs.push(functionCallOutput(block));
    else if (block.type === 'text') parts.push({ type: 'input_text', text: block.text });
    else if (block.type === 'image') parts.push(inputImage(block));
    else
      throw new Error(
        `responses request: ${block.type} block in a user turn (responsesCannotCarry was skipped)`,
      );
  }
  return parts.length > 0 ? [...outputs, { type: 'message', role: 'user', content: parts }] : outputs;
}

function assistantItems(blocks: ContentBlockParam[]): InputItem[] {
  const items: InputItem[] = [];
  let text: OutputTextPart[] = [];
  const flushText = (): void => {
    if (text.length > 0) items.push({ type: 'message', role: 'assistant', content: text });
    text = [];
  };
  for (const block of blocks) {
    if (block.type === 'text') {
      text.push({ type: 'output_text', text: block.text, annotations: [] });
    } else if (block.type === 'tool_use') {
      flushText();
      items.push({
        type: 'function_call',
        call_id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.input),
      });
    } else {
      throw new Error(
        `responses request: ${block.type} block in an assistant turn (responsesCannotCarry was skipped)`,
      );
    }
  }
  flushText();
  return items;
}

function functionCallOutput(block: ToolResultBlock): InputItem {
  const content = block.content ?? '';
  if (typeof content === 'string')
    return { type: 'function_call_output', call_id: block.tool_use_id, output: content };
  const parts: InputPart[] = content.map((part) => {
    if (part.type === 'text') return { type: 'input_text', text: part.text };
    if (part.type === 'image') return inputImage(part);
    throw new Error(`responses request: ${part.type} in a tool_result (responsesCannotCarry was skipped)`);
  });
  // Text-only results travel as one string, the form every responses upstream accepts.
  const textOnly = parts.every((part) => part.type === 'input_text');
  const output = textOnly
    ? parts.map((part) => (part.type === 'input_text' ? part.text : '')).join('\n')
    : parts;
  return { type: 'function_call_output', call_id: block.tool_use_id, output };
}

function inputImage(block: ImageBlock): InputImagePart {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return {
        type: 'input_image',
        image_url: `data:${source.media_type};base64,${source.data}`,
        detail: 'auto',
      };
    case 'url':
      return { type: 'input_image', image_url: source.url, detail: 'auto' };
    case 'file':
      throw new Error('responses request: image with a file source (responsesCannotCarry was skipped)');
    default:
      return unreachable(source);
  }
}

function functionTool(tool: Tool): FunctionTool {
  if (tool.type !== undefined && tool.type !== 'custom') {
    throw new Error(`responses request: tool type ${tool.type} (responsesCannotCarry was skipped)`);
  }
  const custom = tool as CustomTool;
  const mapped: FunctionTool = {
    type: 'function',
    name: custom.name,
    parameters: custom.input_schema,
    strict: custom.strict === true,
  };
  if (custom.description !== undefined) mapped.description = custom.description;
  return mapped;
}

function toolChoice(choice: ToolChoice): ResponsesToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'tool':
      return { type: 'function', name: choice.name };
    case 'none':
      return 'none';
    default:
      return unreachable(choice);
  }
}

function unreachable(value: never): never {
  throw new Error(`unhandled value ${JSON.stringify(value)}`);
}
