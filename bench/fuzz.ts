/**
 * The long fuzz run (issue 10): the same hostile requests as test/governance/fuzz.test.ts, for
 * FUZZ_SECONDS per store (default 60) on SQLite and, when it answers, PostgreSQL. Prints how many
 * cases it tried, per route and per status, and the first counterexample (with its seed) if any
 * request answered 5xx (other than the documented 501 endpoint_not_served) or dropped the connection.
 *
 *   node --import tsx bench/fuzz.ts                 FUZZ_SECONDS=300 FUZZ_SEED=42 to replay
 */
import fc from 'fast-check';
import { hostileRequest } from '../test/support/fuzz-requests.js';
import type { StoreKind } from '../test/support/gateway.js';
import { probe, startInputWorld } from '../test/support/input-world.js';
import { postgresAvailable } from '../test/support/postgres-database.js';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

async function fuzz(store: StoreKind): Promise<boolean> {
  const world = await startInputWorld(store);
  const routes: Record<string, number> = {};
  const statuses: Record<number, number> = {};
  try {
    const result = await fc.check(
      fc.asyncProperty(hostileRequest(world), async ({ route, probe: request }) => {
        const answer = await probe(world, request);
        routes[route] = (routes[route] ?? 0) + 1;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const notServed =
          answer.status === 501 &&
          (answer.body as { error?: { code?: string } })?.error?.code === 'endpoint_not_served';
        return (answer.status >= 200 && answer.status < 500) || notServed;
      }),
      {
        numRuns: Number.MAX_SAFE_INTEGER,
        interruptAfterTimeLimit: SECONDS * 1000,
        ...(SEED === undefined ? {} : { seed: SEED }),
      },
    );
    const tried = Object.values(routes).reduce((sum, count) => sum + count, 0);
    console.log(
      `\n${store}: ${tried} cases tried in ${SECONDS} s (${result.numRuns} property runs, seed ${result.seed})`,
    );
    console.log(`  statuses: ${JSON.stringify(statuses)}`);
    for (const [route, count] of Object.entries(routes).sort())
      console.log(`  ${String(count).padStart(7)}  ${route}`);
    if (result.failed) console.log(`  FAILED:\n${fc.defaultReportMessage(result)}`);
    return !result.failed;
  } finally {
    await world.close();
  }
}

const stores: StoreKind[] = postgresAvailable ? ['sqlite', 'postgres'] : ['sqlite'];
if (!postgresAvailable) console.log('PostgreSQL is not reachable at 127.0.0.1:5432: SQLite only.');
let ok = true;
for (const store of stores) ok = (await fuzz(store)) && ok;
process.exit(ok ? 0 : 1);
