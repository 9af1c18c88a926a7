/**
 * SIGKILL loses no acknowledged write (SQLite file and PostgreSQL): a gateway process is killed
 * between requests and in the middle of a burst of writes, a new process starts on the same store,
 * and every write that was answered 2xx is there with the body it was answered with. Writes that
 * got no answer may or may not have happened, but never half: the store's invariants hold, and
 * retrying each of them with its Idempotency-Key yields exactly one resource (200 replay if it had
 * committed, 201 if it had not). On SQLite a second process refuses the file while the first runs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectStartFailure,
  type GatewayProcess,
  type GatewayProcessOptions,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import {
  brokenInvariants,
  idempotencyWithoutResource,
  postgresInspector,
  type StoreInspector,
  sqliteInspector,
} from './store-inspection.js';
import { type CallResult, get, type Json, newIdempotencyKey, outcomeBody, post } from './support.js';

type StoreKind = 'sqlite' | 'postgres';

interface Write {
  kind: 'work_unit' | 'run' | 'outcome' | 'close_run' | 'close_work_unit';
  path: string;
  body: Json;
  idempotencyKey: string;
  /** The answer, when one came back before the kill. */
  result?: CallResult;
}

function crashSuite(kind: StoreKind): void {
  const folder = tempFolder(`crash-${kind}`);
  let database: TestDatabase | undefined;
  let inspector: StoreInspector;
  let options: GatewayProcessOptions;
  let gateway: GatewayProcess;
  const sqlitePath = join(folder.path, 'svc.db');

  beforeAll(async () => {
    const environment: Record<string, string> = {};
    let store: Record<string, unknown>;
    if (kind === 'sqlite') {
      store = { kind: 'sqlite', sqlite: { path: sqlitePath } };
      inspector = sqliteInspector(sqlitePath);
    } else {
      database = await createTestDatabase();
      environment.SVC_RELIABILITY_DATABASE_URL = database.url;
      store = { kind: 'postgres', postgres: { url_env: 'SVC_RELIABILITY_DATABASE_URL' } };
      inspector = postgresInspector(database.url);
    }
    options = {
      name: `crash-${kind}`,
      folder: folder.path,
      environment,
      config: { store, data_dir: folder.path, projects: reliabilityProjects() },
    };
    gateway = await startGatewayProcess(options);
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    await database?.drop();
    folder.remove();
  });

  async function send(write: Write, target = gateway): Promise<CallResult> {
    return post(target.url, target.key, write.path, write.body, write.idempotencyKey);
  }

  async function acknowledged(write: Omit<Write, 'idempotencyKey'>): Promise<Write> {
    const full: Write = { ...write, idempotencyKey: newIdempotencyKey(write.kind) };
    full.result = await send(full);
    expect(full.result.status, JSON.stringify(full.result.body)).toBe(201);
    return full;
  }

  async function killAndRestart(): Promise<void> {
    const exit = await gateway.kill('SIGKILL');
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    gateway = await startGatewayProcess(options);
  }

  async function view(workUnitId: string): Promise<Json> {
    const result = await get(gateway.url, gateway.key, `/svc/v1/work-units/${workUnitId}`);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    return result.body;
  }

  async function expectConsistentStore(): Promise<void> {
    expect(await brokenInvariants(inspector)).toEqual({});
    expect(await idempotencyWithoutResource(inspector)).toEqual([]);
    if (kind === 'sqlite')
      expect(await inspector.rows('PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
  }

  it('SIGKILL between requests: every acknowledged Work Unit, Run, Outcome and close is there after a restart, field for field', async () => {
    const writes: Write[] = [];
    const units: string[] = [];
    for (let index = 0; index < 3; index++) {
      const unit = await acknowledged({ kind: 'work_unit', path: '/svc/v1/work-units', body: {} });
      writes.push(unit);
      const unitId = unit.result!.body.id as string;
      units.push(unitId);
      for (let run = 0; run < 3; run++) {
        writes.push(
          await acknowledged({
            kind: 'run',
            path: '/svc/v1/runs',
            body: {
              work_unit_id: unitId,
              budget_micros_usd: 10_000 * (index + 1) + run,
              ttl_seconds: 3600 + run,
            },
          }),
        );
      }
      const first = await acknowledged({
        kind: 'outcome',
        path: `/svc/v1/work-units/${unitId}/outcomes`,
        body: outcomeBody(true),
      });
      writes.push(first);
      writes.push(
        await acknowledged({
          kind: 'outcome',
          path: `/svc/v1/work-units/${unitId}/outcomes`,
          body: outcomeBody(false, first.result!.body.id),
        }),
      );
    }
    const someRun = writes.find((write) => write.kind === 'run')!.result!.body.id as string;
    writes.push(
      await acknowledged({
        kind: 'close_run',
        path: `/svc/v1/runs/${someRun}/close`,
        body: { reason: 'done' },
      }),
    );
    writes.push(
      await acknowledged({ kind: 'close_work_unit', path: `/svc/v1/work-units/${units[0]}/close`, body: {} }),
    );
    const before = await Promise.all(units.map((unit) => view(unit)));
    expect(before[0]!.work_unit.status).toBe('closed');

    await killAndRestart();

    const after = await Promise.all(units.map((unit) => view(unit)));
    expect(after).toEqual(before);
    for (const write of writes) {
      const id = write.result!.body.id as string;
      if (write.kind === 'run') {
        const run = await get(gateway.url, gateway.key, `/svc/v1/runs/${id}`);
        // The closed Run is compared in its closed state (from the view); the others as created.
        const expected = before
          .flatMap((unitView) => unitView.runs)
          .find((candidate: Json) => candidate.id === id);
        expect(run.body).toEqual(expected);
        if (expected.status === 'active') expect(run.body).toEqual(write.result!.body);
      }
      // Each acknowledged POST replays with its original answer: the idempotency record survived too.
      const replay = await send(write);
      expect({ status: replay.status, body: replay.body }).toEqual({ status: 200, body: write.result!.body });
    }
    await expectConsistentStore();
  });

  if (kind === 'sqlite') {
    it('a second process on the same SQLite file refuses to start while the first runs, and starts once the first was SIGKILLed', async () => {
      const refused = await expectStartFailure({ ...options, name: 'second' });
      expect(refused.exit.code).not.toBe(0);
      expect(refused.output).toContain(`in use by process ${gateway.pid}`);
      // The refused process neither took the lock nor disturbed the running one.
      expect((await get(gateway.url, gateway.key, '/readyz')).status).toBe(200);
      expect(existsSync(`${sqlitePath}.lock`)).toBe(true);
      const unit = await acknowledged({ kind: 'work_unit', path: '/svc/v1/work-units', body: {} });

      // SIGKILL leaves a stale lock file behind; the next process takes it over.
      expect(await gateway.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      expect(existsSync(`${sqlitePath}.lock`)).toBe(true);
      gateway = await startGatewayProcess(options);
      expect((await view(unit.result!.body.id)).work_unit).toEqual(unit.result!.body);
    });
  }

  it('SIGKILL during a burst of writes: every 2xx is there, nothing is half-written, and retries make exactly one resource each', async () => {
    // Seed: three Work Units, each with an Outcome head the burst revises.
    const seeds: string[] = [];
    const heads = new Map<string, string>();
    for (let index = 0; index < 3; index++) {
      const unit = (await acknowledged({ kind: 'work_unit', path: '/svc/v1/work-units', body: {} })).result!
        .body.id as string;
      seeds.push(unit);
      const head = await acknowledged({
        kind: 'outcome',
        path: `/svc/v1/work-units/${unit}/outcomes`,
        body: outcomeBody(true),
      });
      heads.set(unit, head.result!.body.id);
    }
    const seedOutcomes = 3;
    const before = (await inspector.rows('SELECT CAST(count(*) AS INTEGER) AS n FROM work_units'))[0]!
      .n as number;

    const writes: Write[] = [];
    const nextWrite = (index: number): Write => {
      const unit = seeds[index % seeds.length]!;
      const idempotencyKey = newIdempotencyKey(`burst${index}`);
      switch (index % 4) {
        case 0:
          return { kind: 'work_unit', path: '/svc/v1/work-units', body: {}, idempotencyKey };
        case 3:
          return {
            kind: 'outcome',
            path: `/svc/v1/work-units/${unit}/outcomes`,
            body: outcomeBody(index % 2 === 0, heads.get(unit)),
            idempotencyKey,
          };
        default:
          return {
            kind: 'run',
            path: '/svc/v1/runs',
            body: { work_unit_id: unit, budget_micros_usd: 5000 + index },
            idempotencyKey,
          };
      }
    };
    const ackTarget = 60;
    let acks = 0;
    let inFlight = 0;
    let inFlightAtKill = -1;
    let killed = false;
    const victim = gateway;
    const worker = async () => {
      while (!killed) {
        const write = nextWrite(writes.length);
        writes.push(write);
        inFlight++;
        try {
          write.result = await send(write, victim);
          if (write.result.status >= 200 && write.result.status < 300) {
            acks++;
            if (write.kind === 'outcome') heads.set(write.result.body.work_unit_id, write.result.body.id);
          }
        } catch {
          // no answer: the process died with this request in flight (or refused it)
        } finally {
          inFlight--;
        }
        if (!killed && acks >= ackTarget) {
          killed = true;
          inFlightAtKill = inFlight;
          process.kill(victim.pid, 'SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, () => worker()));
    expect(await victim.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The kill came while other writes were in flight: this is the interesting case.
    expect(inFlightAtKill).toBeGreaterThan(0);
    const answered = writes.filter((write) => write.result !== undefined);
    const unanswered = writes.filter((write) => write.result === undefined);
    expect(answered.filter((write) => write.result!.status >= 500)).toEqual([]);

    gateway = await startGatewayProcess(options);
    await expectConsistentStore();

    // Every acknowledged write is present, with the body it was acknowledged with.
    const views = new Map<string, Json>();
    const viewOf = async (unit: string) => {
      if (!views.has(unit)) views.set(unit, await view(unit));
      return views.get(unit)!;
    };
    for (const write of answered) {
      if (write.result!.status >= 300) continue;
      const body = write.result!.body;
      if (write.kind === 'work_unit') expect((await viewOf(body.id)).work_unit).toEqual(body);
      if (write.kind === 'run') expect((await viewOf(body.work_unit_id)).runs).toContainEqual(body);
      if (write.kind === 'outcome') expect((await viewOf(body.work_unit_id)).outcomes).toContainEqual(body);
    }

    // The unanswered ones: a retry with the same key replays (it had committed) or creates (it had not).
    for (const write of unanswered) {
      write.result = await send(write);
      const allowed =
        write.kind === 'work_unit' ? [200, 201] : write.kind === 'run' ? [200, 201, 429] : [200, 201, 409];
      expect(allowed, JSON.stringify(write.result.body)).toContain(write.result.status);
      if (write.result.status === 409) expect(write.result.body.error.code).toBe('outcome_revision_conflict');
    }
    await expectConsistentStore();
    const succeeded = (kind: Write['kind']) =>
      writes.filter((write) => write.kind === kind && write.result!.status < 300).length;
    const count = async (text: string) => (await inspector.rows(text))[0]!.n as number;
    expect(await count('SELECT CAST(count(*) AS INTEGER) AS n FROM work_units')).toBe(
      before + succeeded('work_unit'),
    );
    const seedList = seeds.map((seed) => `'${seed}'`).join(', ');
    expect(
      await count(`SELECT CAST(count(*) AS INTEGER) AS n FROM runs WHERE work_unit_id IN (${seedList})`),
    ).toBe(succeeded('run'));
    expect(
      await count(`SELECT CAST(count(*) AS INTEGER) AS n FROM outcomes WHERE work_unit_id IN (${seedList})`),
    ).toBe(seedOutcomes + succeeded('outcome'));
    console.info(
      `[crash ${kind}] burst: ${writes.length} writes, ${acks} acknowledged before the kill, ${inFlightAtKill} in flight at the kill, ${unanswered.length} unanswered` +
        ` (on retry: ${unanswered.filter((write) => write.result!.status === 200).length} had committed, ${unanswered.filter((write) => write.result!.status === 201).length} had not); restart took ${gateway.startMs} ms`,
    );
  });
}

describe('reliability: SIGKILL loses no acknowledged write [sqlite]', () => crashSuite('sqlite'));
describePostgres('reliability: SIGKILL loses no acknowledged write [postgres]', () => crashSuite('postgres'));
