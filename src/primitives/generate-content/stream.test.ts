import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../canonical/types.js';
import { goldenFixtures, reassemble, runTranslator } from '../shared/golden-fixtures.js';
import { createGenerateContentStreamTranslator } from './stream.js';

const { context: FIXTURE_CONTEXT, events: fixtureEvents } = goldenFixtures('generate-content');

async function translate(name: string) {
  return runTranslator(createGenerateContentStreamTranslator(FIXTURE_CONTEXT), await fixtureEvents(name));
}

const events = (frames: Array<{ data: string }>) =>
  frames.map((frame) => JSON.parse(frame.data) as StreamEvent);
const USAGE = {
  input_tokens: 52,
  output_tokens: 819,
  cache_read_input_tokens: 2048,
  cache_creation_input_tokens: 0,
};

describe('generate-content stream', () => {
  it('accumulates text into one block and finishes on the finishReason chunk with the last usage', async () => {
    const outcome = await translate('stream-text.sse');
    expect(outcome.complete).toBe(true);
    const translated = events(outcome.frames);
    expect(translated).toEqual([
      expect.objectContaining({ type: 'message_start' }),
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'There are **3** "r"s in' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' strawberry.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: USAGE },
      { type: 'message_stop' },
    ]);
    expect(translated[0]).toMatchObject({
      message: {
        id: FIXTURE_CONTEXT.messageId,
        model: 'gemini-alias',
        usage: { input_tokens: 52, cache_read_input_tokens: 2048 },
      },
    });
    expect(outcome.translator.usage()).toEqual(USAGE);
    const message = await reassemble(outcome.frames);
    expect(message).toMatchObject({
      content: [{ type: 'text', text: 'There are **3** "r"s in strawberry.' }],
      stop_reason: 'end_turn',
      usage: USAGE,
    });
  });

  it('reports a stream without finishReason as incomplete and sends no message_stop', async () => {
    const outcome = await translate('stream-truncated.sse');
    expect(outcome.complete).toBe(false);
    expect(
      events(outcome.frames).some((event) => event.type === 'message_stop' || event.type === 'message_delta'),
    ).toBe(false);
    // The cumulative usage seen so far is still available to the ledger.
    expect(outcome.translator.usage()).toMatchObject({ output_tokens: 816 });
  });

  it('maps a prompt-block chunk to a refusal with empty content', async () => {
    const outcome = await translate('stream-prompt-blocked.sse');
    expect(outcome.complete).toBe(true);
    expect(await reassemble(outcome.frames)).toMatchObject({
      content: [],
      stop_reason: 'refusal',
      usage: { input_tokens: 9 },
    });
  });

  it('maps a mid-stream error object to an error event without message_stop', async () => {
    const outcome = await translate('stream-error.sse');
    const translated = events(outcome.frames);
    expect(translated.at(-1)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'The model is overloaded. Please try again later.' },
    });
    expect(translated.some((event) => event.type === 'message_stop')).toBe(false);
  });

  it('keeps updating usage from a chunk after the finish chunk', () => {
    const translator = createGenerateContentStreamTranslator(FIXTURE_CONTEXT);
    const chunk = (body: unknown) => translator.push({ data: JSON.stringify(body) });
    chunk({
      candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3 },
    });
    expect(chunk({ usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } })).toEqual([]);
    expect(translator.usage()).toMatchObject({ input_tokens: 3, output_tokens: 1 });
    expect(translator.end().complete).toBe(true);
  });
});
