/**
 * Read-only access to a gateway's store from the test process, for invariant checks after a crash:
 * the same portable SQL runs on the SQLite file and on the PostgreSQL database.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

export type Row = Record<string, unknown>;

export interface StoreInspector {
  rows(text: string): Promise<Row[]>;
}

export function sqliteInspector(path: string): StoreInspector {
  return {
    async rows(text) {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        return db.prepare(text).all() as Row[];
      } finally {
        db.close();
      }
    },
  };
}

export function postgresInspector(url: string): StoreInspector {
  return {
    async rows(text) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text)).rows as Row[];
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Invariants that a half-written transaction would break; each query lists the offending rows,
 * so the expected answer of every one is "no rows".
 */
export const INVARIANT_QUERIES: Record<string, string> = {
  'a Work Unit whose run_count differs from its Runs': `
    SELECT w.id, w.run_count, (SELECT CAST(count(*) AS INTEGER) FROM runs r WHERE r.work_unit_id = w.id) AS runs
    FROM work_units w
    WHERE w.run_count <> (SELECT count(*) FROM runs r WHERE r.work_unit_id = w.id) OR w.run_count > 32`,
  'a Run without its Work Unit': `
    SELECT r.id FROM runs r LEFT JOIN work_units w ON w.id = r.work_unit_id WHERE w.id IS NULL`,
  'a Run over its budget': `
    SELECT id FROM runs WHERE committed + reserved > budget + overrun OR committed < 0 OR reserved < 0`,
  'an Outcome without its Work Unit': `
    SELECT o.id FROM outcomes o LEFT JOIN work_units w ON w.id = o.work_unit_id WHERE w.id IS NULL`,
  'two heads of one Outcome chain': `
    SELECT work_unit_id, definition_id FROM outcomes WHERE is_head GROUP BY work_unit_id, definition_id HAVING count(*) > 1`,
  'an Outcome chain without a head': `
    SELECT work_unit_id, definition_id FROM outcomes GROUP BY work_unit_id, definition_id
    HAVING sum(CASE WHEN is_head THEN 1 ELSE 0 END) <> 1`,
  'a head that is not the latest revision': `
    SELECT o.id FROM outcomes o WHERE o.is_head AND o.revision <> (
      SELECT max(p.revision) FROM outcomes p WHERE p.work_unit_id = o.work_unit_id AND p.definition_id = o.definition_id)`,
  'a revision that does not follow the one it supersedes': `
    SELECT o.id FROM outcomes o LEFT JOIN outcomes p ON p.id = o.supersedes_outcome_id
    WHERE (o.revision = 1 AND o.supersedes_outcome_id IS NOT NULL)
       OR (o.revision > 1 AND (p.id IS NULL OR p.revision <> o.revision - 1 OR p.is_head OR p.work_unit_id <> o.work_unit_id))`,
  'a superseded Outcome nobody supersedes': `
    SELECT o.id FROM outcomes o WHERE NOT o.is_head AND NOT EXISTS (SELECT 1 FROM outcomes n WHERE n.supersedes_outcome_id = o.id)`,
  'two journal writes with one governance_sequence': `
    SELECT project_id, governance_sequence FROM outcomes GROUP BY project_id, governance_sequence HAVING count(*) > 1`,
};

/** Offending rows per invariant (only the broken ones appear). */
export async function brokenInvariants(store: StoreInspector): Promise<Record<string, Row[]>> {
  const broken: Record<string, Row[]> = {};
  for (const [name, text] of Object.entries(INVARIANT_QUERIES)) {
    const rows = await store.rows(text);
    if (rows.length > 0) broken[name] = rows;
  }
  return broken;
}

const TABLE_OF_PREFIX: Record<string, string> = { wku: 'work_units', run: 'runs', out: 'outcomes' };

/** Stored idempotent responses whose resource does not exist (a response kept without its write). */
export async function idempotencyWithoutResource(store: StoreInspector): Promise<string[]> {
  const stored = await store.rows('SELECT response FROM idempotency');
  const ids = new Map<string, string[]>();
  for (const row of stored) {
    const response = JSON.parse(String(row.response)) as { id?: unknown; work_unit?: { id?: unknown } };
    const id = typeof response.id === 'string' ? response.id : undefined;
    const table = id === undefined ? undefined : TABLE_OF_PREFIX[id.split('_')[0]!];
    if (id === undefined || table === undefined) continue;
    ids.set(table, [...(ids.get(table) ?? []), id]);
  }
  const missing: string[] = [];
  for (const [table, wanted] of ids) {
    const present = new Set((await store.rows(`SELECT id FROM ${table}`)).map((row) => String(row.id)));
    for (const id of wanted) if (!present.has(id)) missing.push(id);
  }
  return missing;
}
