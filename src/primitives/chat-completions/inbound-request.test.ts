import { describe, expect, it } from 'vitest';
import { ChatInputError, chatRequestToCanonical } from './inbound-request.js';

const OPTIONS = { defaultMaxTokens: 4096 };
const base = (extra: Record<string, unknown> = {}) => ({
  model: 'alias',
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
});

function refusal(body: unknown): ChatInputError {
  try {
    chatRequestToCanonical(body, OPTIONS);
  } catch (error) {
    expect(error).toBeInstanceOf(ChatInputError);
    return error as ChatInputError;
  }
  throw new Error('expected a refusal');
}

describe('chat request -> canonical', () => {
  it('maps every role: system and developer to system, tool results before the next user text', () => {
    const { request } = chatRequestToCanonical(
      {
        model: 'alias',
        max_tokens: 50,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Paris"}' },
              },
              { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
          { role: 'user', content: 'And tomorrow?' },
        ],
      },
      OPTIONS,
    );
    expect(request.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use metric units.' },
    ]);
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '21C' },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ]);
  });

  it('drops empty system texts (the messages wire refuses an empty text block)', () => {
    const { request } = chatRequestToCanonical(
      base({
        messages: [
          { role: 'system', content: '' },
          { role: 'user', content: 'Hi' },
        ],
      }),
      OPTIONS,
    );
    expect(request.system).toBeUndefined();
  });

  it('maps image parts: data URLs to base64 images, other URLs to url images', () => {
    const { request } = chatRequestToCanonical(
      base({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA', detail: 'low' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
        ],
      }),
      OPTIONS,
    );
    expect(request.messages[0]!.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
    ]);
  });

  it('bounds the output: max_completion_tokens or max_tokens, the larger of both, else the alias default', () => {
    expect(chatRequestToCanonical(base({ max_completion_tokens: 77 }), OPTIONS)).toMatchObject({
      request: { max_tokens: 77 },
      hasTokenBound: true,
    });
    expect(
      chatRequestToCanonical(base({ max_tokens: 10, max_completion_tokens: 70 }), OPTIONS).request.max_tokens,
    ).toBe(70);
    expect(chatRequestToCanonical(base({ max_tokens: null }), { defaultMaxTokens: 333 })).toMatchObject({
      request: { max_tokens: 333 },
      hasTokenBound: false,
    });
    expect(refusal(base({ max_tokens: 0 })).param).toBe('max_tokens');
  });

  it('maps sampling, stop, tools, tool_choice, parallel_tool_calls, formats, effort and streaming', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const parsed = chatRequestToCanonical(
      base({
        temperature: 0.4,
        top_p: 0.9,
        stop: 'END',
        tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: schema } }],
        tool_choice: 'required',
        parallel_tool_calls: false,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
        reasoning_effort: 'minimal',
        stream: true,
        stream_options: { include_usage: true },
        user: 'u-1',
        store: false,
        n: 1,
      }),
      OPTIONS,
    );
    expect(parsed.request).toMatchObject({
      temperature: 0.4,
      top_p: 0.9,
      stop_sequences: ['END'],
      tools: [{ name: 'f', description: 'd', input_schema: schema }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      output_config: { format: { type: 'json_schema', schema }, effort: 'low' },
      stream: true,
    });
    expect(parsed.includeUsage).toBe(true);
    expect(parsed.chatOnly).toEqual([]);
    expect(
      chatRequestToCanonical(
        base({
          tools: [{ type: 'function', function: { name: 'f' } }],
          tool_choice: { type: 'function', function: { name: 'f' } },
        }),
        OPTIONS,
      ).request,
    ).toMatchObject({
      tools: [{ name: 'f', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'f' },
    });
  });

  it('lists what only the chat wire carries (seed, penalties, json_object, a temperature above 1)', () => {
    const parsed = chatRequestToCanonical(
      base({ seed: 1, presence_penalty: 0.5, temperature: 1.5, response_format: { type: 'json_object' } }),
      OPTIONS,
    );
    expect(parsed.chatOnly.map((field) => field.param)).toEqual([
      'seed',
      'presence_penalty',
      'temperature',
      'response_format',
    ]);
    expect(parsed.request.temperature).toBe(1);
    expect(parsed.request.output_config).toBeUndefined();
  });

  it.each([
    [base({ n: 2 }), 'n'],
    [base({ frobnicate: true }), 'frobnicate'],
    [base({ logprobs: true }), 'logprobs'],
    [base({ functions: [] }), 'functions'],
    [base({ modalities: ['text', 'audio'] }), 'modalities'],
    [base({ messages: [] }), 'messages'],
    [base({ messages: [{ role: 'function', content: 'x' }] }), 'messages[0].role'],
    [
      base({ messages: [{ role: 'user', content: [{ type: 'input_audio' }] }] }),
      'messages[0].content[0].type',
    ],
    [
      base({
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }],
          },
        ],
      }),
      'messages[0].tool_calls[0].function.arguments',
    ],
    [base({ temperature: 3 }), 'temperature'],
    [
      base({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }),
      'response_format.json_schema.schema',
    ],
    [base({ tools: [{ type: 'custom', custom: { name: 'x' } }] }), 'tools[0].type'],
    [
      base({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'sometimes' }),
      'tool_choice',
    ],
    [base({ reasoning_effort: 'extreme' }), 'reasoning_effort'],
    [base({ stop: [1] }), 'stop'],
    [base({ stream: 'yes' }), 'stream'],
  ])('refuses %j naming %s', (body, param) => {
    expect(refusal(body).param).toBe(param);
  });

  it('accepts the harmless values of refused fields (logprobs false, text-only modalities)', () => {
    expect(() =>
      chatRequestToCanonical(base({ logprobs: false, modalities: ['text'] }), OPTIONS),
    ).not.toThrow();
  });
});
