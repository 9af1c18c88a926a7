/**
 * The side-by-side benchmark of issue 16. Prints its figures with their ratio to the bare
 * pass-through measured in the same run; asserts nothing.
 *
 *   npm run build && node --import tsx bench/run.ts
 *   BENCH_SECONDS=6 BENCH_SAMPLES=3000 BENCH_REPEAT=3 (medians over repeats)
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres (admin URL; a throw-away
 *   database is created and dropped; the PostgreSQL part is skipped when it does not answer)
 *   BENCH_PROFILE_DIR=/tmp/prof (the SQLite gateway and the first PostgreSQL gateway write a --cpu-prof there)
 *   BENCH_ONLY=streams alone (only the c16 stream loads, gateway on SQLite and bare, alternated
 *   BENCH_REPEAT times; no PostgreSQL: a fast loop for the stream path)
 *   BENCH_COMPARE_DIST=/path/to/other/dist (with BENCH_ONLY=streams or BENCH_ONLY=c64 alone:
 *   instead, a second SQLite gateway built from another checkout and this one take BENCH_REPEAT
 *   short turns of c16 streams or c64 unary calls, both ways round: before/after on a busy machine)
 *   BENCH_COMPARE_NODE_ARGS="--flag ..." (node flags for that second gateway; without
 *   BENCH_COMPARE_DIST it runs this build: the turns then compare node or V8 settings)
 *   BENCH_ONLY=c64,c1,first_token,... (measure only these groups of c64, chat, completions, c1, streams,
 *   first_token, pg; `completions` is POST /v1/chat/completions to the chat-wire alias, c64 plain
 *   and c16 streamed, beside /v1/messages' c64 and streams in the same run; prints the measured figures as JSON instead of the table: for iterating, not for README)
 *   BENCH_C1_WARMUP=1000 (untimed sequential calls to each process before each of its c1 and
 *   first-token histograms, besides BENCH_WARMUP_SECONDS of them)
 *   BENCH_LOG_LEVEL=warn (the gateways' logging.level; default info, the gateway's own default,
 *   so each call writes its request line as it does for users;
 *   each gateway's stdout, its log, goes to a file in the run's folder)
 *
 * Layout on a 2-core machine: every gateway and the bare pass-through pinned to core 1; the
 * simulator (latency 0) and the load generator on core 0. 1 KB requests, max_tokens 256, streams
 * of 20 deltas. Every gateway call is attached to a Run, so each takes a reservation, a settlement
 * and an audit entry. The PostgreSQL part measures one gateway (no Run, 64 Runs, one Run), then two
 * replicas on one Run, and checks the ledger invariant afterwards. Its two gateways run only while
 * it is measured (started, warmed up and stopped in every repeat), so that the SQLite gateway and
 * the bare pass-through have core 1 to themselves, as in the harness.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  type BenchGateway,
  callHeaders,
  chatCallHeaders,
  chatCompletionsBody,
  createRun,
  DURATION,
  freePort,
  type Histogram,
  type LoadResult,
  load,
  median,
  messagesBody,
  peakRssMb,
  pinSelf,
  type Started,
  sequentialLatency,
  start,
  startBenchGateway,
  stopC1Client,
  traceProcess,
  twentyDeltaStreams,
  type Until,
  WARM_UP_SECONDS,
} from './harness.js';
import { type Figures, report } from './report.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 3000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 1);
/** BENCH_ONLY=streams alone: the alternating stream loop below, not the grouped figures. */
const STREAMS_ONLY = process.env.BENCH_ONLY === 'streams';
/** BENCH_COMPARE_NODE_ARGS="--flag ...": node flags for the compared gateway (alone: this build with those flags). */
const COMPARE_NODE_ARGS = (process.env.BENCH_COMPARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** BENCH_COMPARE_DIST with BENCH_ONLY=streams or c64 alone: turns of this build and another build. */
const COMPARE_DIST = process.env.BENCH_COMPARE_DIST ?? (COMPARE_NODE_ARGS.length > 0 ? 'dist' : undefined);
const COMPARE_LOAD =
  COMPARE_DIST && (process.env.BENCH_ONLY === 'streams' || process.env.BENCH_ONLY === 'c64')
    ? process.env.BENCH_ONLY
    : undefined;
/** BENCH_COMPARE_MODEL=bench-chat: the compared turns go through the messages -> chat-completions translation. */
const COMPARE_MODEL = process.env.BENCH_COMPARE_MODEL ?? 'bench';
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ONLY = process.env.BENCH_ONLY?.split(',');
/** BENCH_NODE_ARGS="--flag ...": node flags for the SQLite gateway only (A/B of V8 flags). */
const GATEWAY_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const want = (group: string) => !ONLY || ONLY.includes(group);
/** The gateways' logging.level: the gateway's default unless BENCH_LOG_LEVEL says otherwise. */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

/** A gateway of the benchmark on the measured core (core 1), at LOG_LEVEL. */
function startGateway(
  folder: string,
  name: string,
  simulatorPort: number,
  store: string,
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
  main = 'dist/src/main.js',
): Promise<BenchGateway> {
  return startBenchGateway({
    core: 1,
    folder,
    name,
    simulatorPort,
    store,
    logLevel: LOG_LEVEL,
    env,
    nodeArgs,
    main,
  });
}

const PLAIN = { 'content-type': 'application/json' };

async function postgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 1500 });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const name = `svc_bench_${process.pid}`;
  try {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin(`CREATE DATABASE ${name}`);
  } catch (error) {
    process.stderr.write(`PostgreSQL part skipped: ${(error as Error).message}\n`);
    return undefined;
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** After the two-replica load: the Run's books agree with its audit trail. */
async function ledgerInvariant(url: string, runId: string): Promise<Figures['invariant']> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      const run = (await client.query('SELECT * FROM runs WHERE id = $1', [runId])).rows[0];
      if (Number(run.reserved) === 0 || attempt === 99) {
        const audit = (
          await client.query('SELECT coalesce(sum(cost), 0)::bigint AS cost FROM audit WHERE run_id = $1', [
            runId,
          ])
        ).rows[0];
        const committed = Number(run.committed);
        return {
          committed,
          reserved: Number(run.reserved),
          budget: Number(run.budget),
          unknown: Number(run.unknown_attempts),
          auditSum: Number(audit.cost),
          holds:
            committed + Number(run.reserved) <= Number(run.budget) &&
            Number(run.reserved) === 0 &&
            committed === Number(audit.cost),
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('unreachable');
  } finally {
    await client.end();
  }
}

/** The two PostgreSQL gateways on the bench database, warmed up, with 64 fresh Runs on the first. */
async function startPostgresPair(pgWorld: PostgresWorld): Promise<{
  postgres: BenchGateway;
  replica: BenchGateway;
  runs: string[];
}> {
  const store = '{ kind: postgres, postgres: { url_env: SVC_BENCH_DATABASE_URL } }';
  const env = { SVC_BENCH_DATABASE_URL: pgWorld.databaseUrl };
  const { folder, simulatorPort } = pgWorld;
  const profile = process.env.BENCH_PROFILE_DIR;
  const postgres = await startGateway(
    folder,
    'pg-a',
    simulatorPort,
    store,
    env,
    profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
  );
  let replica: BenchGateway | undefined;
  try {
    replica = await startGateway(folder, 'pg-b', simulatorPort, store, env);
    const runs: string[] = [];
    for (let index = 0; index < 64; index++) runs.push(await createRun(postgres));
    await warmUp(postgres, runs[0]!);
    return { postgres, replica, runs };
  } catch (error) {
    await replica?.process.stop();
    await postgres.process.stop();
    throw error;
  }
}

/**
 * JIT, connection pools and the database's first pages: a c64 load (with `streamsOnly`, whose loops
 * measure no unary call, a c16 stream load instead) and a c16 stream load. Two loads in every case:
 * the first close of a load's connections meets new code (a burst of deoptimizations and
 * recompiles, docs/performance.md, "The c1 tail"), which belongs in the warm-up.
 */
async function warmUp(
  gateway: BenchGateway,
  runId: string | undefined,
  { streamsOnly = false }: { streamsOnly?: boolean } = {},
): Promise<void> {
  await load({
    url: `${gateway.url}/v1/messages`,
    headers: callHeaders(gateway, runId),
    body: messagesBody(streamsOnly),
    connections: streamsOnly ? 16 : 64,
  });
  await load({
    url: `${gateway.url}/v1/messages`,
    headers: callHeaders(gateway, runId),
    body: messagesBody(true),
    connections: 16,
  });
  if (want('completions') && !streamsOnly) {
    for (const stream of [false, true]) {
      await load({
        url: `${gateway.url}/v1/chat/completions`,
        headers: chatCallHeaders(gateway, runId),
        body: chatCompletionsBody(stream),
        connections: stream ? 16 : 64,
      });
    }
  }
}

/** One measured figure: a load or a sequential histogram of one process, with its warm-up. */
interface Step {
  key: keyof Figures;
  measure(): Promise<LoadResult | Histogram>;
}

/**
 * A load preceded by WARM_UP_SECONDS of the same load, untimed (an outside harness's warm-up: the
 * process measured comes straight from the previous scenario's load).
 */
async function warmedLoad(options: Parameters<typeof load>[0]): Promise<LoadResult> {
  if (WARM_UP_SECONDS > 0) await load({ ...options, pids: [], seconds: WARM_UP_SECONDS });
  return load(options);
}

/**
 * The scenarios of one repeat, in order; each lists the gateway's steps, then the references'
 * (the bare pass-through, the simulator directly, or /v1/messages for /v1/chat/completions).
 * `measureOnce` runs them in this order in even repeats and each scenario's steps reversed in odd
 * ones, so two repeats make the rounds A B B A of an outside harness.
 */
function scenarios(world: World): Array<{ group: string; steps: Step[] }> {
  const { bare, sqlite, directUrl, sqliteRun } = world;
  const bareUrl = `${bare.url}/v1/messages`;
  const sqliteUrl = `${sqlite.url}/v1/messages`;
  const completionsUrl = `${sqlite.url}/v1/chat/completions`;
  const gatewayLoad =
    (stream: boolean, model = 'bench'): Step['measure'] =>
    () =>
      warmedLoad({
        url: sqliteUrl,
        headers: callHeaders(sqlite, sqliteRun),
        body: messagesBody(stream, model),
        connections: stream ? 16 : 64,
        pids: [sqlite.process.pid],
      });
  const bareLoad = (stream: boolean) => () =>
    warmedLoad({
      url: bareUrl,
      headers: PLAIN,
      body: messagesBody(stream),
      connections: stream ? 16 : 64,
      pids: [bare.pid],
    });
  const completionsLoad = (stream: boolean) => () =>
    warmedLoad({
      url: completionsUrl,
      headers: chatCallHeaders(sqlite, sqliteRun),
      body: chatCompletionsBody(stream),
      connections: stream ? 16 : 64,
      pids: [sqlite.process.pid],
    });
  const tokenSamples = Math.max(100, Math.floor(SAMPLES / 10));
  const sequential =
    (url: string, headers: Record<string, string>, model: string, until: Until, pid: number, label: string) =>
    () =>
      sequentialLatency(
        url,
        headers,
        messagesBody(until === 'first_token', model),
        until === 'first_token' ? tokenSamples : SAMPLES,
        pid,
        until,
        label,
      );
  const gatewayHeaders = callHeaders(sqlite, sqliteRun);
  const direct = `${directUrl}/v1/messages`;
  return [
    {
      group: 'c64',
      steps: [
        { key: 'sqlite_c64', measure: gatewayLoad(false) },
        { key: 'bare_c64', measure: bareLoad(false) },
      ],
    },
    {
      group: 'chat',
      steps: [
        { key: 'chat_c64', measure: gatewayLoad(false, 'bench-chat') },
        { key: 'chat_bare_c64', measure: bareLoad(false) },
      ],
    },
    {
      group: 'c1',
      steps: [
        {
          key: 'sqlite_c1',
          measure: sequential(sqliteUrl, gatewayHeaders, 'bench', 'answer', sqlite.process.pid, 'gateway'),
        },
        {
          key: 'chat_c1',
          measure: sequential(sqliteUrl, gatewayHeaders, 'bench-chat', 'answer', sqlite.process.pid, 'chat'),
        },
        { key: 'bare_c1', measure: sequential(bareUrl, PLAIN, 'bench', 'answer', bare.pid, 'bare') },
        {
          key: 'direct_c1',
          measure: sequential(direct, PLAIN, 'bench', 'answer', world.simulatorPid, 'direct'),
        },
      ],
    },
    {
      group: 'streams',
      steps: [
        { key: 'streams_sqlite_c16', measure: gatewayLoad(true) },
        { key: 'streams_chat_c16', measure: gatewayLoad(true, 'bench-chat') },
        { key: 'streams_bare_c16', measure: bareLoad(true) },
      ],
    },
    {
      group: 'first_token',
      steps: [
        {
          key: 'first_token_sqlite',
          measure: sequential(
            sqliteUrl,
            gatewayHeaders,
            'bench',
            'first_token',
            sqlite.process.pid,
            'token-gateway',
          ),
        },
        {
          key: 'first_token_chat',
          measure: sequential(
            sqliteUrl,
            gatewayHeaders,
            'bench-chat',
            'first_token',
            sqlite.process.pid,
            'token-chat',
          ),
        },
        {
          key: 'first_token_bare',
          measure: sequential(bareUrl, PLAIN, 'bench', 'first_token', bare.pid, 'token-bare'),
        },
        {
          key: 'first_token_direct',
          measure: sequential(direct, PLAIN, 'bench', 'first_token', world.simulatorPid, 'token-direct'),
        },
      ],
    },
    {
      group: 'completions',
      steps: [
        { key: 'completions_c64', measure: completionsLoad(false) },
        { key: 'completions_streams_c16', measure: completionsLoad(true) },
        { key: 'completions_messages_c64', measure: gatewayLoad(false, 'bench-chat') },
        {
          key: 'completions_messages_streams_c16',
          measure: gatewayLoad(true, 'bench-chat'),
        },
      ],
    },
  ];
}

async function measureOnce(world: World, round: number): Promise<Figures> {
  const { bare, sqlite } = world;
  const figures: Figures = {} as Figures;
  for (const scenario of scenarios(world)) {
    if (!want(scenario.group)) continue;
    const steps = round % 2 === 0 ? scenario.steps : [...scenario.steps].reverse();
    for (const step of steps)
      (figures as unknown as Record<string, unknown>)[step.key] = await step.measure();
  }
  if (world.postgres && want('pg')) {
    const { postgres, replica, runs } = await startPostgresPair(world.postgres);
    try {
      Object.assign(figures, await measurePostgres(world.postgres.databaseUrl, postgres, replica, runs));
    } finally {
      await replica.process.stop();
      await postgres.process.stop();
    }
  }
  figures.rss_sqlite = peakRssMb(sqlite.process.pid);
  figures.rss_bare = peakRssMb(bare.pid);
  return figures;
}

async function measurePostgres(
  databaseUrl: string,
  postgres: BenchGateway,
  replica: BenchGateway,
  pgRuns: string[],
): Promise<Partial<Figures>> {
  const figures: Partial<Figures> = {};
  /** A c64 unary load on the first gateway: no Run, one Run, or (headersFor) a Run per connection. */
  const c64 = (runId?: string, headersFor?: (connection: number) => Record<string, string>) =>
    load({
      url: `${postgres.url}/v1/messages`,
      headers: callHeaders(postgres, runId),
      body: messagesBody(false),
      connections: 64,
      pids: [postgres.process.pid],
      ...(headersFor && { headersFor }),
    });
  figures.pg_no_run_c64 = await c64();
  figures.pg_runs64_c64 = await c64(undefined, (connection) => ({
    'x-svc-run-id': pgRuns[connection % pgRuns.length]!,
  }));
  figures.pg_one_run_c64 = await c64(pgRuns[0]);
  const runId = await createRun(postgres);
  const both = await Promise.all(
    [postgres, replica].map((gateway) =>
      load({
        url: `${gateway.url}/v1/messages`,
        headers: callHeaders(gateway, runId),
        body: messagesBody(false),
        connections: 32,
        pids: [gateway.process.pid],
      }),
    ),
  );
  figures.pg_two_replicas_c64 = {
    perSecond: both[0]!.perSecond + both[1]!.perSecond,
    p50: Math.max(both[0]!.p50, both[1]!.p50),
    p99: Math.max(both[0]!.p99, both[1]!.p99),
    non2xx: both[0]!.non2xx + both[1]!.non2xx,
    cpuMsPerCall: (both[0]!.cpuMsPerCall + both[1]!.cpuMsPerCall) / 2,
    waitedShare: (both[0]!.waitedShare + both[1]!.waitedShare) / 2,
    helperShare: (both[0]!.helperShare + both[1]!.helperShare) / 2,
  };
  figures.invariant = await ledgerInvariant(databaseUrl, runId);
  return figures;
}

/**
 * BENCH_COMPARE_DIST: this build's and the other build's turns of one load (c16 streams or c64
 * unary calls) in turn (this, other, this, ...), so that a busy machine's changing load falls on
 * both alike, then the same with the places swapped (other, this, other, ...); prints each turn's
 * CPU per call, each series' median of the inner turn over the mean of the outer turns around it,
 * and their geometric mean, which cancels what the inner place does on its own.
 */
async function compareBuilds(
  world: World,
  compare: BenchGateway,
  compareRun: string,
  streams: boolean,
): Promise<void> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const what = streams ? 'stream' : 'call';
  const turn = (gateway: BenchGateway, run: string) =>
    load({
      url: `${gateway.url}/v1/messages`,
      headers: callHeaders(gateway, run),
      body: messagesBody(streams, COMPARE_MODEL),
      connections: streams ? 16 : 64,
      pids: [gateway.process.pid],
    });
  /** One series: `inner`'s turns each between two of `outer`'s; the median of inner / mean(outer around). */
  const series = async (outer: [BenchGateway, string], inner: [BenchGateway, string], label: string) => {
    const outers: number[] = [(await turn(...outer)).cpuMsPerCall];
    const inners: number[] = [];
    for (let round = 0; round < REPEAT; round++) {
      inners.push((await turn(...inner)).cpuMsPerCall);
      outers.push((await turn(...outer)).cpuMsPerCall);
      out(
        `${label} turn ${round + 1}: CPU per ${what} ${outers.at(-2)!.toFixed(3)} / ${inners.at(-1)!.toFixed(3)} / ${outers.at(-1)!.toFixed(3)} ms`,
      );
    }
    return median(inners.map((value, index) => value / ((outers[index]! + outers[index + 1]!) / 2)));
  };
  const mine: [BenchGateway, string] = [world.sqlite, world.sqliteRun];
  const theirs: [BenchGateway, string] = [compare, compareRun];
  // An untimed turn of each first: the warm-up loads go to `bench`, the turns maybe to another alias.
  await turn(...mine);
  await turn(...theirs);
  // Both ways round: a place in the turns can read a few per cent low on its own (docs/performance.md,
  // "Comparing two builds"); the geometric mean of the two series cancels it.
  const first = await series(mine, theirs, 'this build / compared / this build,');
  const second = await series(theirs, mine, 'compared / this build / compared,');
  out(
    `compared build's CPU per ${what} / this build's: ${Math.sqrt(first / second).toFixed(3)} (compared inside: ${first.toFixed(3)}; this build inside: ${(1 / second).toFixed(3)}; the inner place reads ${Math.sqrt(first * second).toFixed(3)} of the outer on its own; ${REPEAT} turns each way)`,
  );
}

