import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { generateContentCannotCarry } from './cannot-carry.js';
import { DEFAULT_GENERATE_CONTENT_OPTIONS, generateContentOptionsProblem } from './options.js';
import { buildGenerateContentRequest } from './request.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson } = goldenFixtures('generate-content');

const base: MessagesRequest = {
  model: 'gemini-alias',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hi' }],
};
const build = (request: MessagesRequest, thinkingBudget = 0) =>
  buildGenerateContentRequest(request, FIXTURE_CONTEXT, { thinkingBudget });

describe('generate-content request', () => {
  it('maps the golden fixture: system parts, merged roles, inline image, empty text dropped, config', () => {
    const request = fixtureJson('request-text-images.input.json') as MessagesRequest;
    expect(generateContentCannotCarry(request)).toBeUndefined();
    expect(buildGenerateContentRequest(request, FIXTURE_CONTEXT, DEFAULT_GENERATE_CONTENT_OPTIONS)).toEqual(
      fixtureJson('request-text-images.expected.json'),
    );
  });

  it('uses the non-streaming path and always sends maxOutputTokens and the thinking budget', () => {
    expect(build(base, 128)).toEqual({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      body: {
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        generationConfig: { maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 128 } },
      },
    });
  });

  it('sends zero sampling values and top_k', () => {
    const config = (
      build({ ...base, temperature: 0, top_p: 0, top_k: 0 }).body as { generationConfig: unknown }
    ).generationConfig;
    expect(config).toMatchObject({ temperature: 0, topP: 0, topK: 0 });
  });

  it('validates the options', () => {
    expect(generateContentOptionsProblem({ thinkingBudget: 0 })).toBeUndefined();
    expect(generateContentOptionsProblem({ thinkingBudget: -1 })).toContain('thinkingBudget');
    expect(generateContentOptionsProblem({ thinkingBudget: 1.5 })).toContain('thinkingBudget');
  });
});

describe('generateContentCannotCarry', () => {
  const reason = (request: Partial<MessagesRequest>) => generateContentCannotCarry({ ...base, ...request });
  const tool = { name: 'f', input_schema: { type: 'object' as const } };

  it.each([
    [{ tools: [tool] }, 'tools'],
    [{ tool_choice: { type: 'auto' } }, 'tool_choice'],
    [{ thinking: { type: 'enabled', budget_tokens: 1024 } }, 'thinking'],
    [{ output_config: { format: { type: 'json_schema', schema: {} } } }, 'output_config.format'],
    [{ output_config: { effort: 'low' } }, 'output_config.effort'],
    [
      { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }] },
      'tool_use',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }] },
      'tool_result',
    ],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x' } }] },
        ],
      },
      'document',
    ],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [] }] },
        ],
      },
      'search_result',
    ],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] },
        ],
      },
      'url source',
    ],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] },
        ],
      },
      'file source',
    ],
    [
      { messages: [{ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] }] },
      'redacted_thinking',
    ],
    [{ messages: [{ role: 'user', content: '' }] }, 'contents[0]'],
  ] as Array<[Partial<MessagesRequest>, string]>)('refuses %j naming %s', (request, named) => {
    expect(reason(request)).toContain(named);
  });

  it('accepts an empty turn merged into a non-empty one', () => {
    expect(
      reason({
        messages: [
          { role: 'user', content: '' },
          { role: 'user', content: 'Hi' },
        ],
      }),
    ).toBeUndefined();
  });
});
