import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { validateCountTokensRequest, validateMessagesRequest } from './validate-messages.js';

// Arbitrary valid canonical (portable) requests: every shape the canonical model carries, without
// what portable mode refuses (cache_control, strict, signed thinking, vendora-defined tools).

const text = fc.record(
  {
    type: fc.constant('text' as const),
    text: fc.string(),
    citations: fc.option(
      fc.array(fc.record({ type: fc.constant('char_location'), cited_text: fc.string() }), { maxLength: 2 }),
    ),
  },
  { requiredKeys: ['type', 'text'] },
);

const imageSource = fc.oneof(
  fc.record({
    type: fc.constant('base64'),
    media_type: fc.constantFrom('image/jpeg', 'image/png', 'image/gif', 'image/webp'),
    data: fc.base64String({ maxLength: 64 }),
  }),
  fc.record({ type: fc.constant('url'), url: fc.webUrl() }),
  fc.record({ type: fc.constant('file'), file_id: fc.string({ minLength: 1, maxLength: 20 }) }),
);
const image = fc.record({ type: fc.constant('image' as const), source: imageSource });

const documentSource = fc.oneof(
  fc.record({
    type: fc.constant('base64'),
    media_type: fc.constant('application/pdf'),
    data: fc.base64String({ maxLength: 64 }),
  }),
  fc.record({ type: fc.constant('text'), media_type: fc.constant('text/plain'), data: fc.string() }),
  fc.record({
    type: fc.constant('content'),
    content: fc.oneof(fc.string(), fc.array(fc.oneof(text, image), { maxLength: 3 })),
  }),
  fc.record({ type: fc.constant('url'), url: fc.webUrl() }),
  fc.record({ type: fc.constant('file'), file_id: fc.string({ minLength: 1, maxLength: 20 }) }),
);
const document = fc.record(
  {
    type: fc.constant('document' as const),
    source: documentSource,
    title: fc.option(fc.string()),
    context: fc.option(fc.string()),
    citations: fc.option(fc.record({ enabled: fc.boolean() }, { requiredKeys: [] })),
  },
  { requiredKeys: ['type', 'source'] },
);

const searchResult = fc.record(
  {
    type: fc.constant('search_result' as const),
    source: fc.string(),
    title: fc.string(),
    content: fc.array(text, { maxLength: 3 }),
    citations: fc.record({ enabled: fc.boolean() }),
  },
  { requiredKeys: ['type', 'source', 'title', 'content'] },
);

const toolName = fc.stringMatching(/^[a-zA-Z0-9_-]{1,20}$/);
const json = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

const toolUse = fc.record({
  type: fc.constant('tool_use' as const),
  id: fc.string({ minLength: 1, maxLength: 30 }),
  name: toolName,
  input: json,
});
const toolResult = fc.record(
  {
    type: fc.constant('tool_result' as const),
    tool_use_id: fc.string({ minLength: 1, maxLength: 30 }),
    content: fc.oneof(fc.string(), fc.array(fc.oneof(text, image, searchResult, document), { maxLength: 3 })),
    is_error: fc.boolean(),
  },
  { requiredKeys: ['type', 'tool_use_id'] },
);

const userMessage = fc.record({
  role: fc.constant('user' as const),
  content: fc.oneof(
    fc.string(),
    fc.array(fc.oneof(text, image, document, searchResult, toolResult), { minLength: 1, maxLength: 4 }),
  ),
});
const assistantMessage = fc.record({
  role: fc.constant('assistant' as const),
  content: fc.oneof(fc.string(), fc.array(fc.oneof(text, toolUse), { minLength: 1, maxLength: 3 })),
});

const customTool = (name: string) =>
  fc.record(
    {
      type: fc.constant('custom' as const),
      name: fc.constant(name),
      description: fc.string(),
      input_schema: fc.record(
        { type: fc.constant('object' as const), properties: fc.constant({}) },
        { requiredKeys: ['type'] },
      ),
    },
    { requiredKeys: ['name', 'input_schema'] },
  );
const tools = fc.uniqueArray(toolName, { maxLength: 4 }).chain((names) => fc.tuple(...names.map(customTool)));