/** BENCH_ONLY=streams: the c16 stream loads, gateway then bare, each round printed, then the medians. */
async function measureStreams(world: World): Promise<void> {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const line = (name: string, result: LoadResult) =>
    `${name} ${String(result.perSecond).padStart(6)} streams/s  p50 ${result.p50} / p99 ${result.p99} ms  non-2xx ${result.non2xx}  CPU ${result.cpuMsPerCall.toFixed(3)} ms`;
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 0; round < REPEAT; round++) {
    const gateway = await load({
      url: `${world.sqlite.url}/v1/messages`,
      headers: callHeaders(world.sqlite, world.sqliteRun),
      body: messagesBody(true),
      connections: 16,
      pids: [world.sqlite.process.pid],
    });
    const bare = await load({
      url: `${world.bare.url}/v1/messages`,
      headers: PLAIN,
      body: messagesBody(true),
      connections: 16,
      pids: [world.bare.pid],
    });
    // The same calls unstreamed at the same concurrency: what the stream path adds over a unary call.
    const unary = await load({
      url: `${world.sqlite.url}/v1/messages`,
      headers: callHeaders(world.sqlite, world.sqliteRun),
      body: messagesBody(false),
      connections: 16,
      pids: [world.sqlite.process.pid],
    });
    ratios.push(gateway.perSecond / bare.perSecond);
    cpuRatios.push(gateway.cpuMsPerCall / bare.cpuMsPerCall);
    out(line('streams gateway c16', gateway));
    out(line('streams bare c16   ', bare));
    out(line('unary gateway c16  ', unary));
    out(
      `  ratio ${(gateway.perSecond / bare.perSecond).toFixed(2)}  CPU ratio ${(gateway.cpuMsPerCall / bare.cpuMsPerCall).toFixed(2)}`,
    );
  }
  out(
    `median of ${REPEAT}: streams/s ratio ${median(ratios).toFixed(2)} (target >= 0.6), CPU per stream ratio ${median(cpuRatios).toFixed(2)}`,
  );
}

