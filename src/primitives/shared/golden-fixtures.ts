/**
 * Golden fixture helpers for the primitives' tests (not used at run time). Each primitive keeps its
 * fixtures in its own `__fixtures__/` folder; this module only reads them, so no primitive imports
 * another. The per-primitive translate context lives here because the fixtures on disk are written
 * against it.
 */
import { readFileSync } from 'node:fs';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { readSse } from './sse.js';
import type { ClientFrame, SseEvent, StreamTranslator, TranslateContext } from './types.js';

const FIXTURE_CONTEXTS = {
  messages: {
    upstreamModel: 'vendora-upstream-1-20260101',
    responseModel: 'claude-alias-fast',
    messageId: 'msg_GATEWAY0000000000000000000',
  },
  'chat-completions': {
    upstreamModel: 'gpt-test-1',
    responseModel: 'alias-chat',
    messageId: 'msg_01FIXTURE',
  },
  responses: {
    upstreamModel: 'gpt-upstream-1',
    responseModel: 'gpt-alias',
    messageId: 'msg_GATEWAY0000000000000000000',
  },
  'generate-content': {
    upstreamModel: 'gemini-2.5-flash',
    responseModel: 'gemini-alias',
    messageId: 'msg_GATEWAY0000000000000000000',
  },
} as const satisfies Record<string, TranslateContext>;

export type GoldenPrimitive = keyof typeof FIXTURE_CONTEXTS;

/** One primitive's fixture folder. The functions are plain closures, so they can be destructured. */
export interface GoldenFixtures {
  /** The context the fixtures' expected files were written against. */
  readonly context: TranslateContext;
  /** The `__fixtures__/` folder (a file URL ending in a slash). */
  readonly directory: URL;
  text(name: string): string;
  json(name: string): unknown;
  /** The fixture's SSE events, decoded by the project's one decoder from odd-sized byte chunks. */
  events(name: string): Promise<SseEvent[]>;
}

export function goldenFixtures(primitive: GoldenPrimitive): GoldenFixtures {
  const directory = new URL(`../${primitive}/__fixtures__/`, import.meta.url);
  const text = (name: string): string => readFileSync(new URL(name, directory), 'utf8');
  return {
    context: Object.freeze({ ...FIXTURE_CONTEXTS[primitive] }),
    directory,
    text,
    json: (name) => JSON.parse(text(name)),
    events: async (name) => {
      const bytes = readFileSync(new URL(name, directory));
      async function* body(): AsyncGenerator<Uint8Array> {
        // Odd-sized chunks so events and UTF-8 characters straddle chunk boundaries.
        for (let at = 0; at < bytes.length; at += 37) yield bytes.subarray(at, at + 37);
      }
      const events: SseEvent[] = [];
      for await (const event of readSse(body())) events.push(event);
      return events;
    },
  };
}

export interface StreamOutcome {
  frames: ClientFrame[];
  complete: boolean;
  translator: StreamTranslator;
}

/** Feeds every event to the translator, then ends it. */
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
