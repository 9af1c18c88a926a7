/**
 * A reservation whose commit the gateway cannot confirm (issue 38, item 1): the link between a
 * gateway process and PostgreSQL (a TCP fault proxy) is cut at every point of the reservation's
 * round trip, each both ways a link fails: black-holed (bytes vanish, nothing closes) and reset
 * (every socket destroyed, new connections refused):
 * - before the statement reaches the server (it never commits);
 * - after the server got it, before it commits (a test transaction holds the Run's row lock, so the
 *   statement waits in the database while the link is cut; it commits once the lock is let go), and
 *   the same with the link back before the statement commits (the resolver's tombstone wins: the
 *   statement then conflicts on the attempt id and writes nothing);
 * - after it committed, before the reply reaches the gateway (the proxy forwards requests and drops
 *   every answer; a connection the pool opens meanwhile still completes its startup, so the
 *   reservation is in doubt whichever connection carries it);
 * - a reservation batch of 24 at once: in one statement (ledger-at-once.ts), committed with its
 *   reply lost; and on a Project with a spend cap (ledger-batch.ts), cut inside its transaction
 *   before the COMMIT was sent, which the gateway knows did not commit (not in doubt).
 * - under load (16 clients), the link black-holed for 6 s, as the outside probe did.
 * Each call answers 503 run_governance_unavailable in the vendora dialect with Retry-After and
 * `svc-attempt-id`; the upstream never receives it; once the link is back, within the resolver's
 * bound, no attempt is left reserved, each in-doubt attempt is released with nothing committed
 * (an audit entry not_sent at 0 when the reservation had committed, a tombstone otherwise), and
 * the Run's and the Project cap's reserved totals are back to exactly 0 (no call is live).
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/config/schema.js';
import { MAX_RETRY_MS } from '../../src/ledger/in-doubt.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { type CallResult, call, eventually, type Json, post, simulatedVendora } from './support.js';

const CONNECT_TIMEOUT_MS = 1000;
/** lock_timeout is min(2000, half of this): the held Run lock must be let go within 2 s. */
const STATEMENT_TIMEOUT_MS = 4000;
/** node-postgres's client-side query_timeout is statement_timeout + 1 s (pool.ts). */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 1000;
/**
 * The bound from the link's return to the last release: the resolver's longest wait between tries,
 * plus a try that must open a connection first, plus slack for a loaded test machine.
 */
const RESOLVED_WITHIN_MS = MAX_RETRY_MS + CONNECT_TIMEOUT_MS + 2000;
const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };

