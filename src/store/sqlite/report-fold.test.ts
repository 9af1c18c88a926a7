/**
 * SQLite's report rollups folded at read time (report-fold.ts, migration 17): a spend report reads
 * each rollup plus the audit entries above its watermark, so it gives the same exact figures at
 * every watermark, before, during and after a fold; migration 17 drops the triggers that kept the
 * rollups and starts the watermarks where they left them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type Statement, spendSql, sqliteAttributeSpendSql } from '../report-sql.js';
import type { AttributeRef, SpendDimension, SpendQuery } from '../reports-port.js';
import type { WalCheckpointer } from './checkpointer.js';
import { applyMigrationSteps, migrate } from './migrate.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { type SqliteFoldSource, SqliteReportFolder } from './report-fold.js';
import { SqliteStore } from './sqlite-store.js';

const PROJECT = 'prj_fold';
const HOUR = 3_600_000;
const T0 = Date.parse('2026-06-01T10:00:00.000Z');
const iso = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

const INSERT_AUDIT = `INSERT INTO audit (attempt_id, project_id, key_id, run_id, endpoint, alias, connection, profile,
    upstream_model, state, reservation, cost, input_tokens, output_tokens, cache_creation_input_tokens,
    cache_read_input_tokens, outcome, http_status, duration_ms, overran, created_at, settled_at, tags, metadata)
  VALUES (@attemptId, @projectId, @keyId, NULL, 'messages', @alias, 'c1', 'p', 'm1', @state, 500, @cost,
    @inputTokens, 3, 1, 2, @outcome, 200, 1, 0, @createdAt, @createdAt, @tags, @metadata)`;

interface Entry {
  attemptId: string;
  projectId: string;
  keyId: string;
  alias: string;
  state: 'settled' | 'unknown';
  outcome: string;
  cost: number;
  inputTokens: number | null;
  createdAt: string;
  tags: string | null;
  metadata: string | null;
}

/** A deterministic mix: both sides of hour boundaries, two aliases and keys, unknown attempts,
 * entries with and without tags and metadata, another Project's entries. */
function entries(count: number, prefix: string): Entry[] {
  const offsets = [-1, 0, 1, HOUR - 1, HOUR, 2 * HOUR + 7, 3 * HOUR - 1, 25 * HOUR];
  const teams = ['search', 'ads', 'x.y', ''];
  return Array.from({ length: count }, (_, index) => {
    const unknown = index % 5 === 3;
    return {
      attemptId: `${prefix}_${index}`,
      projectId: index % 9 === 8 ? 'prj_other' : PROJECT,
      keyId: index % 3 === 0 ? 'key_a' : 'key_b',
      alias: index % 2 === 0 ? 'a' : 'b',
      state: unknown ? 'unknown' : 'settled',
      outcome: unknown ? 'unknown' : 'completed',
      cost: unknown ? 500 : 17 * index + 1,
      inputTokens: unknown ? null : index,
      createdAt: iso(offsets[index % offsets.length]!),
      tags:
        index % 4 === 1 ? null : JSON.stringify({ team: teams[index % teams.length], n: String(index % 2) }),
      metadata: index % 3 === 2 ? null : JSON.stringify({ customer: index % 2 === 0 ? 'acme' : 'globex' }),
    };
  });
}

const QUERIES: SpendQuery[] = [];
for (const bucket of [null, 'hour', 'day'] as const)
  for (const dimensions of [[], ['alias'], ['alias', 'connection', 'upstream_model', 'key_id']] as const)
    QUERIES.push({
      projectId: PROJECT,
      fromIso: iso(-HOUR),
      toIso: iso(3 * HOUR),
      bucket,
      dimensions: dimensions as readonly SpendDimension[] as SpendDimension[],
    });
const ATTRIBUTES: AttributeRef[] = [
  { kind: 'tag', name: 'team' },
  { kind: 'tag', name: 'n' },
  { kind: 'metadata', name: 'customer' },
  { kind: 'tag', name: 'absent' },
];

