/**
 * The profile matrix, end to end: every creatable profile x every canonical field or value rule is
 * sent as a portable request to alias `m:<profile>` (one target, a connection named after the
 * profile). Either it is carried (200, and what reached the simulator carries the field in that
 * wire's own form) or it is routed away (400 no_eligible_route naming the connection and the
 * reason, and the simulator recorded nothing). Expectations come from ./expected-profiles.ts (SPEC
 * 4.2 as DESIGN resolves it), never from the catalogue; a separate test compares the two row by row.
 *
 * One gateway and simulator for the file; each case fires its 17 requests in parallel. Requests are
 * matched to what the simulator recorded by a marker in the user text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILES } from '../../src/catalogue/profiles.js';
import type { RecordedRequest } from '../../src/simulator/types.js';
import { call } from '../support/gateway.js';
import {
  type SimulatedGateway as MatrixGateway,
  messagesHeaders,
  startSimulatedGateway as startMatrixGateway,
} from '../support/simulated-gateway.js';
import {
  CONTENT_CARRIED,
  type ContentKind,
  CREATABLE_PROFILES,
  EXPECTED_PROFILES,
  type ExpectedField,
  type ExpectedProfile,
  type NativeRejectable,
} from './expected-profiles.js';

type Wire = 'messages' | 'chat-completions' | 'responses' | 'generate-content';
type Json = any;

interface WireContext {
  profile: ExpectedProfile;
  recorded: RecordedRequest;
}

interface MatrixCase {
  key: string;
  /** Canonical fields the request carries (besides max_tokens, which every request has). */
  fields: readonly ExpectedField[];
  stream?: true;
  content?: ContentKind;
  /** Outside vendorh.chat.v1's five-of-32-bytes stop_sequences rule. */
  stopOutside?: true;
  /** Fields merged over the base request; `marker` must stay in the first user text. */
  body(marker: string): Record<string, unknown>;
  /** What the wire body must show when carried (one check per wire the case can reach). */
  wire: Partial<Record<Wire, (body: Json, context: WireContext) => void>>;
}

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
};
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const IMAGE_URL = 'https://example.com/cat.png';
/** Five sequences of exactly 32 UTF-8 bytes each (one of them multi-byte): inside vendorh's rule. */
const STOP_INSIDE = ['a'.repeat(32), 'b'.repeat(32), `${'€'.repeat(10)}xy`, 'END', '\n\nHuman:'];
/** 33 bytes in 11 characters: outside by bytes although short in characters. */
const STOP_33_BYTES = ['€'.repeat(11)];
const STOP_SIX = ['s1', 's2', 's3', 's4', 's5', 's6'];

const userText = (marker: string) => `Say hi ${marker}`;
const firstUser = (marker: string, blocks: Json[]) => [
  { role: 'user', content: [...blocks, { type: 'text', text: userText(marker) }] },
];

const sameStop = (stop: string[]): MatrixCase['wire'] => ({
  messages: (body) => expect(body.stop_sequences).toEqual(stop),
  'chat-completions': (body) => expect(body.stop).toEqual(stop),
  'generate-content': (body) => expect(body.generationConfig.stopSequences).toEqual(stop),
});

const effortCase = (effort: 'low' | 'medium' | 'high' | 'xhigh' | 'max'): MatrixCase => ({
  key: `output_config.effort=${effort}`,
  fields: ['output_config.effort'],
  body: () => ({ output_config: { effort } }),
  wire: {
    messages: (body) => expect(body.output_config).toEqual({ effort }),
    'chat-completions': (body) => expect(body.reasoning_effort).toBe(effort),
  },
});

