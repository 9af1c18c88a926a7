import { describe, expect, it } from 'vitest';
import { firstCacheControlPath, hasCacheControl, requestFacts } from './request-facts.js';
import type { MessagesRequest } from './types.js';

function request(messages: unknown[], extra: Record<string, unknown> = {}): MessagesRequest {
  return { model: 'alias', max_tokens: 100, messages, ...extra } as MessagesRequest;
}

const png = { type: 'base64', media_type: 'image/png', data: 'A'.repeat(40) };
const pdf = { type: 'base64', media_type: 'application/pdf', data: 'B'.repeat(100) };

describe('requestFacts', () => {
  it('counts images and documents everywhere and the bytes of their base64 data', () => {
    const facts = requestFacts(
      request([
        { role: 'user', content: 'no blocks' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: png },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
            { type: 'document', source: pdf },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain text é' } },
            {
              type: 'document',
              source: {
                type: 'content',
                content: [
                  { type: 'text', text: 't' },
                  { type: 'image', source: png },
                ],
              },
            },
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [
                { type: 'image', source: png },
                { type: 'document', source: pdf },
                { type: 'text', text: 'x' },
              ],
            },
          ],
        },
      ]),
    );
    expect(facts).toEqual({ images: 4, documents: 4, embeddedDataBytes: 40 * 3 + 100 * 2 });
  });

  it('is zero for a text-only request', () => {
    expect(requestFacts(request([{ role: 'user', content: 'Hi' }]))).toEqual({
      images: 0,
      documents: 0,
      embeddedDataBytes: 0,
    });
  });
});

describe('hasCacheControl', () => {
  const mark = { type: 'ephemeral' };
  it('finds cache_control in system blocks, message blocks, nested content and tools', () => {
    const text = { type: 'text', text: 'x' };
    const cases: Array<[MessagesRequest, string]> = [
      [
        request([{ role: 'user', content: 'Hi' }], { system: [text, { ...text, cache_control: mark }] }),
        'system.1.cache_control',
      ],
      [
        request([{ role: 'user', content: [{ ...text, cache_control: mark }] }]),
        'messages.0.content.0.cache_control',
      ],
      [
        request([
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't', content: [{ ...text, cache_control: mark }] }],
          },
        ]),
        'messages.0.content.0.content.0.cache_control',
      ],
      [
        request([
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [
                  {
                    type: 'search_result',
                    source: 's',
                    title: 't',
                    content: [{ ...text, cache_control: mark }],
                  },
                ],
              },
            ],
          },
        ]),
        'messages.0.content.0.content.0.content.0.cache_control',
      ],
      [
        request([
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'content', content: [{ ...text, cache_control: mark }] } },
            ],
          },
        ]),
        'messages.0.content.0.source.content.0.cache_control',
      ],
      [
        request([{ role: 'user', content: 'Hi' }], {
          tools: [{ name: 'n', input_schema: { type: 'object' }, cache_control: mark }],
        }),
        'tools.0.cache_control',
      ],
      [
        request([
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [{ type: 'web_search_tool_result', tool_use_id: 's', content: [], cache_control: mark }],
          },
        ]),
        'messages.1.content.0.cache_control',
      ],
    ];
    for (const [body, path] of cases) {
      expect(hasCacheControl(body)).toBe(true);
      expect(firstCacheControlPath(body)).toBe(path);
    }
  });

  it('is false without cache_control, and for cache_control: null', () => {
    expect(hasCacheControl(request([{ role: 'user', content: 'Hi' }], { system: 'S', tools: [] }))).toBe(
      false,
    );
    expect(
      hasCacheControl(
        request([{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: null }] }]),
      ),
    ).toBe(false);
  });

  it('works on count_tokens requests', () => {
    expect(
      hasCacheControl({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: mark }] }],
      } as never),
    ).toBe(true);
  });
});
