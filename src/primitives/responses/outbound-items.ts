/**
 * Output items while the outbound stream builds them, and the emitter that numbers the events
 * (helpers of outbound-stream.ts).
 */
import type { StopReason, Usage } from '../../canonical/types.js';
import { itemId, type OutboundContext, type OutputItem, type OutputTextPart } from './outbound-object.js';
import type { ResponsesServerEvent, ResponsesServerEventBody } from './server-events.js';

export type OpenItem =
  | { kind: 'message'; outputIndex: number; id: string; parts: OutputTextPart[] }
  | { kind: 'reasoning'; outputIndex: number; id: string; text: string }
  | { kind: 'function_call'; outputIndex: number; id: string; callId: string; name: string; args: string };

/** Collects events with their sequence numbers while a handler moves the state. */
export class Emitter {
  readonly events: ResponsesServerEvent[] = [];
  constructor(public sequence: number) {}
  emit(body: ResponsesServerEventBody): void {
    this.events.push({ ...body, sequence_number: this.sequence } as ResponsesServerEvent);
    this.sequence += 1;
  }
}

export function doneItem(item: OpenItem, status: 'in_progress' | 'completed' | 'incomplete'): OutputItem {
  switch (item.kind) {
    case 'message':
      return {
        type: 'message',
        id: item.id,
        role: 'assistant',
        status,
        content: item.parts.map((part) => ({ ...part })),
      };
    case 'reasoning':
      return {
        type: 'reasoning',
        id: item.id,
        summary: status === 'in_progress' ? [] : [{ type: 'summary_text', text: item.text }],
      };
    case 'function_call':
      return functionCallItem(item, status);
    default: {
      const never: never = item;
      throw new Error(`unknown item ${JSON.stringify(never)}`);
    }
  }
}

export function functionCallItem(
  item: Extract<OpenItem, { kind: 'function_call' }>,
  status: 'in_progress' | 'completed' | 'incomplete',
): OutputItem {
  return {
    type: 'function_call',
    id: item.id,
    call_id: item.callId,
    name: item.name,
    arguments: item.args,
    status,
  };
}

export type OpenBlock = 'text' | 'thinking' | 'tool_use' | 'skipped';

export interface Streaming {
  phase: 'streaming';
  sequence: number;
  output: OutputItem[];
  item: OpenItem | undefined;
  block: OpenBlock | undefined;
  stopReason: StopReason | null;
  usage: Usage;
}

export function openItem(
  state: Streaming,
  prefix: 'msg' | 'rs',
  context: OutboundContext,
  out: Emitter,
): Streaming {
  const outputIndex = state.output.length;
  const id = itemId(context, prefix, outputIndex);
  const item: OpenItem =
    prefix === 'msg'
      ? { kind: 'message', outputIndex, id, parts: [] }
      : { kind: 'reasoning', outputIndex, id, text: '' };
  out.emit({
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: doneItem(item, 'in_progress'),
  });
  return { ...state, item };
}

/** Sends output_item.done for the open item (if any) and moves it into the output. */
export function closeItem(state: Streaming, status: 'completed' | 'incomplete', out: Emitter): Streaming {
  const item = state.item;
  if (item === undefined) return state;
  const done = doneItem(item, item.kind === 'function_call' ? 'completed' : status);
  out.emit({ type: 'response.output_item.done', output_index: item.outputIndex, item: done });
  return { ...state, item: undefined, output: [...state.output, done] };
}

/** A stateful wrapper for the gateway core: feed canonical events, then end. */
