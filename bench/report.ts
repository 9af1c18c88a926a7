/** The benchmark's table: every figure of issue 16 with its ratio to the bare pass-through and its target. */
import { C1_WARM_UP_CALLS, type Histogram, type LoadResult, WARM_UP_SECONDS } from './harness.js';

export interface Figures {
  bare_c64: LoadResult;
  sqlite_c64: LoadResult;
  chat_c64: LoadResult;
  /** The pass-through's c64 load in the translation's scenario (its reference in the same round). */
  chat_bare_c64?: LoadResult;
  /** POST /v1/chat/completions to the chat-wire alias, plain and streamed. */
  completions_c64?: LoadResult;
  completions_streams_c16?: LoadResult;
  /** POST /v1/messages to the same alias in the same scenario: the reference of the two above. */
  completions_messages_c64?: LoadResult;
  completions_messages_streams_c16?: LoadResult;
  direct_c1: Histogram;
  bare_c1: Histogram;
  sqlite_c1: Histogram;
  chat_c1: Histogram;
  streams_sqlite_c16: LoadResult;
  streams_bare_c16: LoadResult;
  /** Streams through the messages -> chat-completions translation. */
  streams_chat_c16?: LoadResult;
  first_token_direct: Histogram;
  first_token_chat?: Histogram;
  first_token_bare: Histogram;
  first_token_sqlite: Histogram;
  pg_no_run_c64?: LoadResult;
  pg_runs64_c64?: LoadResult;
  pg_one_run_c64?: LoadResult;
  pg_two_replicas_c64?: LoadResult;
  invariant?: {
    committed: number;
    reserved: number;
    budget: number;
    unknown: number;
    auditSum: number;
    holds: boolean;
  };
  rss_sqlite: number;
  rss_bare: number;
}

