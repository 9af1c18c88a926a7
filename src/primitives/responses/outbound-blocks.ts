/**
 * The block handlers of the outbound stream state machine (outbound-stream.ts): a canonical
 * block's start, deltas and stop become its output item's events.
 */
import type { ContentDelta, StreamEvent } from '../../canonical/types.js';
import {
  closeItem,
  type Emitter,
  functionCallItem,
  type OpenItem,
  openItem,
  type Streaming,
} from './outbound-items.js';
import { itemId, type OutboundContext, type OutputTextPart } from './outbound-object.js';

type StartedBlock = Extract<StreamEvent, { type: 'content_block_start' }>['content_block'];

export function onBlockStart(
  state: Streaming,
  block: StartedBlock,
  context: OutboundContext,
  out: Emitter,
): Streaming {
  switch (block.type) {
    case 'text': {
      const opened =
        state.item?.kind === 'message'
          ? state
          : openItem(closeItem(state, 'completed', out), 'msg', context, out);
      const item = opened.item as Extract<OpenItem, { kind: 'message' }>;
      const part: OutputTextPart = { type: 'output_text', text: '', annotations: [] };
      const contentIndex = item.parts.length;
      out.emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: contentIndex,
        part: { ...part },
      });
      const next: Streaming = { ...opened, item: { ...item, parts: [...item.parts, part] }, block: 'text' };
      return block.text.length > 0 ? onDelta(next, { type: 'text_delta', text: block.text }, out) : next;
    }
    case 'thinking': {
      const opened = openItem(closeItem(state, 'completed', out), 'rs', context, out);
      const item = opened.item!;
      out.emit({
        type: 'response.reasoning_summary_part.added',
        item_id: item.id,
        output_index: item.outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
      const next: Streaming = { ...opened, block: 'thinking' };
      return block.thinking.length > 0
        ? onDelta(next, { type: 'thinking_delta', thinking: block.thinking }, out)
        : next;
    }
    case 'tool_use': {
      const closed = closeItem(state, 'completed', out);
      const outputIndex = closed.output.length;
      const item: OpenItem = {
        kind: 'function_call',
        outputIndex,
        id: itemId(context, 'fc', outputIndex),
        callId: block.id,
        name: block.name,
        args: '',
      };
      out.emit({
        type: 'response.output_item.added',
        output_index: outputIndex,
        item: functionCallItem(item, 'in_progress'),
      });
      const next: Streaming = { ...closed, item, block: 'tool_use' };
      const initial = Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
      return initial.length > 0
        ? onDelta(next, { type: 'input_json_delta', partial_json: initial }, out)
        : next;
    }
    case 'redacted_thinking':
      return { ...state, block: 'skipped' };
    default: {
      const never: never = block;
      throw new Error(`unknown block ${JSON.stringify(never)}`);
    }
  }
}

export function onDelta(state: Streaming, delta: ContentDelta, out: Emitter): Streaming {
  const item = state.item;
  if (state.block === 'skipped' || delta.type === 'signature_delta') return state;
  if (deltaText(delta).length === 0) return state;
  if (delta.type === 'text_delta' && state.block === 'text' && item?.kind === 'message') {
    const contentIndex = item.parts.length - 1;
    const parts = item.parts.map((part, index) =>
      index === contentIndex ? { ...part, text: part.text + delta.text } : part,
    );
    out.emit({
      type: 'response.output_text.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: contentIndex,
      delta: delta.text,
      logprobs: [],
    });
    return { ...state, item: { ...item, parts } };
  }
  if (delta.type === 'thinking_delta' && state.block === 'thinking' && item?.kind === 'reasoning') {
    out.emit({
      type: 'response.reasoning_summary_text.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      summary_index: 0,
      delta: delta.thinking,
    });
    return { ...state, item: { ...item, text: item.text + delta.thinking } };
  }
  if (delta.type === 'input_json_delta' && state.block === 'tool_use' && item?.kind === 'function_call') {
    out.emit({
      type: 'response.function_call_arguments.delta',
      item_id: item.id,
      output_index: item.outputIndex,
      delta: delta.partial_json,
    });
    return { ...state, item: { ...item, args: item.args + delta.partial_json } };
  }
  throw new Error(`responses stream out: ${delta.type} does not fit the open block ${String(state.block)}`);
}

function deltaText(delta: Exclude<ContentDelta, { type: 'signature_delta' }>): string {
  switch (delta.type) {
    case 'text_delta':
      return delta.text;
    case 'thinking_delta':
      return delta.thinking;
    case 'input_json_delta':
      return delta.partial_json;
    default: {
      const never: never = delta;
      throw new Error(`unknown delta ${JSON.stringify(never)}`);
    }
  }
}

export function onBlockStop(state: Streaming, out: Emitter): Streaming {
  const item = state.item;
  if (state.block === 'text' && item?.kind === 'message') {
    const contentIndex = item.parts.length - 1;
    const part = item.parts[contentIndex]!;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: contentIndex };
    out.emit({ type: 'response.output_text.done', ...where, text: part.text, logprobs: [] });
    out.emit({ type: 'response.content_part.done', ...where, part: { ...part } });
    return { ...state, block: undefined };
  }
  if (state.block === 'thinking' && item?.kind === 'reasoning') {
    const where = { item_id: item.id, output_index: item.outputIndex, summary_index: 0 };
    out.emit({ type: 'response.reasoning_summary_text.done', ...where, text: item.text });
    out.emit({
      type: 'response.reasoning_summary_part.done',
      ...where,
      part: { type: 'summary_text', text: item.text },
    });
    return closeItem({ ...state, block: undefined }, 'completed', out);
  }
  if (state.block === 'tool_use' && item?.kind === 'function_call') {
    const args = item.args.length > 0 ? item.args : '{}';
    out.emit({
      type: 'response.function_call_arguments.done',
      item_id: item.id,
      output_index: item.outputIndex,
      name: item.name,
      arguments: args,
    });
    return closeItem({ ...state, item: { ...item, args }, block: undefined }, 'completed', out);
  }
  return { ...state, block: undefined };
}
