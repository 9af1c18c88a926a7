/**
 * The stream and non-stream translations must agree: events are reassembled with the vendora SDK's
 * own accumulator (MessageStream) and compared with parseChatResponse of the completion the same
 * chunks describe. The property test splits and interleaves tool-call arguments at random.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageResponse } from '../../canonical/types.js';
import { reassemble, runTranslator } from '../shared/golden-fixtures.js';
import type { TranslateContext } from '../shared/types.js';
import { parseChatResponse } from './response.js';
import { createChatStreamTranslator } from './stream.js';
import type { ChatCompletion, ChatCompletionChunk } from './wire-types.js';

const context: TranslateContext = {
  upstreamModel: 'up-model',
  responseModel: 'alias',
  messageId: 'msg_01TEST',
};
const STREAM_FIXTURES = join(import.meta.dirname, '__fixtures__', 'stream');

/** Translate the frames and let the vendora SDK accumulate the events into a final message. */
async function streamedMessage(frames: string[]): Promise<MessageResponse> {
  const translator = createChatStreamTranslator(context, { tokenField: 'max_tokens' });
  const { frames: clientFrames } = runTranslator(
    translator,
    frames.map((data) => ({ data })),
  );
  const final = JSON.parse(JSON.stringify(await reassemble(clientFrames)));
  delete final.parsed_output;
  return final as MessageResponse;
}

/** The non-streaming completion a chunk sequence describes (content joined, calls by index). */
function completionOf(frames: string[]): ChatCompletion {
  let content = '';
  let finishReason: string | null = null;
  let usage: ChatCompletion['usage'];
  const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for (const data of frames) {
    if (data === '[DONE]') continue;
    const chunk = JSON.parse(data) as ChatCompletionChunk;
    if (chunk.usage !== null && chunk.usage !== undefined) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    content += choice?.delta?.content ?? '';
    for (const delta of choice?.delta?.tool_calls ?? []) {
      const index = delta.index ?? 0;
      calls[index] ??= {
        id: delta.id ?? '',
        type: 'function',
        function: { name: delta.function?.name ?? '', arguments: '' },
      };
      calls[index].function.arguments += delta.function?.arguments ?? '';
    }
    finishReason = choice?.finish_reason ?? finishReason;
  }
  const message = { role: 'assistant', content: content.length > 0 ? content : null, tool_calls: calls };
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage,
  };
}

describe('stream and non-stream translations agree', () => {
  const fixtures = readdirSync(STREAM_FIXTURES).filter((file) => file.endsWith('.chunks.json'));

  it.each(fixtures)('for %s', async (file) => {
    const chunks = JSON.parse(readFileSync(join(STREAM_FIXTURES, file), 'utf8')) as unknown[];
    const frames = chunks.map((chunk) => (chunk === '[DONE]' ? chunk : JSON.stringify(chunk)));
    expect(await streamedMessage(frames)).toEqual(parseChatResponse(completionOf(frames), context));
  });
});

interface PlannedCall {
  input: Record<string, unknown>;
  cuts: number[];
}

/** Split each call's arguments at the cut points and interleave the fragments by the schedule. */
function plannedFrames(calls: PlannedCall[], schedule: number[]): string[] {
  const queues = calls.map((call, index) => {
    const text = JSON.stringify(call.input);
    const cuts = [...new Set(call.cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
    const bounds = [0, ...cuts, text.length];
    const fragments = bounds.slice(1).map((end, position) => text.slice(bounds[position], end));
    const header = {
      index,
      id: `call_${index}`,
      type: 'function',
      function: { name: `tool_${index}`, arguments: '' },
    };
    return [header, ...fragments.map((fragment) => ({ index, function: { arguments: fragment } }))];
  });
  const frames: string[] = [];
  const headerSent = calls.map(() => false);
  for (let turn = 0; ; turn += 1) {
    // A call's header only goes out after the previous call's header, as on the real wire.
    const ready = queues
      .map((queue, index) => ({ queue, index }))
      .filter(({ queue, index }) => queue.length > 0 && (index === 0 || headerSent[index - 1] === true));
    const picked = ready[(schedule[turn] ?? turn) % Math.max(1, ready.length)];
    if (picked === undefined) break;
    headerSent[picked.index] = true;
    const delta = picked.queue.shift();
    frames.push(
      JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [delta] }, finish_reason: null }] }),
    );
  }
  frames.push(JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }));
  frames.push(JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }));
  frames.push('[DONE]');
  return frames;
}

describe('property: random splits and interleavings of tool-call arguments', () => {
  const call = fc.record({
    input: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    cuts: fc.array(fc.nat({ max: 200 }), { maxLength: 8 }),
  });

  it('reassembles the same inputs, in call order, as the non-streaming translation', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        async (calls, schedule) => {
          const frames = plannedFrames(calls, schedule);
          const streamed = await streamedMessage(frames);
          expect(streamed.content).toEqual(
            calls.map((planned, index) => ({
              type: 'tool_use',
              id: `call_${index}`,
              name: `tool_${index}`,
              input: JSON.parse(JSON.stringify(planned.input)),
            })),
          );
          expect(streamed).toEqual(parseChatResponse(completionOf(frames), context));
        },
      ),
      { numRuns: 200 },
    );
  });
});
