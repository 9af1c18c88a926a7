import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../lib/clock.js';
import type { RefusalRecord } from '../store/reports-port.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { refusalRecorder } from './refusal-recorder.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');
const labels = (alias: string) => ({
  projectId: 'prj_a',
  keyId: 'key_a',
  runId: null,
  endpoint: '/v1/messages',
  alias,
  streamed: false,
});
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('refusalRecorder', () => {
  let folder: string;
  let store: SqliteStore;
  let writes: (readonly RefusalRecord[])[];
  let warnings: unknown[];
  const clock = new ManualClock(T0);

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'svc-refusals-'));
    store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
    await store.migrate();
    writes = [];
    warnings = [];
    const record = store.reports.recordRefusals.bind(store.reports);
    store.reports.recordRefusals = (refusals) => {
      writes.push(refusals);
      return record(refusals);
    };
  });
  afterEach(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function recorder() {
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
    return refusalRecorder(store, clock, logger);
  }

  async function reported(): Promise<number> {
    const rows = await store.reports.refusals({
      projectId: 'prj_a',
      fromIso: new Date(T0 - 3_600_000).toISOString(),
      toIso: new Date(T0 + 3_600_000).toISOString(),
      bucket: null,
      dimensions: [],
    });
    return rows.reduce((sum, row) => sum + row.refusals, 0);
  }

  it('writes the refusals of one turn together, after the turn, and each later turn on its own', async () => {
    const observer = recorder();
    for (let index = 0; index < 500; index++) observer.refused(labels('a'), 'rate_limited');
    observer.refused(labels('b'), 'run_budget_exceeded');
    expect(writes).toHaveLength(0);
    await nextTurn();
    expect(writes.map((batch) => batch.length)).toEqual([501]);
    expect(writes[0]![500]).toMatchObject({ alias: 'b', reason: 'run_budget_exceeded', connection: '' });
    expect(await reported()).toBe(501);
    observer.refused(labels('a'), 'key_budget_exceeded');
    await nextTurn();
    expect(writes.map((batch) => batch.length)).toEqual([501, 1]);
    expect(await reported()).toBe(502);
    await nextTurn();
    expect(writes).toHaveLength(2);
  });

  it('logs a failed write once per batch, with its size, and keeps recording', async () => {
    const observer = recorder();
    const record = store.reports.recordRefusals;
    store.reports.recordRefusals = () => Promise.reject(new Error('disk full'));
    observer.refused(labels('a'), 'rate_limited');
    observer.refused(labels('a'), 'rate_limited');
    await nextTurn();
    await nextTurn();
    expect(warnings).toEqual([
      expect.objectContaining({ msg: 'could not record refused reservations', refusals: 2 }),
    ]);
    store.reports.recordRefusals = record;
    observer.refused(labels('a'), 'rate_limited');
    await nextTurn();
    expect(await reported()).toBe(1);
  });
});
