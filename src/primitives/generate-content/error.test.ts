import { describe, expect, it } from 'vitest';
import { goldenFixtures } from '../shared/golden-fixtures.js';
import { mapGenerateContentError, streamErrorType } from './error.js';

const { json: fixtureJson } = goldenFixtures('generate-content');

describe('generate-content errors', () => {
  it('maps RESOURCE_EXHAUSTED with the RetryInfo delay rounded up', () => {
    expect(mapGenerateContentError(429, fixtureJson('error-resource-exhausted.json'), {})).toEqual({
      status: 429,
      type: 'rate_limit_error',
      message:
        'You exceeded your current quota, please check your plan and billing details. (RESOURCE_EXHAUSTED)',
      retryable: true,
      retryAfter: '35',
    });
  });

  it('prefers a retry-after header and maps other statuses by the shared rule', () => {
    expect(
      mapGenerateContentError(429, fixtureJson('error-resource-exhausted.json'), { 'retry-after': '3' })
        .retryAfter,
    ).toBe('3');
    const body = (code: number, status: string) => ({ error: { code, message: 'm', status } });
    expect(mapGenerateContentError(400, body(400, 'INVALID_ARGUMENT'), {})).toMatchObject({
      type: 'invalid_request_error',
      retryable: false,
    });
    expect(mapGenerateContentError(404, body(404, 'NOT_FOUND'), {})).toMatchObject({
      type: 'not_found_error',
      retryable: false,
    });
    expect(mapGenerateContentError(503, body(503, 'UNAVAILABLE'), {})).toMatchObject({
      type: 'overloaded_error',
      retryable: true,
    });
    expect(mapGenerateContentError(504, 'Gateway Timeout', {})).toMatchObject({
      type: 'api_error',
      message: 'Gateway Timeout',
      retryable: true,
    });
  });

  it('maps stream errors by code, else by RPC status', () => {
    expect(streamErrorType({ code: 429, status: 'RESOURCE_EXHAUSTED' })).toBe('rate_limit_error');
    expect(streamErrorType({ status: 'UNAVAILABLE' })).toBe('overloaded_error');
    expect(streamErrorType({})).toBe('api_error');
  });
});
