import { describe, expect, it } from 'vitest';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { UpstreamProtocolError } from '../shared/types.js';
import { canonicalUsage, parseResponsesResponse } from './response.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson } = goldenFixtures('responses');

const parse = (body: unknown) => parseResponsesResponse(body, FIXTURE_CONTEXT);
const usage = { input_tokens: 10, output_tokens: 5 };
const message = (text: string) => ({
  type: 'message',
  id: 'msg_1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});

describe('responses response', () => {
  it('maps the golden fixture: reasoning ignored, call_id as tool id, cached tokens split out', () => {
    expect(parse(fixtureJson('response-tool-call.json'))).toEqual(
      fixtureJson('response-tool-call.expected.json'),
    );
  });

  it('maps the stop reasons', () => {
    const stop = (body: Record<string, unknown>) =>
      parse({ status: 'completed', output: [message('x')], usage, ...body }).stop_reason;
    expect(stop({})).toBe('end_turn');
    expect(stop({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })).toBe(
      'max_tokens',
    );
    expect(stop({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } })).toBe('refusal');
    expect(stop({ status: 'incomplete', incomplete_details: { reason: 'max_messages' } })).toBe('end_turn');
    expect(stop({ output: [{ type: 'message', content: [{ type: 'refusal', refusal: 'No.' }] }] })).toBe(
      'refusal',
    );
  });

  it('reports refusal text as a text block', () => {
    const response = parse({
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'refusal', refusal: 'No.' }] }],
      usage,
    });
    expect(response.content).toEqual([{ type: 'text', text: 'No.' }]);
  });

  it('treats empty arguments as no input and rejects invalid JSON arguments', () => {
    const call = (args: string) => ({ type: 'function_call', call_id: 'call_1', name: 'f', arguments: args });
    expect(parse({ output: [call('')], usage }).content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
    ]);
    expect(() => parse({ output: [call('{"city":')], usage })).toThrow(UpstreamProtocolError);
    expect(() => parse({ output: [call('[1,2]')], usage })).toThrow(UpstreamProtocolError);
  });

  it('turns a failed or unfinished response into UpstreamProtocolError naming the code', () => {
    const failed = {
      status: 'failed',
      error: { code: 'server_error', message: 'boom' },
      output: [],
      usage: null,
    };
    expect(() => parse(failed)).toThrow(/server_error: boom/);
    expect(() => parse({ status: 'in_progress', output: [], usage })).toThrow(UpstreamProtocolError);
    expect(() => parse('nope')).toThrow(UpstreamProtocolError);
  });

  it('refuses a response without usage (its cost could not be settled)', () => {
    expect(() => parse({ status: 'completed', output: [message('x')] })).toThrow(/usage/);
  });
});

describe('responses usage arithmetic', () => {
  it('subtracts cached and cache-written tokens from input; output keeps reasoning', () => {
    expect(
      canonicalUsage({
        input_tokens: 2006,
        input_tokens_details: { cached_tokens: 1920, cache_write_tokens: 50 },
        output_tokens: 300,
        output_tokens_details: { reasoning_tokens: 128 },
      }),
    ).toEqual({
      input_tokens: 36,
      output_tokens: 300,
      cache_read_input_tokens: 1920,
      cache_creation_input_tokens: 50,
    });
  });

  it('rejects inconsistent or malformed counts', () => {
    expect(() => canonicalUsage({ input_tokens: 10, input_tokens_details: { cached_tokens: 11 } })).toThrow(
      UpstreamProtocolError,
    );
    expect(() => canonicalUsage({ input_tokens: -1 })).toThrow(UpstreamProtocolError);
    expect(() => canonicalUsage({ input_tokens: 1.5 })).toThrow(UpstreamProtocolError);
    expect(canonicalUsage(null)).toBeUndefined();
  });
});
