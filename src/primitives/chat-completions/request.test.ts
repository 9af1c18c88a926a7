import { describe, expect, it } from 'vitest';
import type { ContentBlockParam, MessagesRequest, ToolChoice } from '../../canonical/types.js';
import type { TranslateContext } from '../shared/types.js';
import { CannotCarryError, chatCannotCarry } from './cannot-carry.js';
import { buildChatRequest } from './request.js';
import type { ChatMessage, ChatRequestBody } from './wire-types.js';

const context: TranslateContext = {
  upstreamModel: 'up-model',
  responseModel: 'alias',
  messageId: 'msg_01TEST',
};
const completionTokens = { tokenField: 'max_completion_tokens' } as const;

function request(extra: Partial<MessagesRequest> = {}): MessagesRequest {
  return { model: 'alias', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...extra };
}

function body(
  input: MessagesRequest,
  tokenField: 'max_tokens' | 'max_completion_tokens' = 'max_completion_tokens',
) {
  return buildChatRequest(input, context, { tokenField }).body as ChatRequestBody;
}

function userBlocks(...blocks: ContentBlockParam[]): MessagesRequest {
  return request({ messages: [{ role: 'user', content: blocks }] });
}

const lookupTool = { name: 'lookup', input_schema: { type: 'object' as const } };

describe('buildChatRequest', () => {
  it('posts to /chat/completions with the upstream model and the configured token field', () => {
    const wire = buildChatRequest(request(), context, { tokenField: 'max_tokens' });
    expect(wire.path).toBe('/chat/completions');
    expect(wire.body).toEqual({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
    });
    expect(body(request())).toMatchObject({ max_completion_tokens: 100 });
    expect(body(request())).not.toHaveProperty('max_tokens');
  });

  it('maps stop_sequences to stop and leaves an empty list out', () => {
    expect(body(request({ stop_sequences: ['END', '###'] })).stop).toEqual(['END', '###']);
    expect(body(request({ stop_sequences: [] }))).not.toHaveProperty('stop');
  });

  it('never sends thinking, top_k, service_tier or metadata', () => {
    const wire = body(
      request({
        thinking: { type: 'disabled' },
        top_k: 5,
        service_tier: 'auto',
        metadata: { user_id: 'u1' },
      }),
    );
    expect(Object.keys(wire).sort()).toEqual(['max_completion_tokens', 'messages', 'model']);
  });

  it('keeps tool ids through a tool round trip and puts tool messages before the user text', () => {
    const messages = body(
      request({
        tools: [lookupTool],
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'functions.lookup:0', name: 'lookup', input: { q: 1 } }],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'functions.lookup:0',
                content: [
                  { type: 'text', text: 'a' },
                  { type: 'text', text: 'b' },
                ],
              },
              { type: 'text', text: 'next' },
            ],
          },
        ],
      }),
    ).messages;
    expect(messages.slice(1)).toEqual<ChatMessage[]>([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'functions.lookup:0', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'functions.lookup:0', content: 'a\nb' },
      { role: 'user', content: 'next' },
    ]);
  });

  it('carries is_error as an "Error: " prefix and empty results as empty text', () => {
    const messages = body(
      userBlocks(
        { type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'boom' },
        { type: 'tool_result', tool_use_id: 't2' },
      ),
    ).messages;
    expect(messages).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'Error: boom' },
      { role: 'tool', tool_call_id: 't2', content: '' },
    ]);
  });

  it('maps base64 images to data URLs and url images to their url', () => {
    const [message] = body(
      userBlocks(
        { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'AAAA' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      ),
    ).messages;
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/webp;base64,AAAA' } },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    });
  });

  it.each<[ToolChoice, unknown]>([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'lookup' },
      { type: 'function', function: { name: 'lookup' } },
    ],
  ])('maps tool_choice %j', (choice, expected) => {
    const wire = body(request({ tools: [lookupTool], tool_choice: choice }));
    expect(wire.tool_choice).toEqual(expected);
    expect(wire).not.toHaveProperty('parallel_tool_calls');
  });

  it('maps disable_parallel_tool_use to parallel_tool_calls false, only with tools', () => {
    const choice: ToolChoice = { type: 'any', disable_parallel_tool_use: true };
    expect(body(request({ tools: [lookupTool], tool_choice: choice })).parallel_tool_calls).toBe(false);
    const withoutTools = body(request({ tool_choice: { type: 'auto', disable_parallel_tool_use: true } }));
    expect(withoutTools).not.toHaveProperty('parallel_tool_calls');
    expect(withoutTools).not.toHaveProperty('tool_choice');
  });

  it('maps effort word for word and format to a strict json_schema named output', () => {
    const schema = { type: 'object', properties: {} };
    const wire = body(
      request({ output_config: { effort: 'xhigh', format: { type: 'json_schema', schema } } }),
    );
    expect(wire.reasoning_effort).toBe('xhigh');
    expect(wire.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema, strict: true },
    });
  });

  it('asks for the usage chunk when streaming', () => {
    expect(body(request({ stream: true }))).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body(request({ stream: false }))).not.toHaveProperty('stream');
  });
});

describe('what chat-completions cannot carry', () => {
  const cases: Array<[string, MessagesRequest, string]> = [
    [
      'an image file source',
      userBlocks({ type: 'image', source: { type: 'file', file_id: 'file_1' } }),
      'messages[0].content[0]',
    ],
    [
      'a PDF document',
      userBlocks({
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' },
      }),
      'messages[0].content[0]',
    ],
    [
      'a text document asking for citations',
      userBlocks({
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'x' },
        citations: { enabled: true },
      }),
      'messages[0].content[0]',
    ],
    [
      'an image inside a tool result',
      userBlocks({
        type: 'tool_result',
        tool_use_id: 't',
        content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }],
      }),
      'messages[0].content[0].content[0]',
    ],
    ['a vendora-defined tool', request({ tools: [{ type: 'bash_20250124', name: 'bash' }] }), 'tools[0]'],
    ['a strict tool', request({ tools: [{ ...lookupTool, strict: true }] }), 'tools[0]'],
    ['a tool name longer than 64', request({ tools: [{ ...lookupTool, name: 'x'.repeat(65) }] }), 'tools[0]'],
    ['tool_choice any without tools', request({ tool_choice: { type: 'any' } }), 'tool_choice'],
    [
      'a prefill',
      request({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'Sure' },
        ],
      }),
      'messages[1]',
    ],
    [
      'thinking in history',
      request({
        messages: [
          { role: 'user', content: 'q' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 't', signature: 's' },
              { type: 'text', text: 'a' },
            ],
          },
          { role: 'user', content: 'more' },
        ],
      }),
      'messages[1].content[0]',
    ],
  ];

  it.each(cases)('refuses %s with the field named, before and during the build', (_name, input, field) => {
    expect(chatCannotCarry(input)).toMatch(new RegExp(`^${field.replace(/[[\].]/g, '\\$&')}: `));
    let thrown: unknown;
    try {
      buildChatRequest(input, context, completionTokens);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CannotCarryError);
    expect((thrown as CannotCarryError).field).toBe(field);
  });

  it('accepts what it can carry', () => {
    expect(
      chatCannotCarry(request({ tools: [lookupTool], tool_choice: { type: 'tool', name: 'lookup' } })),
    ).toBeUndefined();
    expect(
      chatCannotCarry(
        userBlocks({ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }),
      ),
    ).toBeUndefined();
  });
});
