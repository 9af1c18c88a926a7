import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { responsesCannotCarry } from './cannot-carry.js';
import { DEFAULT_RESPONSES_OPTIONS } from './options.js';
import { buildResponsesRequest } from './request.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson } = goldenFixtures('responses');

const build = (request: MessagesRequest) =>
  buildResponsesRequest(request, FIXTURE_CONTEXT, DEFAULT_RESPONSES_OPTIONS);
const base: MessagesRequest = {
  model: 'gpt-alias',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hi' }],
};

describe('responses request', () => {
  it('maps the tool round trip golden fixture (system, images, call ids, outputs, tools, format)', () => {
    const request = fixtureJson('request-tool-round-trip.input.json') as MessagesRequest;
    expect(responsesCannotCarry(request)).toBeUndefined();
    expect(build(request)).toEqual(fixtureJson('request-tool-round-trip.expected.json'));
  });

  it('sends a minimal stateless body and stream only when streaming', () => {
    expect(build(base)).toEqual({
      path: '/responses',
      body: {
        model: 'gpt-upstream-1',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
        max_output_tokens: 100,
        store: false,
      },
    });
    expect((build({ ...base, stream: true }).body as { stream?: boolean }).stream).toBe(true);
  });

  it('maps every tool_choice', () => {
    const choice = (tool_choice: MessagesRequest['tool_choice']) =>
      (build({ ...base, tool_choice }).body as { tool_choice: unknown }).tool_choice;
    expect(choice({ type: 'auto' })).toBe('auto');
    expect(choice({ type: 'any' })).toBe('required');
    expect(choice({ type: 'none' })).toBe('none');
    expect(choice({ type: 'tool', name: 'get_weather' })).toEqual({ type: 'function', name: 'get_weather' });
  });

  it('keeps tool results with images as a part list', () => {
    const request: MessagesRequest = {
      ...base,
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'shot', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: 'screen' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
              ],
            },
          ],
        },
      ],
    };
    expect((build(request).body as { input: unknown[] }).input[1]).toEqual({
      type: 'function_call_output',
      call_id: 'toolu_1',
      output: [
        { type: 'input_text', text: 'screen' },
        { type: 'input_image', image_url: 'data:image/jpeg;base64,AAAA', detail: 'auto' },
      ],
    });
  });
});

describe('responsesCannotCarry', () => {
  const reason = (request: Partial<MessagesRequest>) => responsesCannotCarry({ ...base, ...request });

  it('accepts what it maps', () => {
    expect(reason({ thinking: { type: 'disabled' }, temperature: 0 })).toBeUndefined();
  });

  it.each([
    [{ stop_sequences: ['END'] }, 'stop_sequences'],
    [{ top_k: 5 }, 'top_k'],
    [{ thinking: { type: 'enabled', budget_tokens: 2048 } }, 'thinking'],
    [{ output_config: { effort: 'high' } }, 'output_config.effort'],
    [{ tools: [{ type: 'bash_20250124', name: 'bash' }] }, 'tools[0]'],
    [
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
          },
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
        messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }] }],
      },
      'thinking',
    ],
    [
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] },
        ],
      },
      'file source',
    ],
  ] as Array<[Partial<MessagesRequest>, string]>)('refuses %j naming %s', (request, named) => {
    expect(reason(request)).toContain(named);
  });
});