describePostgres('reliability: a reservation in doubt (the link to PostgreSQL cut mid round trip)', () => {
  const folder = tempFolder('in-doubt');
  const cappedSecret = newKeySecret();
  let database: TestDatabase;
  let proxy: TcpProxy;
  let simulator: Simulator;
  let gateway: GatewayProcess;
  let key: string;
  let run: Json;
  let cappedRun: Json;
  const measured: Record<string, number> = {};

  async function direct<T extends Json = Json>(text: string, values: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as T[];
    } finally {
      await client.end();
    }
  }

  function messages(runId: string, secret = key): Promise<CallResult> {
    return call(gateway.url, 'POST', '/v1/messages', {
      headers: { 'x-api-key': secret, 'vendora-version': '2023-06-01', 'x-svc-run-id': runId },
      body: { model: 'sim', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] },
      timeoutMs: 30_000,
    });
  }

  /**
   * The client's answer to a call whose reservation failed: 503 in the vendora dialect, Retry-After,
   * the attempt's id; `inDoubt` when the gateway could not know whether it committed.
   */
  function expectUnavailable(result: CallResult): { attemptId: string; inDoubt: boolean; message: string } {
    expect(result.status, JSON.stringify(result.body)).toBe(503);
    expect(result.body).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(result.headers.get('retry-after')).toBe('1');
    const attemptId = result.headers.get('svc-attempt-id');
    expect(attemptId).toMatch(/^att_/);
    const message = String(result.body.error.message);
    const inDoubt = message.includes('did not confirm the reservation; the call was not sent');
    if (!inDoubt) expect(message).toContain('the call was not admitted');
    return { attemptId: attemptId!, inDoubt, message };
  }

  function expectInDoubt(result: CallResult): string {
    const answer = expectUnavailable(result);
    expect(answer.inDoubt, answer.message).toBe(true);
    return answer.attemptId;
  }

  /** Holds the Run's row lock in a transaction of its own until `release()`. */
  async function lockRun(runId: string): Promise<{ release(): Promise<void> }> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('SELECT id FROM runs WHERE id = $1 FOR UPDATE', [runId]);
    return {
      async release() {
        await client.query('COMMIT');
        await client.end();
      },
    };
  }

  /** The gateway's statements waiting on a lock in the database. */
  function waitingOnLock(): Promise<Json[]> {
    return direct(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'svc-gateway' AND wait_event_type = 'Lock'",
    );
  }

  /** Waits until a gateway statement waits on a lock in the database (it got there). */
  async function statementWaitingOnLock(): Promise<void> {
    await eventually(
      async () => {
        const rows = await waitingOnLock();
        return rows.length > 0 ? true : undefined;
      },
      1500,
      'a gateway statement waiting on the Run lock',
    );
  }

  async function attemptRow(id: string): Promise<Json | undefined> {
    return (
      await direct('SELECT state, outcome, reservation, cost, run_id FROM attempts WHERE id = $1', [id])
    )[0];
  }

  /**
   * After the link is back: within the bound nothing is reserved and each attempt in `ids` has its
   * fate: `released` (it had committed: released at no cost, with its audit entry), `tombstone` (it
   * had not: a released row holding nothing), `absent` (the gateway knew it had not committed:
   * nothing to resolve, nothing ever written). The Runs' and the cap counters' reserved totals are 0
   * and their committed unchanged, the upstream got nothing. Returns how long it took.
   */
  async function expectResolved(
    ids: string[],
    fate: 'released' | 'tombstone' | 'absent',
    resumedAt: number,
  ): Promise<number> {
    await eventually(
      async () => {
        const open = await direct("SELECT id FROM attempts WHERE state = 'reserved'");
        const resolved = await direct(
          "SELECT id FROM attempts WHERE id = ANY($1::text[]) AND state <> 'reserved'",
          [ids],
        );
        return open.length === 0 && resolved.length === (fate === 'absent' ? 0 : ids.length)
          ? true
          : undefined;
      },
      RESOLVED_WITHIN_MS + 1000,
      'every attempt in doubt resolved, none left reserved',
    );
    const tookMs = Math.round(performance.now() - resumedAt);
    expect(tookMs).toBeLessThanOrEqual(RESOLVED_WITHIN_MS);
    // Nothing is written later either (a resolver would have tried within MAX_RETRY_MS).
    if (fate === 'absent') await new Promise((resolve) => setTimeout(resolve, MAX_RETRY_MS + 500));
    for (const id of ids) {
      const row = await attemptRow(id);
      if (fate === 'absent') expect(row).toBeUndefined();
      else if (fate === 'released')
        expect(row).toMatchObject({ state: 'released', outcome: 'not_sent', cost: '0' });
      else
        expect(row).toMatchObject({
          state: 'released',
          outcome: 'not_sent',
          cost: '0',
          reservation: '0',
          run_id: null,
        });
    }
    const committed = fate === 'released';
    const audit = await direct<{ attempt_id: string; outcome: string; state: string; cost: string }>(
      'SELECT attempt_id, outcome, state, cost FROM audit WHERE attempt_id = ANY($1::text[]) ORDER BY attempt_id',
      [ids],
    );
    expect(audit).toEqual(
      committed
        ? [...ids].sort().map((id) => ({ attempt_id: id, outcome: 'not_sent', state: 'released', cost: '0' }))
        : [],
    );
    expect(await direct('SELECT id, reserved, committed FROM runs ORDER BY id')).toEqual(
      [
        { id: run.id, reserved: '0', committed: String(committedBefore.get(run.id)) },
        { id: cappedRun.id, reserved: '0', committed: String(committedBefore.get(cappedRun.id)) },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(await direct('SELECT scope, owner_id, reserved FROM spend_counters WHERE reserved <> 0')).toEqual(
      [],
    );
    expect(simulator.requests()).toHaveLength(0);
    return tookMs;
  }

  const committedBefore = new Map<string, string>();

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    simulator = await startSimulator({ port: 0 });
    const projects = reliabilityProjects().map((project) =>
      project.id === 'prj_b' ? { ...project, caps: { lifetime_micros_usd: 40_000_000 } } : project,
    );
    gateway = await startGatewayProcess({
      name: 'in-doubt',
      folder: folder.path,
      environment: { SVC_RELIABILITY_DATABASE_URL: viaProxy.toString(), SVC_CAPPED_KEY: cappedSecret },
      config: {
        store: {
          kind: 'postgres',
          postgres: {
            url_env: 'SVC_RELIABILITY_DATABASE_URL',
            connect_timeout_ms: CONNECT_TIMEOUT_MS,
            statement_timeout_ms: STATEMENT_TIMEOUT_MS,
          },
        },
        data_dir: folder.path,
        // Each test's call must fail at its reservation, not at the key's lookup: the keys (read
        // through the cache by beforeEach's healthy calls) stay cached for the whole test even when
        // a loaded machine (CI) takes longer than the default 2 s between the warm-up and the cut.
        auth: { key_cache_ms: 60_000 },
        projects,
        keys: [{ id: 'key_capped', project: 'prj_b', scopes: [...SCOPES], secret_env: 'SVC_CAPPED_KEY' }],
        ...simulatedVendora(simulator.url, PRICE, { connect_ms: 2000, first_byte_ms: 5000, idle_ms: 5000 }),
      },
    });
    key = gateway.key;
    const unit = (await post(gateway.url, key, '/svc/v1/work-units', {})).body;
    run = (
      await post(gateway.url, key, '/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: 10_000_000 })
    ).body;
    expect(run.id).toMatch(/^run_/);
    const cappedUnit = (await post(gateway.url, cappedSecret, '/svc/v1/work-units', {})).body;
    cappedRun = (
      await post(gateway.url, cappedSecret, '/svc/v1/runs', {
        work_unit_id: cappedUnit.id,
        budget_micros_usd: 10_000_000,
      })
    ).body;
    expect(cappedRun.id).toMatch(/^run_/);
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await proxy?.close();
    await simulator?.close();
    await database?.drop();
    folder.remove();
    console.info(
      `[reservation in doubt] resolved after the link came back (ms): ${JSON.stringify(measured)}`,
    );
  });

  beforeEach(async () => {
    if (proxy.mode !== 'pass') await proxy.resume();
    // Healthy: a call on each Run goes through (and warms the keys' cache), then nothing is open.
    for (const [runId, secret] of [
      [run.id, key],
      [cappedRun.id, cappedSecret],
    ] as const) {
      const healthy = await messages(runId, secret);
      expect(healthy.status, JSON.stringify(healthy.body)).toBe(200);
    }
    await eventually(
      async () =>
        (await direct("SELECT id FROM attempts WHERE state = 'reserved'")).length === 0 ? true : undefined,
      5000,
      'the healthy calls settled',
    );
    for (const row of await direct('SELECT id, committed FROM runs'))
      committedBefore.set(row.id, row.committed);
    simulator.clearRequests();
  });

  it('under load, the link black-holed for 6 s: every call answered, none charged unless it was sent', async () => {
    const results: Array<{ result: CallResult; at: number }> = [];
    let running = true;
    const client = async () => {
      while (running) results.push({ result: await messages(run.id), at: performance.now() });
    };
    const clients = Array.from({ length: 16 }, client);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    proxy.blackhole();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const resumedAt = performance.now();
    await proxy.resume();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    running = false;
    await Promise.all(clients);
    const statuses = results.map(({ result }) => result.status);
    expect(
      statuses.every((status) => status === 200 || status === 503),
      JSON.stringify(statuses),
    ).toBe(true);
    // A 503 without an attempt id failed before the reservation (the key's limits could not be
    // read): no attempt exists for it.
    const beforeReserving = results.filter(
      ({ result }) => result.status === 503 && !result.headers.get('svc-attempt-id'),
    );
    for (const { result } of beforeReserving) {
      expect(result.body.error).toMatchObject({ code: 'run_governance_unavailable' });
      expect(result.body.error.message).toContain('the call was not admitted');
      expect(result.headers.get('retry-after')).toBe('1');
    }
    const failed = results
      .filter(({ result }) => result.status === 503 && result.headers.get('svc-attempt-id'))
      .map(({ result }) => expectUnavailable(result));
    expect(failed.length).toBeGreaterThan(0);
    const inDoubt = failed.filter((answer) => answer.inDoubt).map((answer) => answer.attemptId);
    // Every attempt settled or resolved: completed calls (their settlements retried past the outage),
    // the reservations in doubt released or tombstoned; nothing reaped, nothing reserved.
    await eventually(
      async () =>
        (await direct("SELECT id FROM attempts WHERE state = 'reserved'")).length === 0 ? true : undefined,
      15_000,
      'no attempt left reserved',
    );
    measured['under load, all settled after the link came back'] = Math.round(performance.now() - resumedAt);
    for (const id of inDoubt) {
      expect(await attemptRow(id)).toMatchObject({ state: 'released', outcome: 'not_sent', cost: '0' });
    }
    const audit = await direct<{ outcome: string; calls: string; cost: string }>(
      `SELECT outcome, count(*) AS calls, sum(cost) AS cost FROM audit WHERE run_id = $1 AND attempt_id <> ALL($2::text[])
       GROUP BY outcome`,
      [run.id, [...committedBefore.keys()]],
    );
    expect(audit.map((row) => row.outcome).sort()).not.toContain('lease_expired');
    const [runRow] = await direct('SELECT reserved, committed FROM runs WHERE id = $1', [run.id]);
    expect(runRow).toMatchObject({ reserved: '0' });
    const [sum] = await direct('SELECT coalesce(sum(cost), 0) AS cost FROM audit WHERE run_id = $1', [
      run.id,
    ]);
    expect(runRow!.committed).toBe(String(sum!.cost));
    // The upstream got exactly the calls that were answered 200: none of those that failed.
    expect(simulator.requests()).toHaveLength(statuses.filter((status) => status === 200).length);
    console.info(
      `[reservation in doubt] under load: ${results.length} calls, ${beforeReserving.length} 503 before reserving, ` +
        `${failed.length} 503 with an attempt id, ${inDoubt.length} in doubt`,
    );
  });

  describe('before the statement reaches the server', () => {
    // A statement sent on a pooled connection that then fails is in doubt (a tombstone once the
    // link is back); a connection that could not be opened sent nothing (nothing to resolve).
    it('black-holed: 503 with the attempt id, nothing written; a tombstone once the link is back', async () => {
      proxy.blackhole();
      const { attemptId, inDoubt } = expectUnavailable(await messages(run.id));
      expect(await attemptRow(attemptId)).toBeUndefined();
      const resumedAt = performance.now();
      await proxy.resume();
      measured[`before the server, black-holed (${inDoubt ? 'in doubt' : 'known uncommitted'})`] =
        await expectResolved([attemptId], inDoubt ? 'tombstone' : 'absent', resumedAt);
    });

    it('reset: 503 with the attempt id at once, nothing written, nothing charged once the link is back', async () => {
      await proxy.pause();
      const result = await messages(run.id);
      const { attemptId, inDoubt } = expectUnavailable(result);
      expect(result.ms).toBeLessThan(QUERY_TIMEOUT_MS);
      expect(await attemptRow(attemptId)).toBeUndefined();
      const resumedAt = performance.now();
      await proxy.resume();
      measured[`before the server, reset (${inDoubt ? 'in doubt' : 'known uncommitted'})`] =
        await expectResolved([attemptId], inDoubt ? 'tombstone' : 'absent', resumedAt);
    });
  });

  describe('after the server received it, before it committed', () => {
    for (const cut of ['black-holed', 'reset'] as const) {
      it(`${cut}: the statement commits in the database after the cut; released as not_sent once the link is back`, async () => {
        const lock = await lockRun(run.id);
        const answer = messages(run.id);
        await statementWaitingOnLock();
        if (cut === 'black-holed') proxy.blackhole();
        else await proxy.pause();
        // The database runs the statement and commits it; its reply goes nowhere.
        await lock.release();
        const attemptId = expectInDoubt(await answer);
        expect(await attemptRow(attemptId)).toMatchObject({ state: 'reserved' });
        const resumedAt = performance.now();
        await proxy.resume();
        measured[`received, ${cut}`] = await expectResolved([attemptId], 'released', resumedAt);
      });
    }

    it('reset, and the link back before the statement commits: the tombstone wins, the statement writes nothing', async () => {
      const lock = await lockRun(run.id);
      const answer = messages(run.id);
      await statementWaitingOnLock();
      await proxy.pause();
      const attemptId = expectInDoubt(await answer);
      const resumedAt = performance.now();
      await proxy.resume();
      await eventually(async () => ((await attemptRow(attemptId)) ? true : undefined), 1500, 'tombstone');
      // The reservation was still waiting for the Run when its tombstone committed.
      const waiting = await waitingOnLock();
      expect(waiting.length).toBeGreaterThan(0);
      await lock.release();
      await eventually(
        async () => ((await waitingOnLock()).length === 0 ? true : undefined),
        3000,
        'the late statement finished',
      );
      measured['received, reset, link back first'] = await expectResolved(
        [attemptId],
        'tombstone',
        resumedAt,
      );
    });
  });

  describe('after the commit, before the reply reaches the gateway', () => {
    it('black-holed replies: 503 after the query timeout; released as not_sent once the link is back', async () => {
      proxy.mute();
      const result = await messages(run.id);
      const attemptId = expectInDoubt(result);
      expect(await attemptRow(attemptId)).toMatchObject({ state: 'reserved' });
      const resumedAt = performance.now();
      await proxy.resume();
      measured['committed, reply black-holed'] = await expectResolved([attemptId], 'released', resumedAt);
    });

    it('reset once committed: 503 at once; released as not_sent once the link is back', async () => {
      proxy.mute();
      const answer = messages(run.id);
      await eventually(
        async () =>
          (await direct("SELECT id FROM attempts WHERE state = 'reserved'")).length > 0 ? true : undefined,
        3000,
        'the reservation committed in the database',
      );
      const cutAt = performance.now();
      await proxy.pause();
      const result = await answer;
      expect(performance.now() - cutAt).toBeLessThan(QUERY_TIMEOUT_MS);
      const attemptId = expectInDoubt(result);
      expect(await attemptRow(attemptId)).toMatchObject({ state: 'reserved' });
      const resumedAt = performance.now();
      await proxy.resume();
      measured['committed, reset'] = await expectResolved([attemptId], 'released', resumedAt);
    });

    /**
     * 24 calls queued as one reservation batch behind a call on the other Run, which holds the
     * replica's one batch in flight (waiting for its Run's lock in the database); then the batch
     * waits for its own Run's lock, the replies are cut and the lock let go. Returns the batch's
     * answers.
     */
    async function batchInDoubt(
      batchRun: string,
      batchSecret: string,
      otherRun: string,
      otherSecret: string,
    ) {
      const lockOther = await lockRun(otherRun);
      const lockBatch = await lockRun(batchRun);
      const first = messages(otherRun, otherSecret);
      await statementWaitingOnLock();
      const results = Array.from({ length: 24 }, () => messages(batchRun, batchSecret));
      // Long enough for the 24 requests to queue, well inside the first call's lock_timeout (2 s).
      await new Promise((resolve) => setTimeout(resolve, 500));
      await lockOther.release();
      expect((await first).status).toBe(200);
      await eventually(
        async () => {
          const waiting = await waitingOnLock();
          const open = await direct("SELECT id FROM attempts WHERE state = 'reserved'");
          return waiting.length > 0 && open.length === 0 ? true : undefined;
        },
        1500,
        'the batch waiting for its Run, the first call settled',
      );
      simulator.clearRequests();
      committedBefore.set(
        otherRun,
        (await direct('SELECT committed FROM runs WHERE id = $1', [otherRun]))[0]!.committed,
      );
      proxy.mute();
      await lockBatch.release();
      const answers = (await Promise.all(results)).map(expectUnavailable);
      expect(new Set(answers.map((answer) => answer.attemptId)).size).toBe(24);
      return answers;
    }

    it('a batch of 24 in one statement (ledger-at-once): all committed, reply lost, each one released', async () => {
      const answers = await batchInDoubt(run.id, key, cappedRun.id, cappedSecret);
      expect(answers.every((answer) => answer.inDoubt)).toBe(true);
      const ids = answers.map((answer) => answer.attemptId);
      // The whole batch committed in the database: 24 reservations in doubt at once.
      const reserved = await direct("SELECT id FROM attempts WHERE state = 'reserved'");
      expect(reserved.map((row) => row.id).sort()).toEqual([...ids].sort());
      const resumedAt = performance.now();
      await proxy.resume();
      measured['a batch of 24 at once, reply black-holed'] = await expectResolved(ids, 'released', resumedAt);
    });

    it('a batch of 24 on a capped Project (ledger-batch), cut inside its transaction: not in doubt, nothing written', async () => {
      const answers = await batchInDoubt(cappedRun.id, cappedSecret, run.id, key);
      // The transaction never sent its COMMIT: the gateway knows nothing of it committed.
      expect(answers.some((answer) => answer.inDoubt)).toBe(false);
      const ids = answers.map((answer) => answer.attemptId);
      expect(await direct("SELECT id FROM attempts WHERE state = 'reserved'")).toEqual([]);
      const resumedAt = performance.now();
      await proxy.resume();
      measured['a capped batch of 24, cut in its transaction'] = await expectResolved(
        ids,
        'absent',
        resumedAt,
      );
    });
  });
});
