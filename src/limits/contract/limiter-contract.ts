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

    it('takes several buckets all or nothing, answering remaining and time to full', async () => {
      const limiter = await harness().open();
      const [a, b] = [bucket(), bucket()];
      const t0 = 1_800_000_000_000;
      const sizes = { a: { ratePerSecond: 1, burst: 10 }, b: { ratePerSecond: 1, burst: 4 } };
      const takes = (unitsA: number, unitsB: number) => [
        { bucketKey: a, units: unitsA, size: sizes.a },
        { bucketKey: b, units: unitsB, size: sizes.b },
      ];
      expect(await limiter.takeAll(takes(3, 3), t0)).toEqual({
        allowed: true,
        answers: [
          { allowed: true, waitMs: 0, remaining: 7, fullInMs: 3000 },
          { allowed: true, waitMs: 0, remaining: 1, fullInMs: 3000 },
        ],
      });
      // b has 1 left: refused, and a keeps its 7 (nothing taken from either).
      expect(await limiter.takeAll(takes(5, 2), t0)).toEqual({
        allowed: false,
        answers: [
          { allowed: true, waitMs: 0, remaining: 7, fullInMs: 3000 },
          { allowed: false, waitMs: 1000, remaining: 1, fullInMs: 3000 },
        ],
      });
      expect((await limiter.takeAll(takes(7, 1), t0)).allowed).toBe(true);
      expect((await limiter.takeAll(takes(0, 5), t0)).answers[1]!.waitMs).toBe(Number.POSITIVE_INFINITY);
    });

    it('adjusts a bucket: gives back up to the burst, takes down to 0, never beyond', async () => {
      const limiter = await harness().open();
      const key = bucket();
      const t0 = 1_800_000_000_000;
      const size = { ratePerSecond: 0.001, burst: 100 };
      const take = [{ bucketKey: key, units: 90, size }];
      expect((await limiter.takeAll(take, t0)).answers[0]!.remaining).toBe(10);
      await limiter.adjustAll([{ bucketKey: key, units: 85, size }], t0);
      expect((await limiter.takeAll(take, t0)).answers[0]!.remaining).toBe(5);
      await limiter.adjustAll([{ bucketKey: key, units: 1000, size }], t0);
      expect((await limiter.takeAll([{ bucketKey: key, units: 0, size }], t0)).answers[0]!.remaining).toBe(
        100,
      );
      await limiter.adjustAll([{ bucketKey: key, units: -1000, size }], t0);
      expect((await limiter.takeAll([{ bucketKey: key, units: 1, size }], t0)).allowed).toBe(false);
    });

    it('shares multi-bucket takes between replicas: concurrent takes allow exactly the smallest burst', async () => {
      const h = harness();
      const replicas = [await h.open(), await h.open()];
      const [a, b] = [bucket(), bucket()];
      const t0 = 1_800_000_000_000;
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, index) =>
          replicas[index % 2]!.takeAll(
            [
              { bucketKey: index % 2 === 0 ? a : b, units: 1, size: { ratePerSecond: 0.001, burst: 50 } },
              { bucketKey: index % 2 === 0 ? b : a, units: 1, size: { ratePerSecond: 0.001, burst: 6 } },
            ],
            t0,
          ),
        ),
      );
      expect(answers.filter((answer) => answer.allowed).length).toBe(h.shared ? 6 : 12);
    });
  });
}
