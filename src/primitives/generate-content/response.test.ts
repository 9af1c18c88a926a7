import { describe, expect, it } from 'vitest';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { UpstreamProtocolError } from '../shared/types.js';
import { canonicalUsage, parseGenerateContentResponse, stopReasonFor } from './response.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson } = goldenFixtures('generate-content');

const parse = (body: unknown) => parseGenerateContentResponse(body, FIXTURE_CONTEXT);
const usageMetadata = { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 };

describe('generate-content response', () => {
  it('maps the golden fixture: parts concatenated, thoughts billed as output', () => {
    expect(parse(fixtureJson('response-thinking.json'))).toEqual(
      fixtureJson('response-thinking.expected.json'),
    );
  });

  it('maps a blocked prompt to a refusal with empty content', () => {
    expect(parse(fixtureJson('response-prompt-blocked.json'))).toMatchObject({
      content: [],
      stop_reason: 'refusal',
      usage: { input_tokens: 9, output_tokens: 0 },
    });
  });

  it('has no text block when the candidate has no parts (MAX_TOKENS while thinking)', () => {
    const body = {
      candidates: [{ content: { role: 'model' }, finishReason: 'MAX_TOKENS', index: 0 }],
      usageMetadata,
    };
    expect(parse(body)).toMatchObject({ content: [], stop_reason: 'max_tokens' });
  });

  it('skips thought-summary parts and refuses parts it cannot translate', () => {
    const candidate = (parts: unknown[]) => ({
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }],
      usageMetadata,
    });
    expect(parse(candidate([{ text: 'thinking...', thought: true }, { text: 'Answer' }])).content).toEqual([
      { type: 'text', text: 'Answer' },
    ]);
    expect(() => parse(candidate([{ functionCall: { name: 'f', args: {} } }]))).toThrow(
      UpstreamProtocolError,
    );
    expect(() => parse({ usageMetadata })).toThrow(UpstreamProtocolError);
    expect(() => parse({ candidates: [{ content: { parts: [{ text: 'x' }] } }] })).toThrow(/usageMetadata/);
  });

  it.each([
    ['STOP', 'end_turn'],
    ['MAX_TOKENS', 'max_tokens'],
    ['CONTINUATION', 'max_tokens'],
    ['SAFETY', 'refusal'],
    ['RECITATION', 'refusal'],
    ['BLOCKLIST', 'refusal'],
    ['PROHIBITED_CONTENT', 'refusal'],
    ['SPII', 'refusal'],
    ['LANGUAGE', 'end_turn'],
    ['OTHER', 'end_turn'],
    ['MALFORMED_FUNCTION_CALL', 'end_turn'],
    ['SOMETHING_NEW', 'end_turn'],
    ['toString', 'end_turn'],
  ])('finishReason %s -> %s', (finishReason, stopReason) => {
    expect(stopReasonFor(finishReason)).toBe(stopReason);
  });
});

describe('generate-content usage arithmetic', () => {
  it('input excludes the cached part, tool-use prompt counts as input, thoughts count as output', () => {
    expect(
      canonicalUsage({
        promptTokenCount: 2100,
        cachedContentTokenCount: 2048,
        toolUsePromptTokenCount: 10,
        candidatesTokenCount: 15,
        thoughtsTokenCount: 804,
        totalTokenCount: 2929,
      }),
    ).toEqual({
      input_tokens: 62,
      output_tokens: 819,
      cache_read_input_tokens: 2048,
      cache_creation_input_tokens: 0,
    });
  });

  it('reads missing counts as 0 and rejects inconsistent ones', () => {
    expect(canonicalUsage({})).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    expect(() => canonicalUsage({ promptTokenCount: 1, cachedContentTokenCount: 2 })).toThrow(
      UpstreamProtocolError,
    );
    expect(() => canonicalUsage({ candidatesTokenCount: '3' })).toThrow(UpstreamProtocolError);
  });
});
