/**
 * The limiter contract, run on every adapter. `open()` returns a limiter over the shared place
 * (store, Redis); two opened limiters stand for two replicas.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Limiter } from '../limiter.js';

export interface LimiterHarness {
  open(): Promise<Limiter>;
  /** Whether two opened limiters share buckets (false for the in-process memory limiter). */
  shared: boolean;
}

export function describeLimiterContract(name: string, harness: () => LimiterHarness): void {
  describe(`limiter contract: ${name}`, () => {
    const bucket = () => `test:${randomBytes(6).toString('hex')}`;
    const size = { ratePerSecond: 2, burst: 3 };

    it('allows a burst, then answers the wait until the next token, and refills with time', async () => {
      const limiter = await harness().open();
      const key = bucket();
      const t0 = 1_800_000_000_000;
      for (let index = 0; index < 3; index++)
        expect(await limiter.take(key, 1, size, t0)).toEqual({ allowed: true, waitMs: 0 });
      expect(await limiter.take(key, 1, size, t0)).toEqual({ allowed: false, waitMs: 500 });
      expect(await limiter.take(key, 1, size, t0 + 250)).toEqual({ allowed: false, waitMs: 250 });
      expect(await limiter.take(key, 1, size, t0 + 500)).toEqual({ allowed: true, waitMs: 0 });
      // Refill is capped at the burst.
      expect(await limiter.take(key, 3, size, t0 + 60_000)).toEqual({ allowed: true, waitMs: 0 });
      expect((await limiter.take(key, 1, size, t0 + 60_000)).allowed).toBe(false);
    });

    it('takes several units at once, and never allows more than the burst', async () => {
      const limiter = await harness().open();
      const key = bucket();
      const t0 = 1_800_000_000_000;
      expect(await limiter.take(key, 2, size, t0)).toEqual({ allowed: true, waitMs: 0 });
      expect(await limiter.take(key, 2, size, t0)).toEqual({ allowed: false, waitMs: 500 });
      expect(await limiter.take(key, 4, size, t0)).toEqual({
        allowed: false,
        waitMs: Number.POSITIVE_INFINITY,
      });
      expect(await limiter.take(bucket(), 1, size, t0)).toEqual({ allowed: true, waitMs: 0 });
    });

    it('shares one bucket between replicas: concurrent takes allow exactly the burst', async () => {
      const h = harness();
      const replicas = [await h.open(), await h.open()];
      const key = bucket();
      const t0 = 1_800_000_000_000;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          replicas[index % 2]!.take(key, 1, { ratePerSecond: 0.001, burst: 5 }, t0),
        ),
      );
      const allowed = answers.filter((answer) => answer.allowed).length;
      expect(allowed).toBe(h.shared ? 5 : 10);
    });
  });
}
