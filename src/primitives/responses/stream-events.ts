/**
 * Upstream responses stream events, decoded from parsed SSE events into the few shapes the stream
 * state machine handles. Every other event type (in_progress, queued, *.done text events,
 * reasoning summaries, annotations, built-in tool progress, ...) decodes to undefined: it carries
 * nothing the canonical stream needs. Field types are checked here so handlers can trust them.
 */
import { type SseEvent, UpstreamProtocolError } from '../shared/types.js';
import { isRecord } from './response.js';
import type { WireError, WireOutputItem, WireResponse } from './wire-types.js';

export type ResponsesStreamEvent =
  | { type: 'response.created'; response: WireResponse }
  | { type: 'response.output_item.added'; outputIndex: number; item: WireOutputItem }
  | {
      type: 'response.content_part.added';
      outputIndex: number;
      contentIndex: number;
      partType: string;
      text: string;
    }
  | { type: 'response.output_text.delta'; outputIndex: number; contentIndex: number; delta: string }
  | { type: 'response.refusal.delta'; outputIndex: number; contentIndex: number; delta: string }
  | { type: 'response.content_part.done'; outputIndex: number; contentIndex: number }
  | { type: 'response.function_call_arguments.delta'; outputIndex: number; delta: string }
  | { type: 'response.function_call_arguments.done'; outputIndex: number; arguments: string }
  | { type: 'response.output_item.done'; outputIndex: number; item: WireOutputItem }
  | { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response: WireResponse }
  | { type: 'error'; error: WireError };

export function decodeResponsesEvent(event: SseEvent): ResponsesStreamEvent | undefined {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new UpstreamProtocolError('responses stream: an event is not valid JSON');
  }
  if (!isRecord(data)) throw new UpstreamProtocolError('responses stream: an event is not a JSON object');
  const type = typeof data.type === 'string' ? data.type : event.event;
  switch (type) {
    case 'response.created':
    case 'response.completed':
    case 'response.incomplete':
    case 'response.failed':
      return { type, response: record(data.response, `${type}.response`) as WireResponse };
    case 'response.output_item.added':
    case 'response.output_item.done':
      return {
        type,
        outputIndex: index(data.output_index),
        item: record(data.item, `${type}.item`) as WireOutputItem,
      };
    case 'response.content_part.added': {
      const part = record(data.part, `${type}.part`);
      const text =
        typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
      const partType = typeof part.type === 'string' ? part.type : '';
      return {
        type,
        outputIndex: index(data.output_index),
        contentIndex: index(data.content_index),
        partType,
        text,
      };
    }
    case 'response.output_text.delta':
    case 'response.refusal.delta':
      return {
        type,
        outputIndex: index(data.output_index),
        contentIndex: index(data.content_index),
        delta: text(data.delta),
      };
    case 'response.content_part.done':
      return { type, outputIndex: index(data.output_index), contentIndex: index(data.content_index) };
    case 'response.function_call_arguments.delta':
      return { type, outputIndex: index(data.output_index), delta: text(data.delta) };
    case 'response.function_call_arguments.done':
      return { type, outputIndex: index(data.output_index), arguments: text(data.arguments) };
    case 'error':
      // The wire puts code and message at the top level; some compatible upstreams nest them.
      return { type, error: (isRecord(data.error) ? data.error : data) as WireError };
    default:
      return undefined;
  }
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new UpstreamProtocolError(`responses stream: ${what} is not an object`);
  return value;
}

function index(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new UpstreamProtocolError(
      'responses stream: an output or content index is not a non-negative integer',
    );
  }
  return value;
}

function text(value: unknown): string {
  if (typeof value !== 'string') throw new UpstreamProtocolError('responses stream: a delta is not a string');
  return value;
}
