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

function expectRejected(run: () => unknown, code: ErrorCode, field: string, wording?: string): void {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(GatewayError);
  const error = caught as GatewayError;
  expect(error.code).toBe(code);
  expect(error.status).toBe(400);
  expect(error.options.param).toBe(field);
  expect(error.message).toContain(field);
  if (wording) expect(error.message).toContain(wording);
}

const customTool = {
  name: 'lookup',
  description: 'Looks up.',
  input_schema: { type: 'object', properties: {} },
};

const NATIVE_ONLY_ASSISTANT = [
  { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: [{ type: 'web_search_result', url: 'u', title: 't' }],
  },
  {
    type: 'web_fetch_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'web_fetch_result', url: 'u' },
  },
  {
    type: 'code_execution_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'code_execution_result' },
  },
  {
    type: 'bash_code_execution_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'bash_code_execution_result' },
  },
  { type: 'text_editor_code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} },
  {
    type: 'tool_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: { type: 'tool_search_tool_search_result' },
  },
];
const NATIVE_ONLY_USER = [
  { type: 'container_upload', file_id: 'file_01' },
  { type: 'video', source: { type: 'file', file_id: 'file_02' } },
];

describe('rule 3: native mode', () => {
  it.each(NATIVE_ONLY_ASSISTANT.map((block) => [block.type, block] as const))(
    'accepts an assistant %s block; portable refuses it as not carried',
    (type, block) => {
      expect(validateMessagesRequest(assistantBlocks(block), 'native')).toBeTruthy();
      expectRejected(
        () => validateMessagesRequest(assistantBlocks(block), 'portable'),
        'unsupported_field',
        'messages.1.content.0.type',
        `block type ${type} cannot be carried in portable mode`,
      );
    },
  );

  it.each(NATIVE_ONLY_USER.map((block) => [block.type, block] as const))(
    'accepts a user %s block; portable refuses it as not carried',
    (type, block) => {
      expect(validateMessagesRequest(userBlocks(block), 'native')).toBeTruthy();
      expectRejected(
        () => validateMessagesRequest(userBlocks(block), 'portable'),
        'unsupported_field',
        'messages.0.content.0.type',
        `block type ${type} cannot be carried in portable mode`,
      );
    },
  );

  it('checks the identifying fields of native-only blocks', () => {
    const cases: Array<[unknown, string, boolean]> = [
      [{ type: 'server_tool_use', id: 's', name: 'web_search' }, 'messages.1.content.0.input', true],
      [{ type: 'web_search_tool_result', content: [] }, 'messages.1.content.0.tool_use_id', true],
      [{ type: 'code_execution_tool_result', tool_use_id: 's' }, 'messages.1.content.0.content', true],
      [{ type: 'container_upload' }, 'messages.0.content.0.file_id', false],
      [{ type: 'video', source: 'x' }, 'messages.0.content.0.source', false],
    ];
    for (const [block, field, assistant] of cases) {
      const body = assistant ? assistantBlocks(block) : userBlocks(block);
      expectRejected(() => validateMessagesRequest(body, 'native'), 'invalid_request', field);
    }
  });

  it('applies role rules to native-only blocks', () => {
    expectRejected(
      () => validateMessagesRequest(userBlocks(NATIVE_ONLY_ASSISTANT[0]), 'native'),
      'invalid_request',
      'messages.0.content.0.type',
      'assistant turns',
    );
    expectRejected(
      () => validateMessagesRequest(assistantBlocks(NATIVE_ONLY_USER[0]), 'native'),
      'invalid_request',
      'messages.1.content.0.type',
      'user turns',
    );
  });

  it('refuses an unknown block type as invalid in native mode, unsupported in portable mode', () => {
    const body = userBlocks({ type: 'hologram', data: 'x' });
    expectRejected(
      () => validateMessagesRequest(body, 'native'),
      'invalid_request',
      'messages.0.content.0.type',
      'unknown block type hologram',
    );
    expectRejected(
      () => validateMessagesRequest(body, 'portable'),
      'unsupported_field',
      'messages.0.content.0.type',
      'portable mode',
    );
  });

  it('forwards unknown members of blocks and tools (portable refuses them, naming them)', () => {
    const blocks: Array<[unknown, string, boolean]> = [
      [
        {
          type: 'image',
          source: { type: 'url', url: 'u' },
          transformations: { oversized_image: 'downsize' },
        },
        'messages.0.content.0.transformations',
        false,
      ],
      [
        { type: 'image', source: { type: 'url', url: 'u', detail: 'high' } },
        'messages.0.content.0.source.detail',
        false,
      ],
      [
        { type: 'text', text: 'x', cache_control: { type: 'ephemeral', scope: 'org' } },
        'messages.0.content.0.cache_control.scope',
        false,
      ],
      [
        { type: 'tool_use', id: 't', name: 'n', input: {}, caller: { type: 'direct' } },
        'messages.1.content.0.caller',
        true,
      ],
      [
        { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x', extra: 1 }] },
        'messages.0.content.0.content.0.extra',
        false,
      ],
    ];
    for (const [block, field, assistant] of blocks) {
      const body = assistant ? assistantBlocks(block) : userBlocks(block);
      expect(validateMessagesRequest(body, 'native')).toBe(body);
      expectRejected(
        () => validateMessagesRequest(body, 'portable'),
        'unsupported_field',
        field,
        'native mode',
      );
    }
    const tool = base({ tools: [{ ...customTool, defer_loading: true, input_examples: [{}] }] });
    expect(validateMessagesRequest(tool, 'native')).toBe(tool);
    expectRejected(
      () => validateMessagesRequest(tool, 'portable'),
      'unsupported_field',
      'tools.0.defer_loading',
      'native mode',
    );
  });

  it('accepts a mid-conversation system turn in native mode only', () => {
    for (const content of ['Now answer in French.', [{ type: 'text', text: 'Now answer in French.' }]]) {
      const body = base({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'system', content },
          { role: 'user', content: 'Again' },
        ],
      });
      expect(validateMessagesRequest(body, 'native')).toBe(body);
      expectRejected(
        () => validateMessagesRequest(body, 'portable'),
        'unsupported_field',
        'messages.1.role',
        'native mode',
      );
    }
    const image = base({
      messages: [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }],
    });
    expectRejected(
      () => validateMessagesRequest(image, 'native'),
      'invalid_request',
      'messages.0.content.0.type',
      'system turn',
    );
  });

  it('holds output_config to its two members in native mode too', () => {
    expectRejected(
      () => validateMessagesRequest(base({ output_config: { effort: 'low', task_budget: 5 } }), 'native'),
      'invalid_request',
      'output_config.task_budget',
      'unknown field',
    );
  });

  it('count_tokens follows the native block rules', () => {
    const body = {
      model: 'alias',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: NATIVE_ONLY_ASSISTANT },
      ],
    };
    expect(validateCountTokensRequest(body)).toBe(body);
  });
});

