import { describe, expect, it } from 'vitest';
import { newRateScope } from '../limits/rate-limit-scope.js';
import { rateLimitHeaders, vendorbDuration } from './rate-limit-headers.js';

describe('rate-limit headers', () => {
  it('writes vendorb durations like the vendor (ms below a second, then s, then m and s)', () => {
    expect(vendorbDuration(0)).toBe('0ms');
    expect(vendorbDuration(249.2)).toBe('250ms');
    expect(vendorbDuration(1500)).toBe('1.5s');
    expect(vendorbDuration(12_000)).toBe('12s');
    expect(vendorbDuration(60_000)).toBe('1m0s');
    expect(vendorbDuration(90_500)).toBe('1m30.5s');
  });

  it('renders the scope in the dialect of the path, and nothing without a limit', () => {
    const scope = newRateScope();
    expect(rateLimitHeaders('/v1/messages', scope, 0)).toEqual({});
    scope.state = {
      requests: { limit: 60, remaining: 0, fullInMs: 60_000 },
      tokens: { limit: 1000, remaining: 900, fullInMs: 6000 },
    };
    scope.refusedBy = 'project_requests';
    const now = Date.parse('2026-11-23T12:00:00.250Z');
    expect(rateLimitHeaders('/v1/messages', scope, now)).toEqual({
      'vendora-ratelimit-requests-limit': '60',
      'vendora-ratelimit-requests-remaining': '0',
      'vendora-ratelimit-requests-reset': '2026-11-23T12:01:01Z',
      'vendora-ratelimit-tokens-limit': '1000',
      'vendora-ratelimit-tokens-remaining': '900',
      'vendora-ratelimit-tokens-reset': '2026-11-23T12:00:07Z',
      'svc-rate-limited': 'project_requests',
    });
    expect(rateLimitHeaders('/v1/moderations', scope, now)).toEqual({
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1m0s',
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '900',
      'x-ratelimit-reset-tokens': '6s',
      'svc-rate-limited': 'project_requests',
    });
  });
});
