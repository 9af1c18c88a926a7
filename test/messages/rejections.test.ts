/**
 * SPEC.md 4.2 rejections over real HTTP: each one answers in the vendora error dialect naming the
 * field, and is decided before any upstream byte (the simulator records nothing for the model).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SimulatedGateway, startSimulatedGateway } from '../support/simulated-gateway.js';
import { expectVendoraError, messageBody, postMessages, withModel } from './support.js';

const DIRECT = 'm:vendora.messages.2023-06-01';
const DIRECT_UPSTREAM = 'up-vendora.messages.2023-06-01';
const NATIVE = { 'svc-route-mode': 'native' };

let gateway: SimulatedGateway;
let key: string;

beforeAll(async () => {
  gateway = await startSimulatedGateway();
  key = await gateway.key();
});
afterAll(async () => {
  await gateway?.close();
});
beforeEach(() => {
  gateway.simulator.reset();
  gateway.simulator.clearRequests();
});

/** Sends `body` and asserts a 400 in the vendora dialect naming `field`, with nothing sent upstream. */
async function expectRejected(
  body: Record<string, unknown>,
  code: string,
  field: string,
  headers: Record<string, string> = {},
  upstreamModel = DIRECT_UPSTREAM,
): Promise<void> {
  const result = await postMessages(gateway.url, key, body, headers);
  expectVendoraError(result, 400, code, { type: 'invalid_request_error', field });
  expect(gateway.simulator.requests({ model: upstreamModel })).toHaveLength(0);
  expect(gateway.simulator.requests()).toHaveLength(0);
}

const tool = (extra: Record<string, unknown> = {}) => ({
  name: 'lookup',
  description: 'Looks a thing up',
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  ...extra,
});

describe('rejections in both modes (SPEC 4.2 items 1, 2, 4)', () => {
  it('accepts the plain request (the control case reaches the upstream)', async () => {
    const result = await postMessages(gateway.url, key, messageBody(DIRECT));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(gateway.simulator.requests({ model: DIRECT_UPSTREAM })).toHaveLength(1);
  });

  for (const mode of ['portable', 'native'] as const) {
    const headers = mode === 'native' ? NATIVE : {};

    it(`unknown top-level field [${mode}]`, async () => {
      await expectRejected(
        messageBody(DIRECT, { frobnicate: true }),
        'invalid_request',
        'frobnicate',
        headers,
      );
    });

    for (const field of ['mcp_servers', 'container', 'fallbacks']) {
      it(`${field} is a deliberate boundary [${mode}]`, async () => {
        const value =
          field === 'container' ? 'container_1' : [{ type: 'url', url: 'https://example.com', name: 'x' }];
        await expectRejected(messageBody(DIRECT, { [field]: value }), 'unsupported_field', field, headers);
      });
    }

    for (const type of [
      'web_search_20250305',
      'web_fetch_20250910',
      'code_execution_20250825',
      'advisor_20260301',
      'tool_search_tool_regex_20251119',
    ]) {
      it(`provider-executed tool ${type} without a declaring connection [${mode}]`, async () => {
        const body = messageBody(DIRECT, { tools: [{ type, name: type.replace(/_\d+$/, '') }] });
        await expectRejected(
          body,
          'unsupported_field',
          mode === 'native' ? 'provider-executed' : 'tools.0.type',
          headers,
        );
      });
    }
  }

  it('vendora-version missing', async () => {
    const result = await postMessages(gateway.url, key, messageBody(DIRECT), { 'vendora-version': '' });
    expectVendoraError(result, 400, 'invalid_request', { field: 'vendora-version' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('vendora-version other than 2023-06-01', async () => {
    await expectRejected(messageBody(DIRECT), 'invalid_request', 'vendora-version', {
      'vendora-version': '2024-01-01',
    });
  });

  it('an unknown Svc-Route-Mode value', async () => {
    await expectRejected(messageBody(DIRECT), 'invalid_request', 'Svc-Route-Mode', {
      'svc-route-mode': 'fastest',
    });
  });
});

describe('portable-mode rejections (SPEC 4.2 item 3)', () => {
  for (const type of ['bash_20250124', 'text_editor_20250728', 'memory_20250818', 'computer_20250124']) {
    it(`vendora-defined tool ${type}`, async () => {
      const name = type.replace(/_\d+$/, '');
      await expectRejected(
        messageBody(DIRECT, { tools: [{ type, name }] }),
        'unsupported_field',
        'tools.0.type',
      );
    });
  }

  it('strict tools', async () => {
    await expectRejected(
      messageBody(DIRECT, { tools: [tool({ strict: true })] }),
      'unsupported_field',
      'tools.0.strict',
    );
  });

  it('signed thinking', async () => {
    const body = messageBody(DIRECT, {
      messages: [
        { role: 'user', content: 'Think' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'c2lnbmF0dXJl' },
            { type: 'text', text: 'ok' },
          ],
        },
        { role: 'user', content: 'Go on' },
      ],
    });
    await expectRejected(body, 'unsupported_field', 'messages.1.content.0');
  });

  it('an unknown member of tools[]', async () => {
    await expectRejected(
      messageBody(DIRECT, { tools: [tool({ defer_loading: true })] }),
      'unsupported_field',
      'tools.0',
    );
  });

  it('an unknown member of output_config', async () => {
    const result = await postMessages(
      gateway.url,
      key,
      messageBody(DIRECT, { output_config: { effort: 'low', verbosity: 'high' } }),
    );
    expect(result.status).toBe(400);
    expect(['invalid_request', 'unsupported_field']).toContain(result.body.error.code);
    expectVendoraError(result, 400, result.body.error.code, { field: 'output_config' });
    expect(result.body.error.message).toContain('verbosity');
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  for (const [label, content, role] of [
    [
      'server_tool_use',
      [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } }],
      'assistant',
    ],
    ['container_upload', [{ type: 'container_upload', file_id: 'file_1' }], 'user'],
    ['video', [{ type: 'video', source: { type: 'url', url: 'https://example.com/v.mp4' } }], 'user'],
  ] as const) {
    it(`a block the canonical model cannot carry (${label})`, async () => {
      const messages =
        role === 'assistant'
          ? [
              { role: 'user', content: 'Search' },
              { role: 'assistant', content },
              { role: 'user', content: 'and?' },
            ]
          : [{ role: 'user', content }];
      const index = role === 'assistant' ? 1 : 0;
      await expectRejected(
        messageBody(DIRECT, { messages }),
        'unsupported_field',
        `messages.${index}.content.0.type`,
      );
    });
  }

  it('a mid-conversation system turn', async () => {
    const body = messageBody(DIRECT, {
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Hello' },
      ],
    });
    await expectRejected(body, 'unsupported_field', 'messages.1.role');
  });

  for (const [label, patch, path] of [
    [
      'on a message block',
      {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
        ],
      },
      'messages.0.content.0.cache_control',
    ],
    [
      'on a system block',
      { system: [{ type: 'text', text: 'Be brief', cache_control: { type: 'ephemeral' } }] },
      'system.0.cache_control',
    ],
    ['on a tool', { tools: [tool({ cache_control: { type: 'ephemeral' } })] }, 'tools.0.cache_control'],
  ] as const) {
    it(`cache_control ${label}`, async () => {
      await expectRejected(messageBody(DIRECT, patch), 'unsupported_field', path);
    });
  }

  it('vendora-beta', async () => {
    await expectRejected(messageBody(DIRECT), 'unsupported_field', 'vendora-beta', {
      'vendora-beta': 'interleaved-thinking-2025-05-14',
    });
  });
});

