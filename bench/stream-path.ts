/**
 * CPU per stream of the stream path's own work, in one process (no sockets, no ledger), so the
 * figure does not move with the machine's load the way the HTTP benchmark's does:
 *   - translate: a 20-delta vendora answer (one upstream chunk, like the simulator's) to client text,
 *     by decoding every event, translating and encoding it (the path before issue 16's second
 *     round, still used for translated wires) and by forwarding the content events' bytes;
 *   - the same answer on the chat wire translated to vendora events (messages -> chat-completions),
 *     read by the spec decoder and by the fast reader, and its canonical events written as chat
 *     chunks as they are translated (the /v1/chat/completions face to the same target);
 *   - bookkeeping: what each stream set up and tore down around it (a lease-renewal interval and an
 *     AbortController chained to the client's signal) against one shared set of open attempts.
 * Asserts that both translations write the same text. Run: node --import tsx bench/stream-path.ts
 */
import type { StreamEvent } from '../src/canonical/types.js';
import { ChatChunkWriter } from '../src/primitives/chat-completions/outbound-stream.js';
import { createChatStreamTranslator } from '../src/primitives/chat-completions/stream.js';
import { createMessagesStreamTranslator } from '../src/primitives/messages/stream.js';
import {
  createFastSseDecoder,
  createSseDecoder,
  createSseForwarder,
  encodeFrame,
  encodeSseEvent,
} from '../src/primitives/shared/sse.js';
import type { SseEvent, TranslateContext } from '../src/primitives/shared/types.js';

const CONTEXT: TranslateContext = { upstreamModel: 'sim-1', responseModel: 'bench', messageId: 'msg_BENCH' };
const DELTAS = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PER_ROUND = Number(process.env.BENCH_STREAMS ?? 20_000);

function upstreamBody(): Buffer {
  const event = (name: string, data: unknown) => encodeSseEvent(name, JSON.stringify(data));
  let text = event('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_sim',
      type: 'message',
      role: 'assistant',
      model: 'sim-1',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 260, output_tokens: 1 },
    },
  });
  text += event('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  });
  text += event('ping', { type: 'ping' });
  for (let index = 0; index < DELTAS; index++)
    text += event('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'word word ' },
    });
  text += event('content_block_stop', { type: 'content_block_stop', index: 0 });
  text += event('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 40 },
  });
  text += event('message_stop', { type: 'message_stop' });
  return Buffer.from(text);
}

const BODY = upstreamBody();

function decodeTranslateEncode(): string {
  const translator = createMessagesStreamTranslator(CONTEXT);
  let text = '';
  const decoder = createSseDecoder((event: SseEvent) => {
    for (const frame of translator.push(event)) text += encodeFrame(frame);
  });
  decoder.feed(BODY);
  decoder.end();
  if (!translator.end().complete || translator.usage()?.output_tokens !== 40) throw new Error('incomplete');
  return text;
}

function forward(): string {
  const translator = createMessagesStreamTranslator(CONTEXT);
  let text = '';
  const forwarder = createSseForwarder({
    forwards: (name) => translator.forwards!(name),
    raw: (raw) => {
      text += raw;
    },
    event: (event) => {
      for (const frame of translator.push(event)) text += encodeFrame(frame);
    },
  });
  forwarder.feed(BODY);
  forwarder.end();
  if (!translator.end().complete || translator.usage()?.output_tokens !== 40) throw new Error('incomplete');
  return text;
}

const client = new AbortController();

function timerAndAbortPerStream(): void {
  const upstream = new AbortController();
  const onGone = () => upstream.abort();
  client.signal.addEventListener('abort', onGone, { once: true });
  void upstream.signal;
  const renew = setInterval(() => undefined, 100_000);
  renew.unref();
  clearInterval(renew);
  client.signal.removeEventListener('abort', onGone);
}

const open = new Set<object>();

function sharedSet(): void {
  const attempt = {};
  open.add(attempt);
  open.delete(attempt);
}