function read(db: Database.Database, statement: Statement): unknown[] {
  return db.prepare(statement.sql).all(...statement.values);
}

/** Every report shape this test checks, read in one go. */
function reports(db: Database.Database): unknown[] {
  return [
    ...QUERIES.map((query) => read(db, spendSql(query))),
    ...ATTRIBUTES.flatMap((attribute) =>
      (['hour', null] as const).map((bucket) =>
        read(db, sqliteAttributeSpendSql({ ...QUERIES[0]!, bucket, attribute }, attribute)),
      ),
    ),
  ];
}

/** Spend per (hour, alias) and per (hour, team) recomputed from the entries alone. */
function recomputed(all: Entry[]) {
  const byAlias = new Map<string, number[]>();
  const byTeam = new Map<string, number[]>();
  for (const entry of all) {
    const at = Date.parse(entry.createdAt);
    if (entry.projectId !== PROJECT || at < T0 - HOUR || at >= T0 + 3 * HOUR) continue;
    const hour = entry.createdAt.slice(0, 13);
    const add = (into: Map<string, number[]>, key: string) => {
      const row = into.get(key) ?? [0, 0, 0, 0];
      row[0]! += 1;
      row[1]! += entry.cost;
      row[2]! += entry.state === 'unknown' ? 1 : 0;
      row[3]! += entry.inputTokens ?? 0;
      into.set(key, row);
    };
    add(byAlias, `${hour} ${entry.alias}`);
    const team = entry.tags === null ? undefined : (JSON.parse(entry.tags) as { team?: string }).team;
    if (team !== undefined) add(byTeam, `${hour} ${team}`);
  }
  return { byAlias, byTeam };
}

function asMap(rows: unknown[], key: (row: Record<string, unknown>) => string) {
  return new Map(
    (rows as Array<Record<string, unknown>>).map((row) => [
      key(row),
      [row.calls, row.committed, row.unknown_attempts, row.input_tokens],
    ]),
  );
}

function watermark(db: Database.Database, source: SqliteFoldSource): number {
  return (
    db.prepare('SELECT watermark FROM report_folds WHERE source = ?').get(source) as { watermark: number }
  ).watermark;
}

function folderOn(db: Database.Database, chunk: number): SqliteReportFolder {
  return new SqliteReportFolder(
    (text) => db.prepare(text),
    (work) => db.transaction(work).immediate(),
    () => undefined,
    chunk,
  );
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A file migrated by the store (then closed, so its background fold is off), opened directly. */
async function migratedDatabase(): Promise<Database.Database> {
  const path = join(newFolder(), 'svc.db');
  const store = new SqliteStore({ path, synchronous: 'normal' });
  await store.migrate();
  await store.close();
  return new Database(path);
}

function newFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'svc-report-fold-'));
  folders.push(folder);
  return folder;
}

