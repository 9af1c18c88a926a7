import { describe, expect, it } from 'vitest';
import { errorTypeForStatus, isRetryableStatus } from '../shared/error-status.js';
import { mapChatError } from './error.js';

const rateLimitBody = {
  error: {
    message: 'Rate limit reached',
    type: 'rate_limit_error',
    param: null,
    code: 'rate_limit_exceeded',
  },
};

describe('mapChatError', () => {
  it.each([
    [400, 'invalid_request_error', false],
    [401, 'authentication_error', false],
    [403, 'permission_error', false],
    [404, 'not_found_error', false],
    [408, 'invalid_request_error', true],
    [409, 'invalid_request_error', true],
    [413, 'invalid_request_error', false],
    [422, 'invalid_request_error', false],
    [429, 'rate_limit_error', true],
    [500, 'api_error', true],
    [502, 'api_error', true],
    [503, 'overloaded_error', true],
    [504, 'api_error', true],
    [529, 'overloaded_error', true],
  ] as const)('maps HTTP %i to %s (retryable %s)', (status, type, retryable) => {
    const info = mapChatError(status, { error: { message: 'm' } }, {});
    expect(info).toEqual({ status, type, message: 'm', retryable });
    expect(errorTypeForStatus(status)).toBe(type);
    expect(isRetryableStatus(status)).toBe(retryable);
  });

  it('keeps the retry-after header and names the upstream type and code', () => {
    const info = mapChatError(429, rateLimitBody, { 'Retry-After': '7' });
    expect(info).toEqual({
      status: 429,
      type: 'rate_limit_error',
      message: 'Rate limit reached (rate_limit_error, rate_limit_exceeded)',
      retryable: true,
      retryAfter: '7',
    });
    expect(mapChatError(503, {}, { 'retry-after': ['2', '3'] }).retryAfter).toBe('2');
  });

  it('is lenient about the body', () => {
    expect(mapChatError(500, undefined, {}).message).toBe('upstream returned HTTP 500');
    expect(mapChatError(502, '<html>Bad gateway</html>', {}).message).toBe(
      'upstream returned HTTP 502: <html>Bad gateway</html>',
    );
    expect(mapChatError(400, { error: { message: 42 } }, {}).message).toBe('upstream returned HTTP 400');
    expect(mapChatError(400, { error: null }, {}).type).toBe('invalid_request_error');
  });
});