interface PostgresWorld {
  databaseUrl: string;
  folder: string;
  simulatorPort: number;
}

interface World {
  bare: Started & { url: string };
  sqlite: BenchGateway;
  sqliteRun: string;
  compare?: BenchGateway;
  compareRun?: string;
  /** Where the PostgreSQL pair is started in each repeat (absent: no PostgreSQL part). */
  postgres?: PostgresWorld;
  directUrl: string;
  /** The simulator's process (the direct figures' CPU per call). */
  simulatorPid: number;
  simulatorUrl: string;
}

/** One repeat's loads on stderr (progress, and each repeat's spread behind the medians). */
function progressLine(figures: Figures): string {
  return Object.entries(figures)
    .filter((entry): entry is [string, LoadResult] => typeof entry[1] === 'object' && 'perSecond' in entry[1])
    .map(
      ([name, result]) =>
        `${name} ${result.perSecond}/s (waited ${Math.round(result.waitedShare * 100)} %, helpers ${Math.round(result.helperShare * 100)} %)`,
    )
    .join(', ');
}

/** Median of every numeric leaf over the repeats (the invariant is the last repeat's). */
function medianFigures(all: Figures[]): Figures {
  const merge = (values: unknown[]): unknown => {
    if (typeof values[0] === 'number') return median(values as number[]);
    if (typeof values[0] === 'boolean') return (values as boolean[]).every(Boolean);
    if (values[0] && typeof values[0] === 'object') {
      return Object.fromEntries(
        Object.keys(values[0] as object).map((key) => [
          key,
          merge(values.map((value) => (value as Record<string, unknown>)[key])),
        ]),
      );
    }
    return values[values.length - 1];
  };
  return merge(all) as Figures;
}

