import { describe, expect, it } from 'vitest';
import { type TranslateContext, UpstreamProtocolError } from '../shared/types.js';
import { parseChatResponse } from './response.js';
import { canonicalUsage } from './usage.js';

const context: TranslateContext = {
  upstreamModel: 'up-model',
  responseModel: 'alias',
  messageId: 'msg_01TEST',
};

function completion(message: Record<string, unknown>, finishReason: string | null = 'stop', usage?: unknown) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1763700000,
    model: 'up-model-2026',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, ...message },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    ...(usage === undefined ? {} : { usage }),
  };
}

function toolCall(argumentsText: string, id: string | null = 'call_1') {
  return {
    ...(id === null ? {} : { id }),
    type: 'function',
    function: { name: 'lookup', arguments: argumentsText },
  };
}

describe('parseChatResponse', () => {
  it('uses the injected id and model and puts text before tool calls', () => {
    const message = parseChatResponse(
      completion({ content: 'Hi', tool_calls: [toolCall('{"q":"a"}')] }, 'tool_calls'),
      context,
    );
    expect(message).toMatchObject({
      id: 'msg_01TEST',
      model: 'alias',
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
    expect(message.content).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'a' } },
    ]);
  });

  it.each([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
    ['eos', 'end_turn'],
    [null, 'end_turn'],
  ])('maps finish_reason %s to %s', (finishReason, stopReason) => {
    expect(parseChatResponse(completion({ content: 'x' }, finishReason), context).stop_reason).toBe(
      stopReason,
    );
  });

  it('reports tool_use when tool calls come with finish_reason stop', () => {
    expect(parseChatResponse(completion({ tool_calls: [toolCall('{}')] }, 'stop'), context).stop_reason).toBe(
      'tool_use',
    );
  });

  it('splits cached tokens out of prompt_tokens', () => {
    const usage = {
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920 },
    };
    expect(parseChatResponse(completion({ content: 'x' }, 'stop', usage), context).usage).toEqual({
      input_tokens: 86,
      output_tokens: 300,
      cache_read_input_tokens: 1920,
      cache_creation_input_tokens: 0,
    });
  });

  it('splits cache writes out too and never goes below zero', () => {
    expect(
      canonicalUsage({
        prompt_tokens: 100,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      }),
    ).toEqual({
      input_tokens: 10,
      output_tokens: 1,
      cache_read_input_tokens: 60,
      cache_creation_input_tokens: 30,
    });
    expect(
      canonicalUsage({ prompt_tokens: 5, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 9 } })
        .input_tokens,
    ).toBe(0);
    expect(canonicalUsage({ prompt_tokens: 5, prompt_tokens_details: null })).toMatchObject({
      input_tokens: 5,
      output_tokens: 0,
    });
  });

  it('answers zero usage when the upstream sent none', () => {
    expect(parseChatResponse(completion({ content: 'x' }), context).usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it.each([
    ['invalid JSON', '{"q": '],
    ['an array', '[1,2]'],
    ['a string', '"text"'],
    ['null', 'null'],
  ])('refuses tool arguments that are %s', (_name, argumentsText) => {
    expect(() =>
      parseChatResponse(completion({ tool_calls: [toolCall(argumentsText)] }, 'tool_calls'), context),
    ).toThrow(UpstreamProtocolError);
  });

  it('reads empty arguments as no arguments and derives an id when the upstream sent none', () => {
    const message = parseChatResponse(
      completion({ tool_calls: [toolCall('', null)] }, 'tool_calls'),
      context,
    );
    expect(message.content).toEqual([{ type: 'tool_use', id: 'toolu_01TEST_0', name: 'lookup', input: {} }]);
  });

  it('carries a refusal as text with stop_reason refusal', () => {
    const message = parseChatResponse(completion({ refusal: 'No.' }, 'stop'), context);
    expect(message.content).toEqual([{ type: 'text', text: 'No.' }]);
    expect(message.stop_reason).toBe('refusal');
  });

  it.each([
    ['no body', undefined],
    ['a string body', 'oops'],
    ['no choices', { id: 'x' }],
    ['empty choices', { choices: [] }],
    ['a null choice', { choices: [null] }],
  ])('refuses a body with %s', (_name, body) => {
    expect(() => parseChatResponse(body, context)).toThrow(UpstreamProtocolError);
  });

  it('tolerates a choice without a message and unknown extra fields', () => {
    const message = parseChatResponse(
      { choices: [{ finish_reason: 'stop', extra: 1 }], novel: true },
      context,
    );
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe('end_turn');
  });
});
