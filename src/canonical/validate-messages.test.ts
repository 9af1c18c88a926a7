import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { type RouteMode, validateCountTokensRequest, validateMessagesRequest } from './validate-messages.js';

const MODES: RouteMode[] = ['portable', 'native'];

function base(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'alias', max_tokens: 4096, messages: [{ role: 'user', content: 'Hello' }], ...extra };
}

function userBlocks(...blocks: unknown[]): Record<string, unknown> {
  return base({ messages: [{ role: 'user', content: blocks }] });
}

function assistantBlocks(...blocks: unknown[]): Record<string, unknown> {
  return base({
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: blocks },
    ],
  });
}

function rejection(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError, the call succeeded');
}

/** Asserts a 400 with `code` whose param is `field` and whose message starts by naming it. */
function expectRejected(run: () => unknown, code: ErrorCode, field: string, wording?: string): GatewayError {
  const error = rejection(run);
  expect(error.code).toBe(code);
  expect(error.status).toBe(400);
  expect(error.options.param).toBe(field);
  expect(error.message).toContain(field);
  if (wording) expect(error.message).toContain(wording);
  return error;
}

describe('rule 1: top-level fields', () => {
  it.each([null, [], 'text', 42, true])('refuses a body that is not a JSON object (%j)', (body) => {
    for (const mode of MODES) {
      const error = rejection(() => validateMessagesRequest(body, mode));
      expect(error.code).toBe('invalid_request');
      expect(error.status).toBe(400);
      expect(error.message).toContain('JSON object');
    }
  });

  it.each(['mcp_servers', 'container', 'fallbacks'])(
    'refuses the deliberate boundary %s in both modes',
    (field) => {
      for (const mode of MODES) {
        expectRejected(
          () => validateMessagesRequest(base({ [field]: field === 'container' ? 'cntr_1' : [] }), mode),
          'unsupported_field',
          field,
          'is not supported by this gateway (deliberate boundary)',
        );
      }
    },
  );

  it.each(['cache_control', 'speed', 'inference_geo', 'betas', 'maxTokens', '__proto__'])(
    'refuses the unknown top-level field %s in both modes',
    (field) => {
      for (const mode of MODES) {
        const body = { ...base(), [field]: { type: 'ephemeral' } };
        expectRejected(
          () => validateMessagesRequest(body, mode),
          'invalid_request',
          field,
          `${field}: unknown field`,
        );
      }
    },
  );

  it('count_tokens: accepts its fields, refuses stream, generation fields and boundaries', () => {
    const body = {
      model: 'alias',
      messages: [{ role: 'user', content: 'Hi' }],
      system: 'Be brief.',
      tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'lookup' },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: { effort: 'high', format: null },
    };
    expect(validateCountTokensRequest(body)).toBe(body);
    expectRejected(
      () => validateCountTokensRequest({ ...body, stream: true }),
      'unsupported_field',
      'stream',
      'count_tokens does not stream',
    );
    for (const field of [
      'max_tokens',
      'stop_sequences',
      'temperature',
      'metadata',
      'service_tier',
      'top_k',
    ]) {
      expectRejected(
        () => validateCountTokensRequest({ ...body, [field]: 1 }),
        'invalid_request',
        field,
        'unknown field',
      );
    }
    expectRejected(
      () => validateCountTokensRequest({ ...body, mcp_servers: [] }),
      'unsupported_field',
      'mcp_servers',
    );
    expectRejected(
      () => validateCountTokensRequest({ messages: body.messages }),
      'invalid_request',
      'model',
      'required',
    );
  });
});

