import { describe, expect, it } from 'vitest';
import { mapResponsesError, streamErrorType } from './error.js';

describe('responses errors', () => {
  it('maps the vendorb body by status and keeps the message and retry-after', () => {
    const body = {
      error: {
        message: 'Rate limit reached for requests',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    };
    expect(mapResponsesError(429, body, { 'retry-after': '7' })).toEqual({
      status: 429,
      type: 'rate_limit_error',
      message: 'Rate limit reached for requests (rate_limit_exceeded)',
      retryable: true,
      retryAfter: '7',
    });
    expect(
      mapResponsesError(
        400,
        { error: { message: 'bad', type: 'invalid_request_error', param: 'input', code: null } },
        {},
      ),
    ).toMatchObject({
      type: 'invalid_request_error',
      message: 'bad',
      retryable: false,
    });
    expect(mapResponsesError(503, '<html>down</html>', {})).toMatchObject({
      type: 'overloaded_error',
      retryable: true,
    });
    expect(mapResponsesError(500, undefined, {})).toMatchObject({
      type: 'api_error',
      message: 'upstream answered HTTP 500',
    });
  });

  it('maps stream error codes', () => {
    expect(streamErrorType('rate_limit_exceeded')).toBe('rate_limit_error');
    expect(streamErrorType('server_error')).toBe('api_error');
    expect(streamErrorType('invalid_prompt')).toBe('invalid_request_error');
    expect(streamErrorType(undefined)).toBe('api_error');
  });
});
