/** Golden fixture helpers for the tests of this primitive (not used at run time). */
import { readFileSync } from 'node:fs';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { readSse } from '../shared/sse.js';
import type { ClientFrame, SseEvent, StreamTranslator, TranslateContext } from '../shared/types.js';

export const FIXTURE_CONTEXT: TranslateContext = Object.freeze({
  upstreamModel: 'gemini-2.5-flash',
  responseModel: 'gemini-alias',
  messageId: 'msg_GATEWAY0000000000000000000',
});

const DIRECTORY = new URL('./__fixtures__/', import.meta.url);

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, DIRECTORY), 'utf8');
}

export function fixtureJson(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

/** The fixture's SSE events, decoded by the project's one decoder from odd-sized byte chunks. */
export async function fixtureEvents(name: string): Promise<SseEvent[]> {
  const bytes = readFileSync(new URL(name, DIRECTORY));
  async function* body(): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < bytes.length; at += 37) yield bytes.subarray(at, at + 37);
  }
  const events: SseEvent[] = [];
  for await (const event of readSse(body())) events.push(event);
  return events;
}

export interface StreamOutcome {
  frames: ClientFrame[];
  complete: boolean;
  translator: StreamTranslator;
}

export function runTranslator(translator: StreamTranslator, events: SseEvent[]): StreamOutcome {
  const frames = events.flatMap((event) => translator.push(event));
  const end = translator.end();
  return { frames: [...frames, ...end.frames], complete: end.complete, translator };
}

/** Reassembles client frames with the vendora SDK's own accumulator (MessageStream). */
export function reassemble(frames: ClientFrame[]): Promise<Message> {
  const text = frames.map((frame) => `${frame.data}\n`).join('');
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
  return MessageStream.fromReadableStream(readable).finalMessage();
}
