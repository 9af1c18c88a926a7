/**
 * Ledger cost on the SQLite store: CPU per reserve + settle pair at concurrency 1, 16 and 64
 * (group commit batches what arrives in the same event-loop turn), then at 64 on a ledger grown to
 * 200,000 calls. Prints its figures.
 *
 *   node --import tsx bench/ledger.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { createStoreRun } from './store-run.js';

const iso = (milliseconds: number) => new Date(milliseconds).toISOString();

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'svc-ledger-bench-'));
  const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal' });
  await store.migrate();
  await createStoreRun(store, { projectId: 'prj_b', runId: 'run_b', workUnitId: 'wku_b' });
  let sequence = 0;
  const call = async () => {
    const attemptId = `att_${sequence++}`;
    const at = Date.now();
    await store.reserve({
      attemptId,
      projectId: 'prj_b',
      keyId: 'key_b',
      runId: 'run_b',
      reservationMicrosUsd: 1000,
      now: at,
      createdAt: iso(at),
      leaseExpiresAt: iso(at + 1e6),
      owner: 'bench',
      endpoint: '/v1/messages',
      alias: 'a',
      connection: 'c',
      profile: 'p',
      upstreamModel: 'm',
    });
    await store.settle({
      attemptId,
      state: 'settled',
      costMicrosUsd: 10,
      usage: { inputTokens: 1, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      outcome: 'completed',
      httpStatus: 200,
      durationMs: 1,
      settledAt: iso(Date.now()),
    });
  };
  const series = async (concurrency: number, total: number, label: string) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let round = 0; round < total / concurrency; round++)
      await Promise.all(Array.from({ length: concurrency }, call));
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `${label}: ${((used.user + used.system) / total).toFixed(1)} us CPU per reserve+settle, ${Math.round(total / seconds)} pairs/s\n`,
    );
  };
  for (const concurrency of [1, 16, 64]) await series(concurrency, 20_000, `concurrency ${concurrency}`);
  // The same load on a grown file: more pages cached, and the costs that follow the cache's size.
  await series(64, 80_000, 'concurrency 64, the ledger growing from 60,000 to 140,000 calls');
  await series(64, 60_000, 'concurrency 64, from 140,000 to 200,000 calls');
  await store.close();
  rmSync(folder, { recursive: true, force: true });
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
