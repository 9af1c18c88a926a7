import { describe, expect, it } from 'vitest';
import { SETTLEMENT_OUTCOMES, Settlement } from './settlement.js';

const usage = { inputTokens: 10, outputTokens: 5, cacheCreationInputTokens: 2, cacheReadInputTokens: 1 };

describe('Settlement constructors', () => {
  it('build exactly the objects the attempt runner settles with', () => {
    expect(Settlement.completed(1234, usage, 200)).toStrictEqual({
      outcome: 'completed',
      costMicrosUsd: 1234,
      usage,
      httpStatus: 200,
      errorType: null,
    });
    expect(Settlement.refusedUpstream(429, 'http_429')).toStrictEqual({
      outcome: 'refused_upstream',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: 429,
      errorType: 'http_429',
    });
    expect(Settlement.notSent('local_client')).toStrictEqual({
      outcome: 'not_sent',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: 'local_client',
    });
    expect(Settlement.unknown('timeout')).toStrictEqual({
      outcome: 'unknown',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: 'timeout',
    });
    expect(Settlement.unknown('stream_incomplete', 200, usage)).toStrictEqual({
      outcome: 'unknown',
      costMicrosUsd: 0,
      usage,
      httpStatus: 200,
      errorType: 'stream_incomplete',
    });
    expect(Settlement.cancelledRunning('cancelled')).toStrictEqual({
      outcome: 'cancelled_running',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: 'cancelled',
    });
    expect(Settlement.leaseExpired()).toStrictEqual({
      outcome: 'lease_expired',
      costMicrosUsd: 0,
      usage: null,
      httpStatus: null,
      errorType: 'lease_expired',
    });
  });

  it('has one constructor for every outcome of the union', () => {
    const built = [
      Settlement.completed(0, null, 200),
      Settlement.refusedUpstream(500, 'http_5xx'),
      Settlement.notSent(null),
      Settlement.unknown(null),
      Settlement.cancelledRunning(null),
      Settlement.leaseExpired(),
    ].map((settlement) => settlement.outcome);
    expect(built).toEqual([...SETTLEMENT_OUTCOMES]);
    expect(Object.keys(Settlement)).toHaveLength(SETTLEMENT_OUTCOMES.length);
  });
});