function microsPerStream(work: () => unknown): number {
  const started = process.cpuUsage();
  for (let index = 0; index < PER_ROUND; index++) work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / PER_ROUND;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The same answer on the chat wire (data-only chunks, a usage chunk, `[DONE]`), as the simulator sends it. */
function chatUpstreamBody(): Buffer {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    encodeSseEvent(
      undefined,
      JSON.stringify({
        id: 'chatcmpl-sim',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'sim-chat-1',
        choices,
        usage,
      }),
    );
  const choice = (delta: unknown, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  let text = chunk([choice({ role: 'assistant', content: '' })]);
  for (let index = 0; index < DELTAS; index++) text += chunk([choice({ content: 'word word ' })]);
  text += chunk([choice({}, 'stop')]);
  text += chunk([], { prompt_tokens: 260, completion_tokens: 20, total_tokens: 280 });
  return Buffer.from(`${text}data: [DONE]\n\n`);
}
const CHAT_BODY = chatUpstreamBody();

/** messages -> chat-completions: the chat stream decoded by `decoder`, translated, encoded as vendora events. */
function chatToMessages(decoder: typeof createSseDecoder): string {
  const translator = createChatStreamTranslator(CONTEXT, {} as never);
  let out = '';
  const reader = decoder((event) => {
    for (const frame of translator.push(event)) out += encodeFrame(frame);
  });
  reader.feed(CHAT_BODY);
  reader.end();
  for (const frame of translator.end().frames) out += encodeFrame(frame);
  return out;
}

const CANONICAL_TEXT = chatToMessages(createSseDecoder);

/** /v1/chat/completions to the chat target: the chat stream's canonical events written as chat chunks. */
function chatToChat(): string {
  const translator = createChatStreamTranslator(CONTEXT, {} as never);
  const writer = new ChatChunkWriter(
    { id: 'chatcmpl-1', created: 1_700_000_000, model: 'bench-chat' },
    true,
    () => ({
      message: '',
      type: 'server_error',
      param: null,
      code: null,
    }),
  );
  let out = '';
  const reader = createFastSseDecoder((event) => {
    for (const canonical of translator.pushEvents(event)) out += writer.event(canonical);
  });
  reader.feed(CHAT_BODY);
  reader.end();
  for (const canonical of translator.endEvents().events) out += writer.event(canonical);
  return out;
}

/** The same chunks written from the canonical text (what the face's output must equal). */
function canonicalTextToChat(): string {
  const writer = new ChatChunkWriter(
    { id: 'chatcmpl-1', created: 1_700_000_000, model: 'bench-chat' },
    true,
    () => ({
      message: '',
      type: 'server_error',
      param: null,
      code: null,
    }),
  );
  let out = '';
  const reader = createSseDecoder((sse) => {
    out += writer.event(JSON.parse(sse.data) as StreamEvent);
  });
  reader.feed(CANONICAL_TEXT);
  reader.end();
  return out;
}

if (decodeTranslateEncode() !== forward()) throw new Error('the two paths write different text');
if (chatToMessages(createFastSseDecoder) !== CANONICAL_TEXT)
  throw new Error('the two chat readers write different text');
if (chatToChat() !== canonicalTextToChat())
  throw new Error('the chat face writes other chunks than the canonical text gives');
const cases: Array<[string, () => unknown]> = [
  ['translate: decode, translate, encode every event', decodeTranslateEncode],
  ['translate: forward the content events', forward],
  ['chat wire -> vendora events, spec decoder', () => chatToMessages(createSseDecoder)],
  ['chat wire -> vendora events, fast reader', () => chatToMessages(createFastSseDecoder)],
  ['chat wire -> chat chunks (/v1/chat/completions)', chatToChat],
  ['bookkeeping: interval + AbortController per stream', timerAndAbortPerStream],
  ['bookkeeping: one shared set of open attempts', sharedSet],
];
for (const [, work] of cases) microsPerStream(work); // warm-up (JIT)
const results = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let round = 0; round < ROUNDS; round++)
  for (const [name, work] of cases) results.get(name)!.push(microsPerStream(work));
process.stdout.write(
  `CPU per stream (median of ${ROUNDS} rounds of ${PER_ROUND} streams; ${BODY.length} upstream bytes, ${DELTAS} deltas)\n`,
);
for (const [name, values] of results)
  process.stdout.write(`  ${name.padEnd(52)} ${median(values).toFixed(2).padStart(7)} us\n`);