describe('rule 2: shapes of the top-level fields', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['model missing', { model: undefined }, 'model'],
    ['model empty', { model: '' }, 'model'],
    ['model not a string', { model: 7 }, 'model'],
    ['max_tokens missing', { max_tokens: undefined }, 'max_tokens'],
    ['max_tokens zero', { max_tokens: 0 }, 'max_tokens'],
    ['max_tokens fractional', { max_tokens: 1.5 }, 'max_tokens'],
    ['max_tokens a string', { max_tokens: '10' }, 'max_tokens'],
    ['messages missing', { messages: undefined }, 'messages'],
    ['messages empty', { messages: [] }, 'messages'],
    ['messages not an array', { messages: { role: 'user' } }, 'messages'],
    ['message not an object', { messages: ['Hi'] }, 'messages.0'],
    ['message role unknown', { messages: [{ role: 'bot', content: 'Hi' }] }, 'messages.0.role'],
    ['message role missing', { messages: [{ content: 'Hi' }] }, 'messages.0.role'],
    ['message content missing', { messages: [{ role: 'user' }] }, 'messages.0.content'],
    ['message content empty array', { messages: [{ role: 'user', content: [] }] }, 'messages.0.content'],
    ['message content a number', { messages: [{ role: 'user', content: 3 }] }, 'messages.0.content'],
    ['message unknown member', { messages: [{ role: 'user', content: 'Hi', name: 'x' }] }, 'messages.0.name'],
    ['block not an object', { messages: [{ role: 'user', content: ['Hi'] }] }, 'messages.0.content.0'],
    [
      'block without type',
      { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] },
      'messages.0.content.0.type',
    ],
    ['system a number', { system: 5 }, 'system'],
    [
      'system block not text',
      { system: [{ type: 'image', source: { type: 'url', url: 'u' } }] },
      'system.0.type',
    ],
    ['system text without text', { system: [{ type: 'text' }] }, 'system.0.text'],
    ['stream not boolean', { stream: 'yes' }, 'stream'],
    ['stop_sequences not an array', { stop_sequences: 'END' }, 'stop_sequences'],
    ['stop_sequences empty string', { stop_sequences: ['END', ''] }, 'stop_sequences.1'],
    [
      'stop_sequences too many',
      { stop_sequences: Array.from({ length: 65 }, (_, i) => `s${i}`) },
      'stop_sequences',
    ],
    ['temperature above 1', { temperature: 1.5 }, 'temperature'],
    ['temperature below 0', { temperature: -0.1 }, 'temperature'],
    ['top_p above 1', { top_p: 2 }, 'top_p'],
    ['top_k negative', { top_k: -1 }, 'top_k'],
    ['top_k fractional', { top_k: 1.5 }, 'top_k'],
    ['tools not an array', { tools: {} }, 'tools'],
    ['tool not an object', { tools: ['lookup'] }, 'tools.0'],
    [
      'tool type not a string',
      { tools: [{ type: 5, name: 'x', input_schema: { type: 'object' } }] },
      'tools.0.type',
    ],
    [
      'tool name with a space',
      { tools: [{ name: 'get weather', input_schema: { type: 'object' } }] },
      'tools.0.name',
    ],
    [
      'tool name too long',
      { tools: [{ name: 'a'.repeat(129), input_schema: { type: 'object' } }] },
      'tools.0.name',
    ],
    ['tool name missing', { tools: [{ input_schema: { type: 'object' } }] }, 'tools.0.name'],
    ['tool input_schema missing', { tools: [{ name: 'x' }] }, 'tools.0.input_schema'],
    [
      'tool input_schema not object type',
      { tools: [{ name: 'x', input_schema: { type: 'array' } }] },
      'tools.0.input_schema.type',
    ],
    [
      'tool description a number',
      { tools: [{ name: 'x', description: 1, input_schema: { type: 'object' } }] },
      'tools.0.description',
    ],
    [
      'tool names duplicated',
      {
        tools: [
          { name: 'x', input_schema: { type: 'object' } },
          { name: 'x', input_schema: { type: 'object' } },
        ],
      },
      'tools.1.name',
    ],
    ['tool_choice unknown type', { tool_choice: { type: 'required' } }, 'tool_choice.type'],
    ['tool_choice tool without name', { tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    ['tool_choice names no tool', { tool_choice: { type: 'tool', name: 'ghost' } }, 'tool_choice.name'],
    ['tool_choice unknown member', { tool_choice: { type: 'auto', parallel: true } }, 'tool_choice.parallel'],
    [
      'tool_choice none with a flag',
      { tool_choice: { type: 'none', disable_parallel_tool_use: true } },
      'tool_choice.disable_parallel_tool_use',
    ],
    [
      'thinking budget below 1024',
      { thinking: { type: 'enabled', budget_tokens: 1000 } },
      'thinking.budget_tokens',
    ],
    [
      'thinking budget not below max_tokens',
      { thinking: { type: 'enabled', budget_tokens: 4096 } },
      'thinking.budget_tokens',
    ],
    ['thinking budget missing', { thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    ['thinking unknown type', { thinking: { type: 'between_tools' } }, 'thinking.type'],
    ['thinking display unknown', { thinking: { type: 'adaptive', display: 'full' } }, 'thinking.display'],
    [
      'thinking disabled with a budget',
      { thinking: { type: 'disabled', budget_tokens: 2048 } },
      'thinking.budget_tokens',
    ],
    ['metadata user_id a number', { metadata: { user_id: 5 } }, 'metadata.user_id'],
    ['metadata unknown member', { metadata: { session: 'x' } }, 'metadata.session'],
    ['service_tier unknown', { service_tier: 'priority' }, 'service_tier'],
    ['output_config effort unknown', { output_config: { effort: 'extreme' } }, 'output_config.effort'],
    [
      'output_config format type',
      { output_config: { format: { type: 'json_object' } } },
      'output_config.format.type',
    ],
    [
      'output_config format schema missing',
      { output_config: { format: { type: 'json_schema' } } },
      'output_config.format.schema',
    ],
    ['output_config unknown member', { output_config: { verbosity: 'low' } }, 'output_config.verbosity'],
    ['output_config not an object', { output_config: 'high' }, 'output_config'],
  ];

  it.each(cases)('%s -> 400 invalid_request naming it (both modes)', (_label, patch, field) => {
    const body = base(patch);
    for (const key of Object.keys(patch)) if (patch[key] === undefined) delete body[key];
    for (const mode of MODES)
      expectRejected(() => validateMessagesRequest(body, mode), 'invalid_request', field);
  });

  it('names the allowed values of an enum and of a tagged union', () => {
    expect(rejection(() => validateMessagesRequest(base({ service_tier: 'x' }), 'portable')).message).toBe(
      'service_tier: must be one of "auto", "standard_only"',
    );
    expect(
      rejection(() => validateMessagesRequest(base({ tool_choice: { type: 'x' } }), 'native')).message,
    ).toContain('must be one of auto, any, tool, none');
  });

  it('accepts every valid top-level shape in both modes', () => {
    const bodies = [
      base({
        system: 'Be brief.',
        stream: true,
        stop_sequences: ['END'],
        temperature: 0,
        top_p: 1,
        top_k: 0,
        tools: [
          {
            type: 'custom',
            name: 'get_weather',
            description: 'd',
            input_schema: { type: 'object', properties: {} },
          },
        ],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' },
        metadata: { user_id: 'u-1' },
        service_tier: 'auto',
        output_config: { effort: 'max', format: { type: 'json_schema', schema: { type: 'object' } } },
      }),
      base({
        system: [{ type: 'text', text: 'Be brief.' }],
        tool_choice: { type: 'auto' },
        thinking: { type: 'disabled' },
      }),
      base({ tool_choice: { type: 'any' }, thinking: { type: 'adaptive' }, metadata: { user_id: null } }),
      base({
        tool_choice: { type: 'none' },
        thinking: { type: 'adaptive', display: 'summarized' },
        metadata: {},
      }),
      base({ service_tier: 'standard_only', output_config: { effort: null, format: null } }),
      base({ output_config: {}, stop_sequences: [], system: [] }),
      ...['low', 'medium', 'high', 'xhigh'].map((effort) => base({ output_config: { effort } })),
    ];
    for (const body of bodies)
      for (const mode of MODES) expect(validateMessagesRequest(body, mode)).toBe(body);
  });

  it('returns the body itself, unchanged (no copy, no defaults)', () => {
    const body = userBlocks(
      { type: 'text', text: 'Hi' },
      { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
    );
    const before = structuredClone(body);
    expect(validateMessagesRequest(body, 'portable')).toBe(body);
    expect(body).toEqual(before);
  });
});

describe('rule 2: content blocks (canonical set, both modes)', () => {
  const base64Png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };
  const text = { type: 'text', text: 'Some text' };
  const validUser = [
    text,
    {
      type: 'text',
      text: 'cited',
      citations: [{ type: 'char_location', cited_text: 'x', document_index: 0 }],
    },
    { type: 'text', text: 'no citations', citations: null },
    ...['image/jpeg', 'image/png', 'image/gif', 'image/webp'].map((media) => ({
      type: 'image',
      source: { type: 'base64', media_type: media, data: 'AAAA' },
    })),
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
    { type: 'image', source: { type: 'file', file_id: 'file_01' } },
    {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
      title: 'T',
    },
    {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: 'plain' },
      context: 'c',
      citations: { enabled: true },
    },
    {
      type: 'document',
      source: { type: 'content', content: 'inline' },
      title: null,
      context: null,
      citations: null,
    },
    { type: 'document', source: { type: 'content', content: [text, { type: 'image', source: base64Png }] } },
    { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    { type: 'document', source: { type: 'file', file_id: 'file_02' } },
    {
      type: 'search_result',
      source: 'https://s',
      title: 'S',
      content: [text],
      citations: { enabled: false },
    },
    { type: 'tool_result', tool_use_id: 'toolu_1' },
    { type: 'tool_result', tool_use_id: 'toolu_1', content: 'done', is_error: false },
    {
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      is_error: true,
      content: [
        text,
        { type: 'image', source: base64Png },
        { type: 'search_result', source: 's', title: 't', content: [text] },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd' } },
      ],
    },
  ];

  it.each(validUser.map((block) => [block.type, block] as const))(
    'accepts a user %s block in both modes',
    (_type, block) => {
      for (const mode of MODES) expect(validateMessagesRequest(userBlocks(block), mode)).toBeTruthy();
    },
  );

  it('accepts assistant text and tool_use blocks in both modes', () => {
    const body = assistantBlocks(text, {
      type: 'tool_use',
      id: 'toolu_1',
      name: 'lookup',
      input: { q: 'x' },
    });
    for (const mode of MODES) expect(validateMessagesRequest(body, mode)).toBe(body);
  });

  const malformed: Array<[string, unknown, string]> = [
    ['text without text', { type: 'text' }, 'messages.0.content.0.text'],
    ['text not a string', { type: 'text', text: 5 }, 'messages.0.content.0.text'],
    [
      'image media type',
      { type: 'image', source: { ...base64Png, media_type: 'image/bmp' } },
      'messages.0.content.0.source.media_type',
    ],
    [
      'image source type',
      { type: 'image', source: { type: 'path', path: '/x' } },
      'messages.0.content.0.source.type',
    ],
    ['image url missing', { type: 'image', source: { type: 'url' } }, 'messages.0.content.0.source.url'],
    ['image without source', { type: 'image' }, 'messages.0.content.0.source'],
    [
      'document pdf media type',
      { type: 'document', source: { type: 'base64', media_type: 'image/png', data: 'x' } },
      'messages.0.content.0.source.media_type',
    ],
    [
      'document content item',
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 1 }] } },
      'messages.0.content.0.source.content.0.text',
    ],
    [
      'document title',
      { type: 'document', source: { type: 'file', file_id: 'f' }, title: 3 },
      'messages.0.content.0.title',
    ],
    [
      'search_result without title',
      { type: 'search_result', source: 's', content: [] },
      'messages.0.content.0.title',
    ],
    [
      'search_result content item',
      { type: 'search_result', source: 's', title: 't', content: [{ type: 'image' }] },
      'messages.0.content.0.content.0.type',
    ],
    ['tool_result without id', { type: 'tool_result', content: 'x' }, 'messages.0.content.0.tool_use_id'],
    [
      'tool_result content a number',
      { type: 'tool_result', tool_use_id: 't', content: 5 },
      'messages.0.content.0.content',
    ],
    [
      'tool_result is_error',
      { type: 'tool_result', tool_use_id: 't', is_error: 'yes' },
      'messages.0.content.0.is_error',
    ],
    [
      'tool_result nested text',
      { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] },
      'messages.0.content.0.content.0.text',
    ],
    [
      'cache_control type',
      { type: 'text', text: 'x', cache_control: { type: 'persistent' } },
      'messages.0.content.0.cache_control.type',
    ],
  ];

  it.each(malformed)('%s -> 400 invalid_request naming the field (both modes)', (_label, block, field) => {
    for (const mode of MODES)
      expectRejected(() => validateMessagesRequest(userBlocks(block), mode), 'invalid_request', field);
  });

  it('tool_use input must be an object', () => {
    const body = assistantBlocks({ type: 'tool_use', id: 't', name: 'n', input: [1] });
    for (const mode of MODES)
      expectRejected(
        () => validateMessagesRequest(body, mode),
        'invalid_request',
        'messages.1.content.0.input',
      );
  });

  it.each([
    ['tool_use', 'user', { type: 'tool_use', id: 't', name: 'n', input: {} }],
    ['image', 'assistant', { type: 'image', source: { type: 'url', url: 'u' } }],
    ['document', 'assistant', { type: 'document', source: { type: 'file', file_id: 'f' } }],
    ['search_result', 'assistant', { type: 'search_result', source: 's', title: 't', content: [] }],
    ['tool_result', 'assistant', { type: 'tool_result', tool_use_id: 't' }],
  ])('role rule: %s in a %s turn is refused in both modes', (_type, role, block) => {
    const body = base({ messages: [{ role, content: [block] }] });
    for (const mode of MODES) {
      expectRejected(
        () => validateMessagesRequest(body, mode),
        'invalid_request',
        'messages.0.content.0.type',
        `${role} turn`,
      );
    }
  });

  it.each([
    ['thinking', { type: 'thinking', thinking: 't', signature: 's' }],
    ['redacted_thinking', { type: 'redacted_thinking', data: 'd' }],
  ])(
    'role rule: %s in a user turn is refused (native; portable refuses signed thinking first)',
    (_type, block) => {
      expectRejected(
        () => validateMessagesRequest(userBlocks(block), 'native'),
        'invalid_request',
        'messages.0.content.0.type',
        'user turn',
      );
    },
  );
});