describe('rule 4: portable mode refusals', () => {
  it.each([
    'bash_20250124',
    'bash_20241022',
    'text_editor_20250728',
    'memory_20250818',
    'computer_20251124',
    'computer_20991231',
  ])('refuses the vendora-defined tool %s (native accepts it)', (type) => {
    const body = base({ tools: [{ type, name: 'fixed', display_width_px: 1024 }] });
    expect(validateMessagesRequest(body, 'native')).toBe(body);
    expectRejected(
      () => validateMessagesRequest(body, 'portable'),
      'unsupported_field',
      'tools.0.type',
      'needs native mode',
    );
  });

  it.each([
    'web_search_20250305',
    'web_fetch_20250910',
    'code_execution_20250825',
    'advisor_20260301',
    'tool_search_tool_regex_20251119',
    'tool_search_tool_bm25',
  ])(
    'refuses the provider-executed tool %s, naming it as such (native accepts it here; routing decides)',
    (type) => {
      const body = base({ tools: [{ type, name: 'server_tool', max_uses: 3 }] });
      expect(validateMessagesRequest(body, 'native')).toBe(body);
      expectRejected(
        () => validateMessagesRequest(body, 'portable'),
        'unsupported_field',
        'tools.0.type',
        `provider-executed tool ${type}`,
      );
    },
  );

  it('checks the name of a vendora-defined tool in native mode', () => {
    expectRejected(
      () => validateMessagesRequest(base({ tools: [{ type: 'bash_20250124' }] }), 'native'),
      'invalid_request',
      'tools.0.name',
    );
  });

  it.each([true, false])('refuses a strict tool (strict: %s) in portable mode only', (strict) => {
    const body = base({ tools: [{ ...customTool, strict }] });
    expect(validateMessagesRequest(body, 'native')).toBe(body);
    expectRejected(
      () => validateMessagesRequest(body, 'portable'),
      'unsupported_field',
      'tools.0.strict',
      'native mode',
    );
  });

  it.each([
    { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAhIM' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
  ])('refuses signed thinking ($type) in portable mode only', (block) => {
    const body = assistantBlocks(block, { type: 'text', text: 'Answer.' });
    expect(validateMessagesRequest(body, 'native')).toBe(body);
    expectRejected(
      () => validateMessagesRequest(body, 'portable'),
      'unsupported_field',
      'messages.1.content.0.type',
      'signed thinking',
    );
  });

  const cache = { type: 'ephemeral', ttl: '1h' };
  const text = { type: 'text', text: 'x' };
  it.each([
    ['a system block', base({ system: [{ ...text, cache_control: cache }] }), 'system.0.cache_control'],
    [
      'a message block',
      userBlocks(text, { ...text, cache_control: cache }),
      'messages.0.content.1.cache_control',
    ],
    [
      'a tool_result content block',
      userBlocks({ type: 'tool_result', tool_use_id: 't', content: [{ ...text, cache_control: cache }] }),
      'messages.0.content.0.content.0.cache_control',
    ],
    [
      'a search_result text block',
      userBlocks({
        type: 'search_result',
        source: 's',
        title: 't',
        content: [{ ...text, cache_control: cache }],
      }),
      'messages.0.content.0.content.0.cache_control',
    ],
    [
      'a document content source block',
      userBlocks({
        type: 'document',
        source: { type: 'content', content: [{ ...text, cache_control: cache }] },
      }),
      'messages.0.content.0.source.content.0.cache_control',
    ],
    [
      'a tool',
      base({ tools: [{ ...customTool, cache_control: { type: 'ephemeral' } }] }),
      'tools.0.cache_control',
    ],
    [
      'a tool_use block',
      assistantBlocks({ type: 'tool_use', id: 't', name: 'n', input: {}, cache_control: cache }),
      'messages.1.content.0.cache_control',
    ],
  ])('refuses cache_control on %s in portable mode only', (_where, body, field) => {
    expect(validateMessagesRequest(body, 'native')).toBe(body);
    expectRejected(
      () => validateMessagesRequest(body, 'portable'),
      'unsupported_field',
      field,
      'cache_control needs native mode',
    );
  });

  it('treats cache_control: null as absent', () => {
    const body = userBlocks({ ...text, cache_control: null });
    for (const mode of MODES) expect(validateMessagesRequest(body, mode)).toBe(body);
  });

  it.each([
    'bash_code_execution_20250825',
    'text_editor_code_execution_20250825',
    'mcp_toolset',
    'computer_toolset_20260801',
    'bash',
    'bash_2025',
  ])('refuses the unknown tool type %s in both modes', (type) => {
    for (const mode of MODES) {
      expectRejected(
        () => validateMessagesRequest(base({ tools: [{ type, name: 'x' }] }), mode),
        'invalid_request',
        'tools.0.type',
        `unknown tool type ${type}`,
      );
    }
  });
});

describe('rule 6: a realistic request', () => {
  it('accepts a ~1 KB tool round trip and returns the same request it validated (its cost is measured by bench/validate.ts)', () => {
    const body = base({
      system: [{ type: 'text', text: 'You are a careful assistant.' }],
      tools: [customTool],
      messages: [
        { role: 'user', content: 'What is the weather in Lisbon today?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { city: 'Lisbon' } }],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '19 C' }] },
          ],
        },
      ],
    });
    const validated = validateMessagesRequest(body, 'portable');
    expect(validated.messages).toHaveLength(3);
    expect(validated.tools?.[0]?.name).toBe('lookup');
  });
});