describe('tool classification (SPEC 4.2 mode rule 3)', () => {
  it('bash_code_execution_20250825 is not the bash family: refused as an unknown tool type in both modes', async () => {
    const body = messageBody(DIRECT, {
      tools: [{ type: 'bash_code_execution_20250825', name: 'bash_code_execution' }],
    });
    for (const headers of [{}, NATIVE]) {
      const result = await postMessages(gateway.url, key, body, headers);
      expectVendoraError(result, 400, 'invalid_request', { field: 'tools.0.type' });
      expect(result.body.error.message).toContain('unknown tool type bash_code_execution_20250825');
      expect(result.body.error.message).not.toContain('vendora-defined');
    }
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('a bash tool at any dated version is a client tool: refused in portable, forwarded in native', async () => {
    for (const type of ['bash_20241022', 'bash_20250124', 'bash_20991231']) {
      const body = messageBody(DIRECT, { tools: [{ type, name: 'bash' }] });
      const portable = await postMessages(gateway.url, key, body);
      expectVendoraError(portable, 400, 'unsupported_field', { field: 'tools.0.type' });
      expect(portable.body.error.message).toContain(`vendora-defined tool ${type}`);
      const native = await postMessages(gateway.url, key, body, NATIVE);
      expect(native.status, JSON.stringify(native.body)).toBe(200);
    }
    const sent = gateway.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(
      sent.map((request) => (request.body as { tools: Array<{ type: string }> }).tools[0]!.type),
    ).toEqual(['bash_20241022', 'bash_20250124', 'bash_20991231']);
  });

  it('a type that only starts like a family (bash_2025) is not classified as bash', async () => {
    await expectRejected(
      messageBody(DIRECT, { tools: [{ type: 'bash_2025', name: 'bash' }] }),
      'invalid_request',
      'tools.0.type',
      NATIVE,
    );
  });
});

describe('vendora-beta in native mode', () => {
  it('forwards a token the connection accepts, and only in native mode', async () => {
    const result = await postMessages(gateway.url, key, messageBody(DIRECT), {
      ...NATIVE,
      'vendora-beta': 'interleaved-thinking-2025-05-14',
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const [sent] = gateway.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(sent?.headers['vendora-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  it('refuses a token the connection does not accept', async () => {
    await expectRejected(messageBody(DIRECT), 'unsupported_field', 'files-api-2025-04-14', {
      ...NATIVE,
      'vendora-beta': 'files-api-2025-04-14',
    });
  });

  it('refuses a mix of an accepted and an unaccepted token', async () => {
    await expectRejected(messageBody(DIRECT), 'unsupported_field', 'context-1m-2025-08-07', {
      ...NATIVE,
      'vendora-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07',
    });
  });

  for (const profile of ['vendorg.vendora.messages.v1', 'vendorh.vendora.messages.v1']) {
    it(`is never forwarded on ${profile}`, async () => {
      await expectRejected(
        messageBody(`m:${profile}`),
        'unsupported_field',
        'vendora-beta',
        { ...NATIVE, 'vendora-beta': 'interleaved-thinking-2025-05-14' },
        `up-${profile}`,
      );
    });
  }

  it('a plain native call on vendorg vendora-wire sends no vendora-beta header', async () => {
    const result = await postMessages(gateway.url, key, messageBody('m:vendorg.vendora.messages.v1'), NATIVE);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const [sent] = gateway.simulator.requests({ model: 'up-vendorg.vendora.messages.v1' });
    expect(sent?.headers['vendora-beta']).toBeUndefined();
  });
});

describe('credentials (SPEC 4.2 mode rule 4, SPEC 5.5)', () => {
  it('x-api-key and Authorization both present and different: 401 authentication_error, nothing sent', async () => {
    const other = await gateway.key();
    const result = await postMessages(gateway.url, key, messageBody(DIRECT), {
      authorization: `Bearer ${other}`,
    });
    expectVendoraError(result, 401, 'authentication_failed', { type: 'authentication_error' });
    expect(result.body.error.message).toContain('x-api-key');
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('both present and equal is accepted; Authorization alone is accepted', async () => {
    const both = await postMessages(gateway.url, key, messageBody(DIRECT), {
      authorization: `Bearer ${key}`,
    });
    expect(both.status, JSON.stringify(both.body)).toBe(200);
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'vendora-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify(messageBody(DIRECT)),
    });
    expect(response.status).toBe(200);
  });

  it('an unknown key is refused with 401 before any upstream byte', async () => {
    const result = await postMessages(gateway.url, `gw_${'A'.repeat(40)}`, messageBody(DIRECT));
    expectVendoraError(result, 401, 'authentication_failed', { type: 'authentication_error' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('a key without the inference scope: 403 gateway_key_scope_denied', async () => {
    const reader = await gateway.key('prj_a', ['governance:read']);
    const result = await postMessages(gateway.url, reader, messageBody(DIRECT));
    expectVendoraError(result, 403, 'gateway_key_scope_denied', { type: 'permission_error' });
    expect(gateway.simulator.requests()).toHaveLength(0);
  });

  it('the Gateway Key never reaches any upstream (headers or body), on every wire, through x-api-key and Authorization', async () => {
    const aliases = [
      'm:vendora.messages.2023-06-01',
      'm:cloudf.mantle.vendora.messages.v1',
      'm:compat.chat-embeddings.v1',
      'm:vendorb.responses.v1',
      'm:vendore.generate-content.text.v1beta',
    ];
    for (const alias of aliases) {
      const viaApiKey = await postMessages(gateway.url, key, messageBody(alias));
      expect(viaApiKey.status, `${alias} ${JSON.stringify(viaApiKey.body)}`).toBe(200);
      const viaBearer = await postMessages(gateway.url, key, messageBody(alias), {
        authorization: `Bearer ${key}`,
      });
      expect(viaBearer.status).toBe(200);
    }
    const native = await postMessages(gateway.url, key, messageBody(DIRECT), NATIVE);
    expect(native.status).toBe(200);
    const recorded = gateway.simulator.requests();
    expect(recorded.length).toBe(aliases.length * 2 + 1);
    const secretPart = key.slice(3);
    for (const request of recorded) {
      const text = JSON.stringify({ headers: request.headers, body: request.body, path: request.path });
      expect(text).not.toContain(secretPart);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.headers.authorization).toBeUndefined();
    }
  });
});

describe('provider-executed tools with a declaring connection', () => {
  let declared: SimulatedGateway;
  let declaredKey: string;
  beforeAll(async () => {
    declared = await startSimulatedGateway({ providerExecutedTools: true });
    declaredKey = await declared.key();
  });
  afterAll(async () => {
    await declared?.close();
  });

  it('pass in native mode on the direct profile, forwarded verbatim', async () => {
    const body = messageBody(DIRECT, {
      tools: [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'] },
        { type: 'code_execution_20250825', name: 'code_execution' },
      ],
    });
    const result = await postMessages(declared.url, declaredKey, body, NATIVE);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    const [sent] = declared.simulator.requests({ model: DIRECT_UPSTREAM });
    expect(sent?.body).toEqual(withModel(body, DIRECT_UPSTREAM));
  });

  it('are still refused in portable mode (vendora-defined tools need native mode)', async () => {
    declared.simulator.clearRequests();
    const body = messageBody(DIRECT, { tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
    const result = await postMessages(declared.url, declaredKey, body);
    expectVendoraError(result, 400, 'unsupported_field', { field: 'tools.0.type' });
    expect(declared.simulator.requests()).toHaveLength(0);
  });
});