const CASES: MatrixCase[] = [
  {
    key: 'max_tokens',
    fields: ['max_tokens'],
    body: () => ({ max_tokens: 77 }),
    wire: {
      messages: (body) => expect(body.max_tokens).toBe(77),
      'chat-completions': (body, { profile }) => {
        const other = profile.tokenField === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
        expect(body[profile.tokenField!]).toBe(77);
        expect(body[other]).toBeUndefined();
      },
      responses: (body) => {
        expect(body.max_output_tokens).toBe(77);
        expect(body.store).toBe(false);
        expect(body.max_tokens).toBeUndefined();
      },
      'generate-content': (body) => {
        expect(body.generationConfig.maxOutputTokens).toBe(77);
        expect(body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
      },
    },
  },
  {
    key: 'system',
    fields: [],
    body: () => ({ system: 'Be brief.' }),
    wire: {
      messages: (body) => expect(body.system).toBe('Be brief.'),
      'chat-completions': (body) =>
        expect(body.messages[0]).toEqual({ role: 'system', content: 'Be brief.' }),
      responses: (body) => expect(body.instructions).toBe('Be brief.'),
      'generate-content': (body) =>
        expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] }),
    },
  },
  {
    key: 'metadata',
    fields: ['metadata'],
    body: () => ({ metadata: { user_id: 'user-42' } }),
    wire: { messages: (body) => expect(body.metadata).toEqual({ user_id: 'user-42' }) },
  },
  {
    key: 'service_tier',
    fields: ['service_tier'],
    body: () => ({ service_tier: 'auto' }),
    wire: { messages: (body) => expect(body.service_tier).toBe('auto') },
  },
  {
    key: 'thinking',
    fields: ['thinking'],
    body: () => ({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } }),
    wire: { messages: (body) => expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 }) },
  },
  {
    key: 'top_k',
    fields: ['top_k'],
    body: () => ({ top_k: 40 }),
    wire: { messages: (body) => expect(body.top_k).toBe(40) },
  },
  {
    key: 'top_p',
    fields: ['top_p'],
    body: () => ({ top_p: 0.9 }),
    wire: {
      messages: (body) => expect(body.top_p).toBe(0.9),
      'chat-completions': (body) => expect(body.top_p).toBe(0.9),
      responses: (body) => expect(body.top_p).toBe(0.9),
      'generate-content': (body) => expect(body.generationConfig.topP).toBe(0.9),
    },
  },
  {
    key: 'temperature',
    fields: ['temperature'],
    body: () => ({ temperature: 0 }),
    wire: {
      messages: (body) => expect(body.temperature).toBe(0),
      'chat-completions': (body) => expect(body.temperature).toBe(0),
      responses: (body) => expect(body.temperature).toBe(0),
      'generate-content': (body) => expect(body.generationConfig.temperature).toBe(0),
    },
  },
  {
    key: 'stop_sequences (5 x 32 bytes, inside)',
    fields: ['stop_sequences'],
    body: () => ({ stop_sequences: STOP_INSIDE }),
    wire: sameStop(STOP_INSIDE),
  },
  {
    key: 'stop_sequences (six, outside)',
    fields: ['stop_sequences'],
    stopOutside: true,
    body: () => ({ stop_sequences: STOP_SIX }),
    wire: sameStop(STOP_SIX),
  },
  {
    key: 'stop_sequences (33 bytes, outside)',
    fields: ['stop_sequences'],
    stopOutside: true,
    body: () => ({ stop_sequences: STOP_33_BYTES }),
    wire: sameStop(STOP_33_BYTES),
  },
  {
    key: 'tools',
    fields: ['tools'],
    body: () => ({ tools: [WEATHER_TOOL] }),
    wire: {
      messages: (body) => expect(body.tools).toEqual([WEATHER_TOOL]),
      'chat-completions': (body) => {
        expect(body.tools).toEqual([
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: WEATHER_TOOL.input_schema,
            },
          },
        ]);
        expect(body.tool_choice).toBeUndefined();
      },
      responses: (body) =>
        expect(body.tools).toEqual([
          {
            type: 'function',
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: WEATHER_TOOL.input_schema,
            strict: false,
          },
        ]),
    },
  },
  {
    key: 'tool_choice any',
    fields: ['tools', 'tool_choice'],
    body: () => ({ tools: [WEATHER_TOOL], tool_choice: { type: 'any' } }),
    wire: {
      messages: (body) => expect(body.tool_choice).toEqual({ type: 'any' }),
      'chat-completions': (body) => expect(body.tool_choice).toBe('required'),
      responses: (body) => expect(body.tool_choice).toBe('required'),
    },
  },
  {
    key: 'tool_choice tool',
    fields: ['tools', 'tool_choice'],
    body: () => ({
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    }),
    wire: {
      messages: (body) =>
        expect(body.tool_choice).toEqual({
          type: 'tool',
          name: 'get_weather',
          disable_parallel_tool_use: true,
        }),
      'chat-completions': (body) => {
        expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
        expect(body.parallel_tool_calls).toBe(false);
      },
      responses: (body) => {
        expect(body.tool_choice).toEqual({ type: 'function', name: 'get_weather' });
        expect(body.parallel_tool_calls).toBe(false);
      },
    },
  },
  effortCase('low'),
  effortCase('medium'),
  effortCase('high'),
  effortCase('xhigh'),
  effortCase('max'),
  {
    key: 'output_config.format',
    fields: ['output_config.format'],
    body: () => ({ output_config: { format: { type: 'json_schema', schema: SCHEMA } } }),
    wire: {
      messages: (body) =>
        expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } }),
      'chat-completions': (body) =>
        expect(body.response_format).toEqual({
          type: 'json_schema',
          json_schema: { name: 'output', schema: SCHEMA, strict: true },
        }),
      responses: (body) =>
        expect(body.text).toEqual({
          format: { type: 'json_schema', name: 'output', schema: SCHEMA, strict: true },
        }),
    },
  },
  {
    key: 'stream',
    fields: [],
    stream: true,
    body: () => ({ stream: true }),
    wire: {
      messages: (body) => expect(body.stream).toBe(true),
      'chat-completions': (body) => {
        expect(body.stream).toBe(true);
        expect(body.stream_options).toEqual({ include_usage: true });
      },
      responses: (body) => {
        expect(body.stream).toBe(true);
        expect(body.store).toBe(false);
      },
      'generate-content': (_body, { recorded }) => expect(recorded.path).toMatch(/:streamGenerateContent$/),
    },
  },
  {
    key: 'stream+tools',
    fields: ['tools'],
    stream: true,
    body: () => ({ stream: true, tools: [WEATHER_TOOL] }),
    wire: {
      messages: (body) => {
        expect(body.stream).toBe(true);
        expect(body.tools).toEqual([WEATHER_TOOL]);
      },
      'chat-completions': (body) => {
        expect(body.stream).toBe(true);
        expect(body.tools[0].function.name).toBe('get_weather');
      },
      responses: (body) => {
        expect(body.stream).toBe(true);
        expect(body.tools[0].name).toBe('get_weather');
      },
    },
  },
  {
    key: 'tool_use/tool_result history',
    fields: [],
    content: 'tool_history',
    body: (marker) => ({
      messages: [
        { role: 'user', content: `Weather in Paris? ${marker}` },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '18C' }] },
      ],
    }),
    wire: {
      messages: (body) =>
        expect(body.messages[1].content[1]).toEqual({
          type: 'tool_use',
          id: 'toolu_01',
          name: 'get_weather',
          input: { city: 'Paris' },
        }),
      'chat-completions': (body) => {
        const assistant = body.messages.find((message: Json) => message.role === 'assistant');
        expect(assistant.tool_calls).toHaveLength(1);
        expect(assistant.tool_calls[0]).toMatchObject({
          id: 'toolu_01',
          type: 'function',
          function: { name: 'get_weather' },
        });
        expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ city: 'Paris' });
        expect(body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'toolu_01', content: '18C' });
      },
      responses: (body) => {
        const call = body.input.find((item: Json) => item.type === 'function_call');
        expect(call).toMatchObject({ call_id: 'toolu_01', name: 'get_weather' });
        expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
        expect(body.input.at(-1)).toEqual({
          type: 'function_call_output',
          call_id: 'toolu_01',
          output: '18C',
        });
      },
    },
  },
  {
    key: 'document (text source)',
    fields: [],
    content: 'document_text',
    body: (marker) => ({
      messages: firstUser(marker, [
        {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: 'The sky is blue.' },
          title: 'Sky',
        },
      ]),
    }),
    wire: {
      messages: (body) => expect(body.messages[0].content[0].source.data).toBe('The sky is blue.'),
      'chat-completions': (body) => {
        const parts = body.messages[0].content;
        expect(parts[0]).toEqual({ type: 'text', text: 'Sky\n\nThe sky is blue.' });
      },
    },
  },
  {
    key: 'document (base64 pdf)',
    fields: [],
    content: 'document_pdf',
    body: (marker) => ({
      messages: firstUser(marker, [
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
      ]),
    }),
    wire: {
      messages: (body) =>
        expect(body.messages[0].content[0].source).toEqual({
          type: 'base64',
          media_type: 'application/pdf',
          data: 'JVBERi0xLjQK',
        }),
    },
  },
  {
    key: 'image (base64)',
    fields: [],
    content: 'image_base64',
    body: (marker) => ({
      messages: firstUser(marker, [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_1X1 } },
      ]),
    }),
    wire: {
      messages: (body) => expect(body.messages[0].content[0].source.data).toBe(PNG_1X1),
      'chat-completions': (body) =>
        expect(body.messages[0].content[0]).toEqual({
          type: 'image_url',
          image_url: { url: `data:image/png;base64,${PNG_1X1}` },
        }),
      responses: (body) =>
        expect(body.input[0].content[0]).toEqual({
          type: 'input_image',
          image_url: `data:image/png;base64,${PNG_1X1}`,
          detail: 'auto',
        }),
      'generate-content': (body) =>
        expect(body.contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'image/png', data: PNG_1X1 } }),
    },
  },
  {
    key: 'image (url)',
    fields: [],
    content: 'image_url',
    body: (marker) => ({
      messages: firstUser(marker, [{ type: 'image', source: { type: 'url', url: IMAGE_URL } }]),
    }),
    wire: {
      messages: (body) => expect(body.messages[0].content[0].source).toEqual({ type: 'url', url: IMAGE_URL }),
      'chat-completions': (body) =>
        expect(body.messages[0].content[0]).toEqual({ type: 'image_url', image_url: { url: IMAGE_URL } }),
      responses: (body) =>
        expect(body.input[0].content[0]).toEqual({
          type: 'input_image',
          image_url: IMAGE_URL,
          detail: 'auto',
        }),
    },
  },
];