interface Row {
  figure: string;
  gateway: string;
  reference: string;
  /** undefined when the reference is not above zero (an "added" figure whose reference adds nothing). */
  ratio: number | undefined;
  target: string;
  /** undefined: no target, or no ratio to judge it by. */
  met?: boolean;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const added = (value: number) => `${value < 0 ? '-' : '+'}${ms(Math.abs(value))}`;
const count = (value: number) => String(value);
const megabytes = (value: number) => `${value.toFixed(0)} MB`;
const hist = (h: Histogram) =>
  `${h.p50.toFixed(2)} / ${h.p90.toFixed(2)} / ${h.p99.toFixed(2)} / ${h.p999.toFixed(2)} / ${h.max.toFixed(1)}${h.cpuMsPerCall === undefined ? '' : `   CPU ${h.cpuMsPerCall.toFixed(3)}`}`;

/** A figure's target: how it reads in the table, and whether the ratio (or the gateway's own value) meets it. */
interface Target {
  text: string;
  met(ratio: number, gateway: number): boolean;
}
const atLeast = (bound: number): Target => ({ text: `>= ${bound}`, met: (ratio) => ratio >= bound });
const atMost = (bound: number): Target => ({ text: `<= ${bound}`, met: (ratio) => ratio <= bound });

/** One row: the gateway's value against the reference's, both shown by `show`; no target: '(none)'. */
function compared(
  figure: string,
  gateway: number,
  reference: number,
  show: (value: number) => string,
  target?: Target,
): Row {
  // A reference at or below zero (its added time within the direct call's noise) gives no ratio.
  const ratio = reference > 0 ? gateway / reference : undefined;
  return {
    figure,
    gateway: show(gateway),
    reference: show(reference),
    ratio,
    target: target?.text ?? '(none)',
    ...(target && ratio !== undefined && { met: target.met(ratio, gateway) }),
  };
}

export function report(
  f: Figures,
  run: { seconds: number; samples: number; repeat: number; logLevel: string },
): void {
  const out = (text = '') => process.stdout.write(`${text}\n`);
  const addedTo = (h: Histogram, direct: Histogram) => h.p50 - direct.p50;
  const rows: Row[] = [
    compared(
      'calls/s at c64 (SQLite, Run attached)',
      f.sqlite_c64.perSecond,
      f.bare_c64.perSecond,
      count,
      atLeast(0.45),
    ),
    compared('CPU per call at c64', f.sqlite_c64.cpuMsPerCall, f.bare_c64.cpuMsPerCall, ms, atMost(2.2)),
    compared(
      'added latency at c1, p50 (over direct)',
      addedTo(f.sqlite_c1, f.direct_c1),
      addedTo(f.bare_c1, f.direct_c1),
      added,
    ),
    compared('latency at c1, p99', f.sqlite_c1.p99, f.bare_c1.p99, ms, atMost(3)),
    compared(
      'streams/s at c16 (20 deltas)',
      f.streams_sqlite_c16.perSecond,
      f.streams_bare_c16.perSecond,
      count,
      atLeast(0.6),
    ),
    compared(
      'first token added at c1, p50',
      addedTo(f.first_token_sqlite, f.first_token_direct),
      addedTo(f.first_token_bare, f.first_token_direct),
      added,
      atMost(2),
    ),
    compared('peak RSS', f.rss_sqlite, f.rss_bare, megabytes, {
      text: '<= 160 MB',
      met: (_ratio, gateway) => gateway <= 160,
    }),
    compared(
      'messages -> chat translation: calls/s at c64',
      f.chat_c64.perSecond,
      (f.chat_bare_c64 ?? f.bare_c64).perSecond,
      count,
      atLeast(0.55),
    ),
    compared(
      'messages -> chat translation: added at c1, p50',
      addedTo(f.chat_c1, f.direct_c1),
      addedTo(f.bare_c1, f.direct_c1),
      added,
    ),
  ];
  if (f.streams_chat_c16)
    rows.push(
      compared(
        'messages -> chat translation: streams/s at c16',
        f.streams_chat_c16.perSecond,
        f.streams_bare_c16.perSecond,
        count,
        atLeast(0.5),
      ),
    );
  if (f.first_token_chat)
    rows.push(
      compared(
        'messages -> chat translation: first token added at c1, p50',
        addedTo(f.first_token_chat, f.first_token_direct),
        addedTo(f.first_token_bare, f.first_token_direct),
        added,
        atMost(2),
      ),
    );
  const sameTargets: Array<[string, LoadResult | undefined, LoadResult | undefined]> = [
    ['calls/s at c64', f.completions_c64, f.completions_messages_c64],
    ['streams/s at c16', f.completions_streams_c16, f.completions_messages_streams_c16],
  ];
  for (const [what, completions, messages] of sameTargets) {
    if (!completions || !messages) continue;
    rows.push(
      compared(
        `/v1/chat/completions / /v1/messages, chat target: ${what}`,
        completions.perSecond,
        messages.perSecond,
        count,
        atLeast(0.9),
      ),
      compared(
        `/v1/chat/completions / /v1/messages, chat target: CPU per call (${what})`,
        completions.cpuMsPerCall,
        messages.cpuMsPerCall,
        ms,
        atMost(1.1),
      ),
    );
  }
  if (f.pg_one_run_c64 && f.pg_runs64_c64 && f.pg_no_run_c64) {
    const oneRun = f.pg_one_run_c64;
    rows.push(
      compared('PostgreSQL calls/s at c64, no Run', f.pg_no_run_c64.perSecond, f.bare_c64.perSecond, count),
      compared('PostgreSQL calls/s at c64, 64 Runs', f.pg_runs64_c64.perSecond, f.bare_c64.perSecond, count),
      compared(
        'PostgreSQL one Run / 64 Runs (calls/s at c64)',
        oneRun.perSecond,
        f.pg_runs64_c64.perSecond,
        count,
        atLeast(0.7),
      ),
      compared(
        'PostgreSQL one Run / SQLite (calls/s at c64)',
        oneRun.perSecond,
        f.sqlite_c64.perSecond,
        count,
        atLeast(0.6),
      ),
      compared('PostgreSQL CPU per call at c64, one Run', oneRun.cpuMsPerCall, f.bare_c64.cpuMsPerCall, ms),
    );
  }
  out(
    `\nsvc gateway benchmark (node ${process.version}, ${run.seconds} s per load, ${run.samples} sequential samples, median of ${run.repeat} run(s), each scenario's gateway and reference alternated between repeats; ${WARM_UP_SECONDS} s of warm-up before each measurement, ${C1_WARM_UP_CALLS} untimed calls before each c1 histogram; gateways at logging.level ${run.logLevel}; gateways and bare pass-through on core 1)\n`,
  );
  out('| figure | svc gateway | bare pass-through (or reference) | ratio | target | met |');
  out('|---|---|---|---|---|---|');
  for (const row of rows) {
    const met =
      row.met !== undefined ? (row.met ? 'yes' : 'NO') : row.target === '(none)' ? '' : 'n/a (no ratio)';
    const ratio = row.ratio === undefined ? 'n/a' : row.ratio.toFixed(2);
    out(`| ${row.figure} | ${row.gateway} | ${row.reference} | ${ratio} | ${row.target} | ${met} |`);
  }
  out(
    "\nc1 latency histograms, ms (p50 / p90 / p99 / p99.9 / max), and the serving process's CPU ms per call (the simulator's for direct; per whole stream for the first token)",
  );
  out(`  direct to simulator      ${hist(f.direct_c1)}`);
  out(`  bare pass-through        ${hist(f.bare_c1)}`);
  out(`  gateway (SQLite, Run)    ${hist(f.sqlite_c1)}`);
  out(`  gateway, chat target     ${hist(f.chat_c1)}`);
  out(`  first token, direct      ${hist(f.first_token_direct)}`);
  out(`  first token, bare        ${hist(f.first_token_bare)}`);
  out(`  first token, gateway     ${hist(f.first_token_sqlite)}`);
  if (f.first_token_chat) out(`  first token, chat target ${hist(f.first_token_chat)}`);
  const loads: Array<[string, LoadResult | undefined]> = [
    ['bare c64', f.bare_c64],
    ['gateway SQLite c64', f.sqlite_c64],
    ['gateway chat target c64', f.chat_c64],
    ['bare c64 (translation scenario)', f.chat_bare_c64],
    ['/v1/chat/completions chat target c64', f.completions_c64],
    ['/v1/messages chat target c64', f.completions_messages_c64],
    ['/v1/chat/completions streams c16', f.completions_streams_c16],
    ['/v1/messages chat target streams c16', f.completions_messages_streams_c16],
    ['streams gateway c16', f.streams_sqlite_c16],
    ['streams gateway chat target c16', f.streams_chat_c16],
    ['streams bare c16', f.streams_bare_c16],
    ['PostgreSQL no Run c64', f.pg_no_run_c64],
    ['PostgreSQL 64 Runs c64', f.pg_runs64_c64],
    ['PostgreSQL one Run c64', f.pg_one_run_c64],
    ['PostgreSQL two replicas, one Run, c64', f.pg_two_replicas_c64],
  ];
  out(
    '\nloads (calls/s, p50 / p99 ms, non-2xx, CPU ms per call, share of the time its event loop waited for its core, share of its CPU outside its main thread)',
  );
  for (const [label, result] of loads) {
    if (!result) continue;
    out(
      `  ${label.padEnd(40)} ${String(result.perSecond).padStart(6)}  ${result.p50} / ${result.p99}  non-2xx ${result.non2xx}  CPU ${result.cpuMsPerCall.toFixed(3)}  waited ${(100 * result.waitedShare).toFixed(0)} %  helpers ${(100 * result.helperShare).toFixed(0)} %`,
    );
  }
  if (f.invariant) {
    const i = f.invariant;
    out(
      `\ntwo replicas on one PostgreSQL database, one Run: ${f.pg_two_replicas_c64!.perSecond} calls/s; ledger invariant ${i.holds ? 'holds' : 'BROKEN'} (committed ${i.committed} + reserved ${i.reserved} <= budget ${i.budget}; committed = audit sum ${i.auditSum}; unknown attempts ${i.unknown})`,
    );
  }
}