async function main() {
  // The load generator (this process) on core 0 with the simulator, so it never takes turns on the
  // measured core (docs/performance.md, "How to measure").
  pinSelf(0);
  const folder = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const stops: Array<() => Promise<void>> = [];
  const database = !STREAMS_ONLY && want('pg') ? await postgresDatabase() : undefined;
  try {
    const simulatorPort = await freePort();
    const simulator = await start(
      0,
      ['--import', 'tsx', 'src/simulator/main.ts', '--port', String(simulatorPort)],
      'http://',
    );
    stops.push(simulator.stop);
    const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
    const barePort = await freePort();
    // The gateway turns V8's allocation-site pretenuring off for itself (src/startup/v8-policy.ts);
    // so does the bare pass-through here, or the one start in three or four that pretenures its
    // request objects makes the reference slow and flatters every ratio (docs/performance.md,
    // "V8 and memory").
    const bareProcess = await start(
      1,
      [
        '--no-allocation-site-pretenuring',
        '--import',
        'tsx',
        'bench/bare-proxy.ts',
        String(barePort),
        simulatorUrl,
      ],
      'bare proxy',
    );
    stops.push(bareProcess.stop);
    const profile = process.env.BENCH_PROFILE_DIR;
    const sqlite = await startGateway(
      join(folder),
      'sqlite',
      simulatorPort,
      `{ kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }`,
      {},
      [...GATEWAY_NODE_ARGS, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
    );
    stops.push(sqlite.process.stop);
    const world: World = {
      bare: { ...bareProcess, url: `http://127.0.0.1:${barePort}` },
      sqlite,
      sqliteRun: await createRun(sqlite),
      directUrl: simulatorUrl,
      simulatorPid: simulator.pid,
      simulatorUrl,
    };
    if (COMPARE_DIST && COMPARE_LOAD) {
      world.compare = await startGateway(
        join(folder, 'compare'),
        'compare',
        simulatorPort,
        `{ kind: sqlite, sqlite: { path: ${join(folder, 'compare.db')} } }`,
        {},
        COMPARE_NODE_ARGS,
        join(COMPARE_DIST, 'src/main.js'),
      );
      stops.push(world.compare.process.stop);
      world.compareRun = await createRun(world.compare);
    }
    traceProcess('bench', process.pid);
    traceProcess('simulator', simulator.pid);
    traceProcess('bare pass-through', bareProcess.pid);
    traceProcess('gateway', sqlite.process.pid);
    if (database) world.postgres = { databaseUrl: database.url, folder: join(folder, 'pg'), simulatorPort };
    await twentyDeltaStreams(simulatorUrl);
    // Warm-up (JIT, connection pools, the database files' first pages).
    await warmUp(world.sqlite, world.sqliteRun, { streamsOnly: STREAMS_ONLY });
    if (world.compare)
      await warmUp(world.compare, world.compareRun, { streamsOnly: COMPARE_LOAD === 'streams' });
    await load({
      url: `${world.bare.url}/v1/messages`,
      headers: PLAIN,
      body: messagesBody(false),
      connections: 64,
    });
    // The c1 client's own code warm before the first histogram (calls and streams, to the simulator).
    if (!STREAMS_ONLY && !world.compare && ['c1', 'first_token'].some(want))
      for (const stream of [false, true])
        await sequentialLatency(`${simulatorUrl}/v1/messages`, PLAIN, messagesBody(stream), 3000);
    if (world.compare) {
      await compareBuilds(world, world.compare, world.compareRun!, COMPARE_LOAD === 'streams');
      return;
    }
    if (STREAMS_ONLY) {
      await measureStreams(world);
      return;
    }
    const all: Figures[] = [];
    for (let round = 0; round < REPEAT; round++) {
      all.push(await measureOnce(world, round));
      process.stderr.write(`repeat ${round + 1} of ${REPEAT}: ${progressLine(all.at(-1)!)}\n`);
    }
    if (ONLY) process.stdout.write(`${JSON.stringify(medianFigures(all), null, 1)}\n`);
    else
      report(medianFigures(all), {
        seconds: DURATION,
        samples: SAMPLES,
        repeat: REPEAT,
        logLevel: LOG_LEVEL,
      });
  } finally {
    stopC1Client();
    for (const stop of stops.reverse()) await stop();
    await database?.drop().catch(() => undefined);
    rmSync(folder, { recursive: true, force: true });
  }
}

export type { Histogram, LoadResult };

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