/** What the expected table says about one cell: carried, or routed away with reasons that must be named. */
type Expectation = { carried: true } | { carried: false; mustName: RegExp[] };

const CONTENT_REASON: Record<ContentKind, RegExp> = {
  tool_history: /tool_use|tool_result/,
  document_text: /document/,
  document_pdf: /document/,
  image_base64: /image/,
  image_url: /image/,
};

function expectation(profile: ExpectedProfile, matrixCase: MatrixCase): Expectation {
  const literal = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const named: RegExp[] = matrixCase.fields
    .filter((field) => profile.unsupported.includes(field))
    .map(literal);
  if (matrixCase.stream && !profile.stream) named.push(/stream/);
  if (matrixCase.stream && profile.noStreamWithTools && matrixCase.fields.includes('tools'))
    named.push(/stream/);
  if (matrixCase.stopOutside && profile.stopFiveOf32) named.push(/stop_sequences/);
  if (named.length > 0) return { carried: false, mustName: named };
  const primitive = profile.primitive;
  if (primitive === 'converse') throw new Error('withheld profiles are not exercised');
  if (matrixCase.content && !CONTENT_CARRIED[primitive][matrixCase.content]) {
    return { carried: false, mustName: [CONTENT_REASON[matrixCase.content]] };
  }
  return { carried: true };
}

