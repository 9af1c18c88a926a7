/**
 * The background charge table (background-attempt.ts), verb by verb, on a real SQLite store: each
 * verb's outcome, what it commits (the audit entry and the observer agreeing), its error type and
 * the response model reported. The end-to-end cases (cancels, expiries, outages) are in
 * test/resources and test/reliability.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteLedger, type SqliteLedger } from '../../test/support/sqlite-ledger.js';
import type { SettlementOutcome } from '../money/settlement.js';
import { type AttemptObserver, noAttemptObserver } from '../observability/attempt-observer.js';
import type { UpstreamResponse } from '../primitives/shared/upstream-call.js';
import type { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { AttemptRunner, UpstreamExchange } from './attempt-runner.js';
import type { BackgroundAttempt, BackgroundCall } from './background-attempt.js';
import type { AttemptPlan } from './ledger.js';

const RESERVED = 1_000;
const USAGE = { inputTokens: 3, outputTokens: 4, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };

const PLAN: AttemptPlan = {
  projectId: 'prj_background',
  keyId: 'key_background',
  runId: null,
  endpoint: '/v1/responses',
  alias: 'model',
  connection: 'upstream',
  profile: 'vendorb.responses.v1',
  upstreamModel: 'up-1',
  primitive: 'responses',
  streamed: false,
  reservationMicrosUsd: RESERVED,
};

interface Observed {
  outcome: SettlementOutcome;
  cost: number;
  errorType: string | null;
  responseModel: string | null;
}

let opened: SqliteLedger;
let store: SqliteStore;
let runner: AttemptRunner;
let observed: Map<string, Observed>;

const observer: AttemptObserver = {
  ...noAttemptObserver,
  settledHeld: (attemptId, _labels, _reservedAt, result) =>
    observed.set(attemptId, {
      outcome: result.outcome,
      cost: result.costMicrosUsd,
      errorType: result.errorType,
      responseModel: result.responseModel,
    }),
};

/** An upstream answering `status` once: 200 with a priced answer naming `up-1-dated`, else an error. */
function exchangeAnswering(status: number, cost: number | null = 42): UpstreamExchange<string> {
  return {
    send: async () => {
      const body = new PassThrough();
      body.end('{}');
      return { status, headers: {}, body } as unknown as UpstreamResponse;
    },
    refusal: (code) => ({ status: code, message: 'refused', retryable: code === 429 }),
    read: async () => ({ answer: 'ok', costMicrosUsd: cost, usage: USAGE, responseModel: 'up-1-dated' }),
  };
}

beforeEach(async () => {
  observed = new Map();
  opened = await openSqliteLedger(observer);
  ({ store, runner } = opened);
});

afterEach(() => opened.close());

/** Holds an attempt, ends it with `end`, and reads back its audit entry and what the observer heard. */
async function ended(end: (attempt: BackgroundAttempt) => Promise<void>) {
  const held = await runner.hold(PLAN, 'resp_test', 3_600_000);
  await end(runner.held({ attemptId: held.attemptId, createdAt: Date.now() }));
  const audit = (await store.listAudit({ limit: 100 })).filter((entry) => entry.attemptId === held.attemptId);
  expect(audit).toHaveLength(1);
  return { audit: audit[0]!, observed: observed.get(held.attemptId)! };
}

async function sent(status: number, cost: number | null = 42) {
  const held = await runner.hold(PLAN, 'resp_test', 3_600_000);
  const call = await held.send(exchangeAnswering(status, cost), new AbortController().signal);
  return { held, call };
}

