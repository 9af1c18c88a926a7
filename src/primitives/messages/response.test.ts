import { describe, expect, it } from 'vitest';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { UpstreamProtocolError } from '../shared/types.js';
import {
  buildCountTokensRequest,
  DEFAULT_MESSAGES_OPTIONS,
  mapMessagesError,
  messagesPrimitive,
  parseCountTokensResponse,
  parseMessagesResponse,
  passthroughResponse,
  replaceModel,
} from './index.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson } = goldenFixtures('messages');

const MINIMAL = { content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn' };

describe('replaceModel', () => {
  it('copies with only the model replaced, in place, without mutating the input', () => {
    const body = { model: 'alias', max_tokens: 5, unknown_future_field: { a: 1 } };
    const result = replaceModel(body, 'upstream');
    expect(result).toEqual({ model: 'upstream', max_tokens: 5, unknown_future_field: { a: 1 } });
    expect(Object.keys(result)).toEqual(['model', 'max_tokens', 'unknown_future_field']);
    expect(body.model).toBe('alias');
    expect(result.unknown_future_field).toBe(body.unknown_future_field);
  });
});

describe('parseMessagesResponse', () => {
  it('normalises missing usage counters to 0 and a missing stop_sequence to null', () => {
    const message = parseMessagesResponse(MINIMAL, FIXTURE_CONTEXT);
    expect(message.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(message.stop_sequence).toBeNull();
    expect(message.id).toBe(FIXTURE_CONTEXT.messageId);
  });

  it.each([
    ['not an object', 'nope'],
    ['wrong type', { ...MINIMAL, type: 'error' }],
    ['no content', { type: 'message' }],
    ['unknown block', { content: [{ type: 'server_tool_use', id: 'x', name: 'y', input: {} }] }],
    ['tool input not an object', { content: [{ type: 'tool_use', id: 'x', name: 'y', input: '{}' }] }],
    ['unknown stop reason', { ...MINIMAL, stop_reason: 'something_new' }],
    ['negative usage', { ...MINIMAL, usage: { input_tokens: -1 } }],
  ])('refuses %s', (_, body) => {
    expect(() => parseMessagesResponse(body, FIXTURE_CONTEXT)).toThrow(UpstreamProtocolError);
  });

  it('is what the primitive object exposes', () => {
    expect(messagesPrimitive.name).toBe('messages');
    expect(
      messagesPrimitive.parseResponse(MINIMAL, FIXTURE_CONTEXT, DEFAULT_MESSAGES_OPTIONS).content,
    ).toEqual([{ type: 'text', text: 'hi' }]);
  });
});

describe('passthroughResponse', () => {
  it('keeps every upstream field and replaces only the model', () => {
    const body = fixtureJson('response-text.json') as Record<string, unknown>;
    const result = passthroughResponse(body, FIXTURE_CONTEXT);
    expect(result).toEqual({ ...body, model: FIXTURE_CONTEXT.responseModel });
    expect(body.model).toBe('vendora-upstream-1-20260101');
  });
});

describe('count_tokens', () => {
  it('forwards the body with only the model replaced and reads input_tokens', () => {
    const wire = buildCountTokensRequest(
      { model: 'a', messages: [] },
      FIXTURE_CONTEXT,
      DEFAULT_MESSAGES_OPTIONS,
    );
    expect(wire).toEqual({
      path: '/v1/messages/count_tokens',
      body: { model: FIXTURE_CONTEXT.upstreamModel, messages: [] },
      headers: { 'vendora-version': '2023-06-01' },
    });
    expect(parseCountTokensResponse({ input_tokens: 12 })).toEqual({ input_tokens: 12 });
    expect(() => parseCountTokensResponse({})).toThrow(UpstreamProtocolError);
  });
});

describe('mapMessagesError', () => {
  it('falls back to the status rule for wire types outside the canonical set', () => {
    expect(
      mapMessagesError(504, { type: 'error', error: { type: 'timeout_error', message: 't' } }, {}),
    ).toEqual({
      status: 504,
      type: 'api_error',
      message: 't',
      retryable: true,
    });
    expect(
      mapMessagesError(413, { type: 'error', error: { type: 'request_too_large', message: 'big' } }, {}),
    ).toEqual({
      status: 413,
      type: 'invalid_request_error',
      message: 'big',
      retryable: false,
    });
  });

  it('reads text bodies, JSON text bodies and array headers', () => {
    expect(mapMessagesError(502, '<html>bad gateway</html>', {}).message).toBe('<html>bad gateway</html>');
    expect(
      mapMessagesError(429, '{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}', {
        'retry-after': ['12'],
      }),
    ).toEqual({ status: 429, type: 'rate_limit_error', message: 'slow', retryable: true, retryAfter: '12' });
    expect(mapMessagesError(400, undefined, {}).message).toBe('upstream answered HTTP 400');
  });
});