describe('SQLite report rollups folded at read time', () => {
  it('reads the same exact figures at every watermark, before, during and after a fold', async () => {
    const db = await migratedDatabase();
    const all = entries(41, 'att');
    for (const entry of all) db.prepare(INSERT_AUDIT).run(entry);

    // Nothing folded: every figure comes from the entries above the watermark.
    expect(watermark(db, 'audit')).toBe(0);
    expect(db.prepare('SELECT count(*) AS n FROM audit_hourly').get()).toEqual({ n: 0 });
    const unfolded = reports(db);
    const expected = recomputed(all);
    const hourOf = (row: Record<string, unknown>) => String(row.bucket).slice(0, 13);
    const spendByAlias = read(db, spendSql({ ...QUERIES[0]!, bucket: 'hour', dimensions: ['alias'] }));
    expect(asMap(spendByAlias, (row) => `${hourOf(row)} ${row.alias}`)).toEqual(expected.byAlias);
    const team: AttributeRef = { kind: 'tag', name: 'team' };
    const spendByTeam = read(
      db,
      sqliteAttributeSpendSql({ ...QUERIES[0]!, bucket: 'hour', attribute: team }, team),
    );
    expect(asMap(spendByTeam, (row) => `${hourOf(row)} ${row.attribute}`)).toEqual(expected.byTeam);

    // Folded three entries at a time: at every watermark, the same figures.
    const folder = folderOn(db, 3);
    for (const source of ['audit', 'audit_attributes'] as const) {
      let steps = 0;
      let more = true;
      while (more) {
        const before = watermark(db, source);
        more = folder.foldChunk(source);
        expect(watermark(db, source) - before).toBeLessThanOrEqual(3);
        expect(reports(db)).toEqual(unfolded);
        steps++;
      }
      expect(steps).toBe(14);
      expect(watermark(db, source)).toBe(41);
      expect(folder.foldChunk(source)).toBe(false);
    }
    expect((db.prepare('SELECT count(*) AS n FROM audit_hourly').get() as { n: number }).n).toBeGreaterThan(
      8,
    );

    // Entries settled after the fold, in hours already folded, are counted once.
    const late = entries(10, 'late');
    for (const entry of late) db.prepare(INSERT_AUDIT).run(entry);
    const after = recomputed([...all, ...late]);
    const lateByAlias = read(db, spendSql({ ...QUERIES[0]!, bucket: 'hour', dimensions: ['alias'] }));
    expect(asMap(lateByAlias, (row) => `${hourOf(row)} ${row.alias}`)).toEqual(after.byAlias);
    const withLate = reports(db);
    await folderOn(db, 1_000).fold('audit');
    await folderOn(db, 1_000).fold('audit_attributes');
    expect(watermark(db, 'audit_attributes')).toBe(51);
    expect(reports(db)).toEqual(withLate);
    db.close();
  });

  it('migration 17 drops the rollup triggers, starts the watermarks at the last entry and keeps every figure', async () => {
    const path = join(newFolder(), 'svc.db');
    const before = new Database(path);
    applyMigrationSteps(before, 1, 17);
    // Recorded as migrate() records them, so the store opened below applies only migration 17.
    before.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    for (const { version, name } of SQLITE_MIGRATIONS.filter((migration) => migration.version < 17))
      before.prepare("INSERT INTO schema_migrations VALUES (?, ?, '2026-06-01')").run(version, name);
    const all = entries(30, 'att');
    for (const entry of all) before.prepare(INSERT_AUDIT).run(entry);
    const rollup = () => before.prepare('SELECT * FROM audit_hourly ORDER BY 1, 2, 3, 4, 5, 6, 7').all();
    const attributeRollup = () =>
      before.prepare('SELECT * FROM audit_attribute_hourly ORDER BY 1, 2, 3, 4, 5, 6').all();
    const kept = { hourly: rollup(), attributes: attributeRollup() };
    expect(kept.hourly.length).toBeGreaterThan(8);
    expect(kept.attributes.length).toBeGreaterThan(8);
    before.close();

    const db = new Database(path);
    migrate(db, (work) => db.transaction(work).immediate());
    const triggers = db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '%rollup%'")
      .all();
    expect(triggers).toEqual([]);
    expect(watermark(db, 'audit')).toBe(30);
    expect(watermark(db, 'audit_attributes')).toBe(30);
    const afterMigration = reports(db);

    // A new entry no longer touches the rollups; the reports count it from the tail.
    const late = entries(12, 'late');
    for (const entry of late) db.prepare(INSERT_AUDIT).run(entry);
    expect(db.prepare('SELECT * FROM audit_hourly ORDER BY 1, 2, 3, 4, 5, 6, 7').all()).toEqual(kept.hourly);
    expect(db.prepare('SELECT * FROM audit_attribute_hourly ORDER BY 1, 2, 3, 4, 5, 6').all()).toEqual(
      kept.attributes,
    );
    expect(reports(db)).not.toEqual(afterMigration);
    const expected = recomputed([...all, ...late]);
    const hourOf = (row: Record<string, unknown>) => String(row.bucket).slice(0, 13);
    const byAlias = read(db, spendSql({ ...QUERIES[0]!, bucket: 'hour', dimensions: ['alias'] }));
    expect(asMap(byAlias, (row) => `${hourOf(row)} ${row.alias}`)).toEqual(expected.byAlias);
    const unfoldedLate = reports(db);
    db.close();

    // The store's spend read folds first (a report leaves the watermark at the last entry).
    const store = new SqliteStore({ path, synchronous: 'normal' });
    await store.migrate();
    const spend = await store.reports.spend({ ...QUERIES[0]!, bucket: 'hour', dimensions: ['alias'] });
    expect(spend.map((row) => row.totals.calls).reduce((sum, calls) => sum + calls, 0)).toBe(
      [...expected.byAlias.values()].reduce((sum, row) => sum + row[0]!, 0),
    );
    await store.reports.spend({
      ...QUERIES[0]!,
      bucket: null,
      dimensions: [],
      attribute: { kind: 'tag', name: 'team' },
    });
    await store.close();
    const reopened = new Database(path);
    expect(watermark(reopened, 'audit')).toBe(42);
    expect(watermark(reopened, 'audit_attributes')).toBe(42);
    expect(reports(reopened)).toEqual(unfoldedLate);
    reopened.close();
  });

  it('folds in the background until stopped, and reports a failing pass once on stderr', async () => {
    const db = await migratedDatabase();
    for (const entry of entries(7, 'att')) db.prepare(INSERT_AUDIT).run(entry);
    const folder = folderOn(db, 2);
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }) => {
      if (warning.code === 'SVC_SQLITE_REPORT_FOLD') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      folder.start(10);
      const deadline = Date.now() + 5_000;
      while (watermark(db, 'audit_attributes') < 7 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(watermark(db, 'audit')).toBe(7);
      expect(watermark(db, 'audit_attributes')).toBe(7);
      // A pass that fails (here: the watermarks' table is gone) is reported once, not every pass.
      db.exec('ALTER TABLE report_folds RENAME TO report_folds_away');
      db.prepare(INSERT_AUDIT).run(entries(1, 'late')[0]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/report fold failed .*report_folds/);
      db.exec('ALTER TABLE report_folds_away RENAME TO report_folds');
      const resumed = Date.now() + 5_000;
      while (watermark(db, 'audit') < 8 && Date.now() < resumed)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(watermark(db, 'audit')).toBe(8);
      folder.stop();
      db.prepare(INSERT_AUDIT).run(entries(1, 'stopped')[0]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(watermark(db, 'audit')).toBe(8);
    } finally {
      folder.stop();
      process.off('warning', onWarning);
      db.close();
    }
  });

  it('folds nothing while the checkpoint worker holds its lock (a WAL rewind), then goes on', async () => {
    const db = await migratedDatabase();
    for (const entry of entries(5, 'att')) db.prepare(INSERT_AUDIT).run(entry);
    let rewinding = true;
    let holds = 0;
    const checkpointer = {
      tryHold: () => !rewinding && ++holds > 0,
      release: () => {
        holds--;
      },
    } as unknown as WalCheckpointer;
    const folder = new SqliteReportFolder(
      (text) => db.prepare(text),
      (work) => db.transaction(work).immediate(),
      () => checkpointer,
      2,
    );
    expect(folder.foldChunk('audit')).toBe(true);
    expect(watermark(db, 'audit')).toBe(0);
    const folding = folder.fold('audit');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(watermark(db, 'audit')).toBe(0);
    rewinding = false;
    await folding;
    expect(watermark(db, 'audit')).toBe(5);
    expect(holds).toBe(0);
    db.close();
  });
});