describe('the background charge table', () => {
  const withdrawn = [
    ['request_not_stored', 'not_stored'],
    ['queued_response_cancelled', 'cancelled_queued'],
    ['queued_response_expired', 'cancelled_queued'],
    ['target_gone', 'unavailable'],
    ['cancelled_before_fallback', 'cancelled_before_fallback'],
    ['batch_not_created', 'not_created'],
    ['idempotent_replay', 'idempotent_replay'],
    ['batch_cancelled_before_submission', 'cancelled_before_submission'],
    ['payload_missing', 'payload_missing'],
  ] as const;
  it.each(withdrawn)('withdraw(%s): not_sent, nothing charged, error type %s', async (reason, errorType) => {
    const { audit, observed } = await ended((attempt) => attempt.withdraw(reason));
    expect(audit).toMatchObject({ outcome: 'not_sent', state: 'released', costMicrosUsd: 0 });
    expect(observed).toEqual({ outcome: 'not_sent', cost: 0, errorType, responseModel: null });
  });

  const abandoned = [
    ['response_cancelled_running', 'cancelled_running', 'cancelled'],
    ['response_expired_running', 'unknown', 'expired'],
    ['response_interrupted', 'unknown', 'interrupted'],
    ['submission_interrupted', 'unknown', 'submission_interrupted'],
    ['submission_failed', 'unknown', 'submission_failed'],
    ['results_undeliverable', 'unknown', 'results_undeliverable'],
    ['batch_record_expired', 'unknown', 'batch_record_expired'],
  ] as const;
  it.each(abandoned)(
    'abandon(%s): %s, the whole reservation, error type %s',
    async (reason, outcome, errorType) => {
      const { audit, observed } = await ended((attempt) => attempt.abandon(reason));
      expect(audit).toMatchObject({ outcome, state: 'unknown', costMicrosUsd: RESERVED });
      expect(observed).toEqual({ outcome, cost: RESERVED, errorType, responseModel: null });
    },
  );

  it("refused(code): refused_upstream, nothing charged, the batch's code as error type", async () => {
    const { audit, observed } = await ended((attempt) => attempt.refused('upstream_rejected'));
    expect(audit).toMatchObject({ outcome: 'refused_upstream', state: 'settled', costMicrosUsd: 0 });
    expect(observed).toEqual({
      outcome: 'refused_upstream',
      cost: 0,
      errorType: 'upstream_rejected',
      responseModel: null,
    });
  });

  it("finish(results): completed at the batch results' cost, HTTP 200", async () => {
    const { audit, observed } = await ended((attempt) =>
      attempt.finish({ costMicrosUsd: 300, usage: USAGE }),
    );
    expect(audit).toMatchObject({ outcome: 'completed', costMicrosUsd: 300, httpStatus: 200, usage: USAGE });
    expect(observed).toEqual({ outcome: 'completed', cost: 300, errorType: null, responseModel: null });
  });

  it('finish(sent) charges an answered call its cost and reports the model it named', async () => {
    const { held, call } = await sent(200);
    expect(call.kind).toBe('answered');
    expect(observed.size).toBe(0);
    await held.finish((call as Extract<BackgroundCall<string>, { kind: 'answered' }>).sent);
    expect(observed.get(held.attemptId)).toEqual({
      outcome: 'completed',
      cost: 42,
      errorType: null,
      responseModel: 'up-1-dated',
    });
  });

  it('finish(sent) of an answer without a cost commits the whole reservation (unknown, no_cost)', async () => {
    const { held, call } = await sent(200, null);
    await held.finish((call as Extract<BackgroundCall<string>, { kind: 'answered' }>).sent);
    expect(observed.get(held.attemptId)).toMatchObject({
      outcome: 'unknown',
      cost: RESERVED,
      errorType: 'no_cost',
    });
  });

  it('finish(sent) of a refused call charges nothing; the failure names its class for a fallback', async () => {
    const { held, call } = await sent(429);
    expect(call).toMatchObject({ kind: 'failed', retryable: true, errorType: 'http_429' });
    await held.finish((call as Extract<BackgroundCall<string>, { kind: 'failed' }>).sent);
    expect(observed.get(held.attemptId)).toEqual({
      outcome: 'refused_upstream',
      cost: 0,
      errorType: 'http_429',
      responseModel: null,
    });
  });

  it('answerLost(sent): charged at its usage like finish, without the model', async () => {
    const { held, call } = await sent(200);
    await held.answerLost((call as Extract<BackgroundCall<string>, { kind: 'answered' }>).sent);
    expect(observed.get(held.attemptId)).toEqual({
      outcome: 'completed',
      cost: 42,
      errorType: null,
      responseModel: null,
    });
  });

  it('a second verb finds the attempt settled: nothing written, nothing reported', async () => {
    const { held } = await sent(200);
    await held.withdraw('queued_response_cancelled');
    observed.clear();
    await runner
      .held({ attemptId: held.attemptId, createdAt: Date.now() })
      .abandon('response_cancelled_running');
    expect(observed.size).toBe(0);
    const audit = (await store.listAudit({ limit: 100 })).filter(
      (entry) => entry.attemptId === held.attemptId,
    );
    expect(audit).toEqual([expect.objectContaining({ outcome: 'not_sent', costMicrosUsd: 0 })]);
  });
});

describe('the experimental wing', () => {
  it('names no settlement and picks no outcome: it ends background attempts with the verbs', () => {
    const root = join(import.meta.dirname, '..', 'experimental');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(files.length).toBeGreaterThan(10);
    const offending = files.filter((file) =>
      /\bSettlement\b|'(not_sent|refused_upstream|cancelled_running|lease_expired)'|outcome: '(completed|unknown)'|settleHeld|reserveHeld|exchangeHeld/.test(
        readFileSync(join(root, file), 'utf8'),
      ),
    );
    expect(offending).toEqual([]);
  });
});
