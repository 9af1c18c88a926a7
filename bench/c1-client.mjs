/**
 * The sequential (c1) client of bench/harness.ts, in a process of its own: the benchmark's own
 * process has just generated the loads, and its collector cleaning up after them landed on the c1
 * calls (bench/c1-trace.mjs showed it as the largest cause of the slowest calls). An outside
 * harness's client (wrk, a small Node script) carries no such heap; neither does this one.
 *
 * One process serves every histogram of a run, so its own code is warm after the first, as a
 * long-running client's is. Each histogram is a JSON line on stdin: { url, headers, payload, samples,
 * warmUpCalls, warmUpSeconds, until }. After the warm-up it writes "warm" on a line and waits for
 * a line on stdin (the parent reads the serving process's CPU time then); after the timed calls it
 * writes one JSON line: { timings, starts, monotonicStarts } (ms; starts since the epoch,
 * monotonicStarts on CLOCK_MONOTONIC). It ends when its stdin closes.
 */
import { createInterface } from 'node:readline';
import { request } from 'undici';

async function postAndRead(job) {
  const response = await request(job.url, { method: 'POST', headers: job.headers, body: job.payload });
  await response.body.text();
}

/** One call, timed with hrtime, in ms: to its whole answer, or to its first content_block_delta. */
async function timedCall(job) {
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
  if (job.until === 'answer') {
    await postAndRead(job);
    return elapsed();
  }
  const response = await request(job.url, { method: 'POST', headers: job.headers, body: job.payload });
  let first = 0;
  for await (const chunk of response.body) {
    if (!first && chunk.toString().includes('content_block_delta')) first = elapsed();
  }
  return first;
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

for (;;) {
  const { value: first, done } = await lines.next();
  if (done) break;
  const job = JSON.parse(first);
  for (let index = 0; index < job.warmUpCalls; index++) await postAndRead(job);
  const until = performance.now() + job.warmUpSeconds * 1000;
  while (performance.now() < until) await postAndRead(job);
  process.stdout.write('warm\n');
  await lines.next();
  const timings = [];
  const starts = [];
  const monotonicStarts = [];
  for (let index = 0; index < job.samples; index++) {
    starts.push(performance.timeOrigin + performance.now());
    monotonicStarts.push(Number(process.hrtime.bigint()) / 1e6);
    timings.push(await timedCall(job));
  }
  process.stdout.write(`${JSON.stringify({ timings, starts, monotonicStarts })}\n`);
}