function toolChoiceFor(names: string[]) {
  const shapes = [
    fc.record(
      { type: fc.constant('auto' as const), disable_parallel_tool_use: fc.boolean() },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      { type: fc.constant('any' as const), disable_parallel_tool_use: fc.boolean() },
      { requiredKeys: ['type'] },
    ),
    fc.constant({ type: 'none' as const }),
  ];
  if (names.length > 0) {
    shapes.push(fc.record({ type: fc.constant('tool' as const), name: fc.constantFrom(...names) }) as never);
  }
  return fc.oneof(...shapes);
}

function thinkingFor(maxTokens: number) {
  const shapes = [
    fc.constant({ type: 'disabled' as const }),
    fc.record(
      { type: fc.constant('adaptive' as const), display: fc.constantFrom('summarized', 'omitted') },
      { requiredKeys: ['type'] },
    ),
  ];
  if (maxTokens > 1024) {
    shapes.push(
      fc.record({
        type: fc.constant('enabled'),
        budget_tokens: fc.integer({ min: 1024, max: maxTokens - 1 }),
      }) as never,
    );
  }
  return fc.oneof(...shapes);
}

const unit = fc.double({ min: 0, max: 1, noNaN: true });

const canonicalRequest = fc
  .record({ maxTokens: fc.integer({ min: 1, max: 200_000 }), tools })
  .chain(({ maxTokens, tools }) =>
    fc.record(
      {
        model: fc.string({ minLength: 1, maxLength: 40 }),
        max_tokens: fc.constant(maxTokens),
        messages: fc.array(fc.oneof(userMessage, assistantMessage), { minLength: 1, maxLength: 5 }),
        system: fc.oneof(fc.string(), fc.array(text, { maxLength: 2 })),
        stream: fc.boolean(),
        stop_sequences: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 4 }),
        temperature: unit,
        top_p: unit,
        top_k: fc.nat(500),
        tools: fc.constant(tools),
        tool_choice: toolChoiceFor(tools.map((tool) => tool.name)),
        thinking: thinkingFor(maxTokens),
        metadata: fc.record({ user_id: fc.option(fc.string({ maxLength: 64 })) }, { requiredKeys: [] }),
        service_tier: fc.constantFrom('auto', 'standard_only'),
        output_config: fc.record(
          {
            effort: fc.option(fc.constantFrom('low', 'medium', 'high', 'xhigh', 'max')),
            format: fc.option(
              fc.record({ type: fc.constant('json_schema'), schema: fc.constant({ type: 'object' }) }),
            ),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: ['model', 'max_tokens', 'messages', 'tools'] }, // tools kept: tool_choice may name one
    ),
  );

const KNOWN = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'service_tier',
  'output_config',
  'mcp_servers',
  'container',
  'fallbacks',
]);
const unknownField = fc.string({ minLength: 1, maxLength: 24 }).filter((key) => !KNOWN.has(key));

describe('property: valid canonical requests', () => {
  it('are accepted in both modes, returned as the same object', () => {
    fc.assert(
      fc.property(canonicalRequest, (body) => {
        expect(validateMessagesRequest(body, 'portable')).toBe(body);
        expect(validateMessagesRequest(body, 'native')).toBe(body);
      }),
      { numRuns: 300 },
    );
  });

  it('are accepted by count_tokens without their generation-only fields', () => {
    fc.assert(
      fc.property(canonicalRequest, (body) => {
        const {
          max_tokens,
          stream,
          stop_sequences,
          temperature,
          top_p,
          top_k,
          metadata,
          service_tier,
          thinking,
          ...rest
        } = body;
        // Without max_tokens, an enabled budget only has to be >= 1024, which it is.
        const count = thinking ? { ...rest, thinking } : rest;
        expect(validateCountTokensRequest(count)).toBe(count);
      }),
      { numRuns: 100 },
    );
  });

  it('with one unknown top-level field added are always rejected, naming it', () => {
    fc.assert(
      fc.property(
        canonicalRequest,
        unknownField,
        fc.jsonValue({ maxDepth: 1 }),
        fc.constantFrom('portable', 'native'),
        (body, key, value, mode) => {
          const withUnknown = { ...body, [key]: value };
          let caught: unknown;
          try {
            validateMessagesRequest(withUnknown, mode as 'portable' | 'native');
          } catch (error) {
            caught = error;
          }
          expect(caught).toBeInstanceOf(GatewayError);
          const error = caught as GatewayError;
          expect(error.code).toBe('invalid_request');
          expect(error.status).toBe(400);
          expect(error.options.param).toBe(key);
          expect(error.message).toBe(`${key}: unknown field`);
        },
      ),
      { numRuns: 300 },
    );
  });
});
