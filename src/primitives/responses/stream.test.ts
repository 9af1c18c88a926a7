import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../canonical/types.js';
import { goldenFixtures, reassemble, runTranslator } from '../shared/golden-fixtures.js';
import { UpstreamProtocolError } from '../shared/types.js';
import { parseResponsesResponse } from './response.js';
import { createResponsesStreamTranslator } from './stream.js';

const { context: FIXTURE_CONTEXT, events: fixtureEvents } = goldenFixtures('responses');

async function translate(name: string) {
  return runTranslator(createResponsesStreamTranslator(FIXTURE_CONTEXT), await fixtureEvents(name));
}

const events = (frames: Array<{ data: string }>) =>
  frames.map((frame) => JSON.parse(frame.data) as StreamEvent);

/** The final response object of a fixture stream (its terminal event). */
async function finalResponse(name: string): Promise<unknown> {
  const all = await fixtureEvents(name);
  return (JSON.parse(all.at(-1)?.data ?? '{}') as { response: unknown }).response;
}

describe('responses stream', () => {
  it('translates a text stream; the SDK reassembles exactly the non-streaming mapping', async () => {
    const outcome = await translate('stream-text.sse');
    expect(outcome.complete).toBe(true);
    expect(events(outcome.frames).map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const message = await reassemble(outcome.frames);
    expect(message).toMatchObject(
      parseResponsesResponse(await finalResponse('stream-text.sse'), FIXTURE_CONTEXT),
    );
    expect(outcome.translator.usage()).toEqual({
      input_tokens: 176,
      output_tokens: 42,
      cache_read_input_tokens: 1024,
      cache_creation_input_tokens: 0,
    });
  });

  it('translates a text + tool call stream with block indices equal to final content positions', async () => {
    const outcome = await translate('stream-tool-call.sse');
    const translated = events(outcome.frames);
    expect(translated[6]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_12345xyz', name: 'get_weather', input: {} },
    });
    expect(
      translated
        .filter((event) => event.type === 'content_block_delta' && event.index === 1)
        .map((event) => event.type === 'content_block_delta' && event.delta),
    ).toEqual([
      { type: 'input_json_delta', partial_json: '{"city":' },
      { type: 'input_json_delta', partial_json: '"Paris",' },
      { type: 'input_json_delta', partial_json: '"unit":"c"}' },
    ]);
    const expected = parseResponsesResponse(await finalResponse('stream-tool-call.sse'), FIXTURE_CONTEXT);
    expect(expected.stop_reason).toBe('tool_use');
    expect(await reassemble(outcome.frames)).toMatchObject(expected);
  });

  it('maps response.incomplete to max_tokens with message_stop', async () => {
    const translated = events((await translate('stream-incomplete.sse')).frames);
    expect(translated.at(-2)).toMatchObject({
      type: 'message_delta',
      delta: { stop_reason: 'max_tokens', stop_sequence: null },
    });
    expect(translated.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('maps response.failed to an error event and no message_stop', async () => {
    const outcome = await translate('stream-failed.sse');
    const translated = events(outcome.frames);
    expect(translated.at(-1)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'The server had an error while processing your request.' },
    });
    expect(translated.some((event) => event.type === 'message_stop')).toBe(false);
    expect(outcome.complete).toBe(true);
  });

  it('reports a stream without a terminal event as incomplete, with no message_stop and no usage', async () => {
    const outcome = await translate('stream-truncated.sse');
    expect(outcome.complete).toBe(false);
    expect(
      events(outcome.frames).some((event) => event.type === 'message_stop' || event.type === 'message_delta'),
    ).toBe(false);
    expect(outcome.translator.usage()).toBeUndefined();
  });

  it('maps an error event by its code', () => {
    const translator = createResponsesStreamTranslator(FIXTURE_CONTEXT);
    const frames = translator.push({
      event: 'error',
      data: '{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null,"sequence_number":3}',
    });
    expect(events(frames).at(-1)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });
  });

  it('rejects invalid function-call JSON when the item is done', async () => {
    const translator = createResponsesStreamTranslator(FIXTURE_CONTEXT);
    const item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '' };
    translator.push({
      data: JSON.stringify({
        type: 'response.created',
        sequence_number: 0,
        response: { id: 'resp_1', output: [] },
      }),
    });
    translator.push({
      data: JSON.stringify({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item }),
    });
    translator.push({
      data: JSON.stringify({
        type: 'response.function_call_arguments.delta',
        sequence_number: 2,
        item_id: 'fc_1',
        output_index: 0,
        delta: '{"a":',
      }),
    });
    const done = {
      type: 'response.output_item.done',
      sequence_number: 3,
      output_index: 0,
      item: { ...item, arguments: '{"a":' },
    };
    expect(() => translator.push({ data: JSON.stringify(done) })).toThrow(UpstreamProtocolError);
  });

  it('starts with message_start even when response.created is missing, and catches up arguments given only on done', () => {
    const translator = createResponsesStreamTranslator(FIXTURE_CONTEXT);
    const item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"a":1}' };
    const frames = translator.push({
      data: JSON.stringify({ type: 'response.output_item.done', sequence_number: 0, output_index: 0, item }),
    });
    expect(events(frames)).toEqual([
      expect.objectContaining({ type: 'message_start' }),
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
      { type: 'content_block_stop', index: 0 },
    ]);
  });
});