let gateway: MatrixGateway;
let key: string;

beforeAll(async () => {
  gateway = await startMatrixGateway();
  key = await gateway.key();
});

afterAll(async () => {
  await gateway?.close();
});

const markerOf = (caseKey: string, profileId: string) => `[mx|${caseKey}|${profileId}]`;

function requestBody(
  profile: ExpectedProfile,
  matrixCase: MatrixCase,
  marker: string,
): Record<string, unknown> {
  return {
    model: `m:${profile.id}`,
    max_tokens: 64,
    messages: [{ role: 'user', content: userText(marker) }],
    ...matrixCase.body(marker),
  };
}

function recordedWith(marker: string): RecordedRequest[] {
  return gateway.simulator.requests().filter((request) => JSON.stringify(request.body).includes(marker));
}

function wireOf(profile: ExpectedProfile): Wire {
  if (profile.primitive === 'converse') throw new Error('withheld');
  return profile.primitive;
}

describe('profile matrix (portable mode): every creatable profile x every field or value rule', () => {
  it('the expected table covers 19 profiles, 17 of them creatable', () => {
    expect(EXPECTED_PROFILES).toHaveLength(19);
    expect(CREATABLE_PROFILES).toHaveLength(17);
  });

  it.each(CASES.map((matrixCase) => [matrixCase.key, matrixCase] as const))(
    '%s',
    async (_key, matrixCase) => {
      const results = await Promise.all(
        CREATABLE_PROFILES.map(async (profile) => {
          const marker = markerOf(matrixCase.key, profile.id);
          const response = await call(gateway.url, 'POST', '/v1/messages', {
            headers: messagesHeaders(key),
            body: requestBody(profile, matrixCase, marker),
          });
          return { profile, marker, response };
        }),
      );
      // The outcome table first, as one readable diff: profile -> carried | routed away.
      const outcome = (carried: boolean) => (carried ? 'carried' : 'routed away');
      const expectedTable = Object.fromEntries(
        results.map(({ profile }) => [profile.id, outcome(expectation(profile, matrixCase).carried)]),
      );
      const actualTable = Object.fromEntries(
        results.map(({ profile, response }) => [
          profile.id,
          response.status === 200
            ? 'carried'
            : response.body?.error?.code === 'no_eligible_route'
              ? 'routed away'
              : `${response.status} ${JSON.stringify(response.body)}`,
        ]),
      );
      expect(actualTable).toEqual(expectedTable);

      for (const { profile, marker, response } of results) {
        const expected = expectation(profile, matrixCase);
        const recorded = recordedWith(marker);
        const where = `${matrixCase.key} on ${profile.id}`;
        if (expected.carried) {
          expect(response.headers.get('svc-route'), where).toBe(profile.id);
          if (matrixCase.stream) {
            expect(response.headers.get('content-type'), where).toMatch(/^text\/event-stream/);
            expect(String(response.body), where).toContain('event: message_stop');
          } else {
            expect(response.body.type, where).toBe('message');
            expect(response.body.model, where).toBe(`m:${profile.id}`);
          }
          expect(recorded, where).toHaveLength(1);
          const wire = wireOf(profile);
          expect(recorded[0]!.wire, where).toBe(wire);
          const check = matrixCase.wire[wire];
          expect(check, `${where}: the case has no check for the ${wire} wire`).toBeDefined();
          check!(recorded[0]!.body, { profile, recorded: recorded[0]! });
        } else {
          expect(response.status, where).toBe(400);
          expect(response.body.error.type, where).toBe('invalid_request_error');
          const message: string = response.body.error.message;
          expect(message, where).toContain(`${profile.id}: `);
          const reasons = message.slice(message.indexOf(`${profile.id}: `) + profile.id.length + 2);
          for (const pattern of expected.mustName) expect(reasons, where).toMatch(pattern);
          expect(recorded, `${where}: nothing may reach the simulator`).toHaveLength(0);
        }
      }
    },
  );
});

