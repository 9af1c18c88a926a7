/** Golden fixture helpers for the tests of this primitive (not used at run time). */
import { readFileSync } from 'node:fs';
import { readSse } from '../shared/sse.js';
import type { ClientFrame, SseEvent, TranslateContext } from '../shared/types.js';
import { createMessagesStreamTranslator } from './stream.js';

export const FIXTURE_CONTEXT: TranslateContext = Object.freeze({
  upstreamModel: 'vendora-upstream-1-20260101',
  responseModel: 'claude-alias-fast',
  messageId: 'msg_GATEWAY0000000000000000000',
});

const DIRECTORY = new URL('./__fixtures__/', import.meta.url);

export function fixtureText(name: string): string {
  return readFileSync(new URL(name, DIRECTORY), 'utf8');
}

export function fixtureJson(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

export async function fixtureEvents(name: string): Promise<SseEvent[]> {
  const bytes = readFileSync(new URL(name, DIRECTORY));
  async function* body(): AsyncGenerator<Uint8Array> {
    // Odd-sized chunks so events and UTF-8 characters straddle chunk boundaries.
    for (let at = 0; at < bytes.length; at += 37) yield bytes.subarray(at, at + 37);
  }
  const events: SseEvent[] = [];
  for await (const event of readSse(body())) events.push(event);
  return events;
}

export interface StreamOutcome {
  frames: ClientFrame[];
  usage: unknown;
  complete: boolean;
}

export async function translateFixtureStream(name: string): Promise<StreamOutcome> {
  const translator = createMessagesStreamTranslator(FIXTURE_CONTEXT);
  const frames: ClientFrame[] = [];
  for (const event of await fixtureEvents(name)) frames.push(...translator.push(event));
  const end = translator.end();
  frames.push(...end.frames);
  return { frames, usage: translator.usage() ?? null, complete: end.complete };
}
