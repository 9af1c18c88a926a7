/**
 * Output items while the outbound stream builds them, and the emitter that numbers the events
 * (helpers of outbound-stream.ts).
 */
import type { OutputItem, OutputTextPart } from './outbound-object.js';
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