describe('profile matrix (native mode)', () => {
  it('only the four vendora-wire profiles accept Svc-Route-Mode: native; the others answer 400', async () => {
    const results = await Promise.all(
      CREATABLE_PROFILES.map(async (profile) => {
        const marker = markerOf('native', profile.id);
        const response = await call(gateway.url, 'POST', '/v1/messages', {
          headers: messagesHeaders(key, { 'svc-route-mode': 'native' }),
          body: {
            model: `m:${profile.id}`,
            max_tokens: 32,
            messages: [{ role: 'user', content: userText(marker) }],
          },
        });
        return { profile, marker, response };
      }),
    );
    const actual = Object.fromEntries(results.map(({ profile, response }) => [profile.id, response.status]));
    const expected = Object.fromEntries(
      CREATABLE_PROFILES.map((profile) => [profile.id, profile.native ? 200 : 400]),
    );
    expect(actual).toEqual(expected);
    expect(CREATABLE_PROFILES.filter((profile) => profile.native)).toHaveLength(4);
    for (const { profile, marker, response } of results) {
      const recorded = recordedWith(marker);
      if (profile.native) {
        expect(recorded, profile.id).toHaveLength(1);
        expect(recorded[0]!.wire).toBe('messages');
        expect(recorded[0]!.body).toMatchObject({ model: `up-${profile.id}`, max_tokens: 32 });
        expect(response.body.type).toBe('message');
      } else {
        expect(response.body.error.message, profile.id).toContain(profile.id);
        expect(response.body.error.message, profile.id).toMatch(/native/);
        expect(recorded, profile.id).toHaveLength(0);
      }
    }
  });
});

/** Native mode x the fields a vendora-wire profile may still reject; the rest is forwarded verbatim. */
const NATIVE_CASES: Array<{
  key: NativeRejectable | 'output_config.effort' | 'output_config.format';
  body(marker: string): Record<string, unknown>;
}> = [
  { key: 'top_k', body: () => ({ top_k: 40 }) },
  { key: 'top_p', body: () => ({ top_p: 0.9 }) },
  { key: 'temperature', body: () => ({ temperature: 0.5 }) },
  { key: 'stop_sequences', body: () => ({ stop_sequences: ['END'] }) },
  {
    key: 'cache_control',
    body: (marker) => ({
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: userText(marker), cache_control: { type: 'ephemeral' } }],
        },
      ],
    }),
  },
  // Rule 9: vendorh vendora-wire forwards effort natively; mantle vendora forwards output_config verbatim.
  { key: 'output_config.effort', body: () => ({ output_config: { effort: 'high' } }) },
  {
    key: 'output_config.format',
    body: () => ({ output_config: { format: { type: 'json_schema', schema: SCHEMA } } }),
  },
];

describe('profile matrix (native mode) x the fields rejected "on both paths"', () => {
  it.each(NATIVE_CASES.map((nativeCase) => [nativeCase.key, nativeCase] as const))(
    '%s',
    async (_key, nativeCase) => {
      const natives = CREATABLE_PROFILES.filter((profile) => profile.native);
      const results = await Promise.all(
        natives.map(async (profile) => {
          const marker = markerOf(`native ${nativeCase.key}`, profile.id);
          const body = {
            model: `m:${profile.id}`,
            max_tokens: 32,
            messages: [{ role: 'user', content: userText(marker) }],
            ...nativeCase.body(marker),
          };
          const response = await call(gateway.url, 'POST', '/v1/messages', {
            headers: messagesHeaders(key, { 'svc-route-mode': 'native' }),
            body,
          });
          return { profile, marker, body, response };
        }),
      );
      const rejected = (profile: ExpectedProfile) =>
        (profile.nativeRejects ?? []).includes(nativeCase.key as NativeRejectable);
      expect(
        Object.fromEntries(results.map(({ profile, response }) => [profile.id, response.status])),
      ).toEqual(Object.fromEntries(natives.map((profile) => [profile.id, rejected(profile) ? 400 : 200])));
      for (const { profile, marker, body, response } of results) {
        const recorded = recordedWith(marker);
        if (rejected(profile)) {
          expect(response.body.error.message, profile.id).toContain(nativeCase.key);
          expect(recorded, profile.id).toHaveLength(0);
        } else {
          expect(recorded, profile.id).toHaveLength(1);
          // Verbatim: the client's body with only the model replaced.
          expect(recorded[0]!.body, profile.id).toEqual({ ...body, model: `up-${profile.id}` });
        }
      }
    },
  );
});

describe('expected table vs catalogue', () => {
  const project = (row: {
    id: string;
    primitive: string;
    creatable: boolean;
    unsupported: readonly string[];
    stream: boolean;
    native: boolean;
    tokenField?: string | undefined;
    stopFiveOf32: boolean;
    noStreamWithTools: boolean;
    nativeRejects: readonly string[];
  }) => ({ ...row, unsupported: [...row.unsupported].sort(), nativeRejects: [...row.nativeRejects].sort() });

  it('agree row by row (a drift between spec and code shows as a diff)', () => {
    const fromCatalogue = PROFILES.map((row) =>
      project({
        id: row.id,
        primitive: row.primitive,
        creatable: row.availability === 'creatable',
        unsupported: row.unsupported,
        stream: row.stream,
        native: row.native !== 'none',
        tokenField: 'tokenField' in row ? row.tokenField : undefined,
        stopFiveOf32: (row.rules as readonly string[]).includes('stop_sequences_five_of_32_bytes'),
        noStreamWithTools: (row.rules as readonly string[]).includes('no_stream_with_tools'),
        nativeRejects: row.nativeRejects,
      }),
    );
    const fromSpec = EXPECTED_PROFILES.map((row) =>
      project({
        id: row.id,
        primitive: row.primitive,
        creatable: row.creatable,
        unsupported: row.unsupported,
        stream: row.stream,
        native: row.native,
        tokenField: row.tokenField,
        stopFiveOf32: row.stopFiveOf32 === true,
        noStreamWithTools: row.noStreamWithTools === true,
        nativeRejects: row.nativeRejects ?? [],
      }),
    );
    expect(fromCatalogue).toEqual(fromSpec);
  });

  it('every matrix field is exercised by at least one case, and every case has a wire check for each wire it reaches', () => {
    const exercised = new Set(CASES.flatMap((matrixCase) => matrixCase.fields));
    const all = new Set(EXPECTED_PROFILES.flatMap((row) => row.unsupported));
    for (const field of all) expect(exercised.has(field), field).toBe(true);
    for (const matrixCase of CASES) {
      for (const profile of CREATABLE_PROFILES) {
        if (expectation(profile, matrixCase).carried)
          expect(matrixCase.wire[wireOf(profile)], `${matrixCase.key} / ${profile.id}`).toBeDefined();
      }
    }
  });
});
