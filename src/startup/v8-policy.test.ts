import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, scavengeChosen, scavengeFlag, startupFlags } from './v8-policy.js';

const run = promisify(execFile);
const policy = fileURLToPath(new URL('./v8-policy.ts', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const HEAP = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
const WASM = '--no-wasm-loop-unrolling';
const PRETENURE = '--no-allocation-site-pretenuring';

/** The stderr of a node that is refused `option` in NODE_OPTIONS ('' when node accepts it). */
async function refusedInNodeOptions(option: string): Promise<string> {
  return run(process.execPath, ['-e', '1'], { env: { ...process.env, NODE_OPTIONS: option } }).then(
    () => '',
    (error: { stderr: string }) => error.stderr,
  );
}

describe('startupFlags', () => {
  it('sets every start-up flag when the operator chose none', () => {
    expect(startupFlags([])).toEqual([HEAP, WASM, PRETENURE]);
    expect(startupFlags(['--heap-prof', '--max-old-space-size=512'])).toEqual([HEAP, WASM, PRETENURE]);
  });

  it("leaves an operator's own choice on node's command line alone, flag by flag", () => {
    expect(startupFlags(['--heap-growing-percent=50'])).toEqual([WASM, PRETENURE]);
    expect(startupFlags(['--heap_growing_percent=0'])).toEqual([WASM, PRETENURE]);
    expect(startupFlags(['--wasm-loop-unrolling'])).toEqual([HEAP, PRETENURE]);
    expect(startupFlags(['--no-wasm-loop-unrolling'])).toEqual([HEAP, PRETENURE]);
    expect(startupFlags(['--allocation-site-pretenuring'])).toEqual([HEAP, WASM]);
    expect(startupFlags(['--no_allocation_site_pretenuring'])).toEqual([HEAP, WASM]);
    expect(
      startupFlags([
        '--no_wasm_loop_unrolling',
        '--heap-growing-percent=25',
        '--allocation-site-pretenuring',
      ]),
    ).toEqual([]);
  });

  it('are flags node refuses in NODE_OPTIONS (so the command line is the only override)', async () => {
    expect(await refusedInNodeOptions('--heap-growing-percent=10')).toContain('not allowed in NODE_OPTIONS');
    expect(await refusedInNodeOptions('--wasm-loop-unrolling')).toContain('not allowed in NODE_OPTIONS');
    expect(await refusedInNodeOptions('--no-allocation-site-pretenuring')).toContain(
      'not allowed in NODE_OPTIONS',
    );
  });
});

describe('applyV8Policy', () => {
  it('sets flags this V8 knows (an unknown one would only print an error and change nothing)', async () => {
    const script = `(await import(${JSON.stringify(policy)})).applyV8Policy([]);`;
    const { stdout, stderr } = await run(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ]);
    expect(stderr).toBe('');
    expect(stdout).toBe('');
    const unknown = await run(process.execPath, [
      '-e',
      "require('v8').setFlagsFromString('--no-such-heap-flag=1')",
    ]);
    expect(unknown.stderr).toContain('unrecognized flag');
  });

  /**
   * The largest compiler zone (bytes) of the WebAssembly functions V8 optimized while undici read
   * 200 responses, its tier-up brought forward by a small tiering budget.
   */
  async function largestWasmZone(apply: boolean): Promise<number> {
    const script = `
      import http from 'node:http';
      import { Pool } from 'undici';
      if (${apply}) (await import(${JSON.stringify(policy)})).applyV8Policy([]);
      const server = http.createServer((request, response) => response.end('ok'));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const pool = new Pool('http://127.0.0.1:' + server.address().port);
      for (let index = 0; index < 200; index++) await (await pool.request({ path: '/', method: 'GET' })).body.text();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await pool.close();
      server.close();`;
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--wasm-tiering-budget=1000',
        '--trace-wasm-compilation-times',
        '--input-type=module',
        '-e',
        script,
      ],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    );
    const zones = [...stdout.matchAll(/using TurboFan, took \d+ ms and (\d+) \/ \d+ max\/total bytes/g)].map(
      (match) => Number(match[1]),
    );
    return Math.max(0, ...zones);
  }

  it("makes the optimizing compile of undici's response parser use a smaller zone", async () => {
    const [plain, withPolicy] = await Promise.all([largestWasmZone(false), largestWasmZone(true)]);
    // Without the policy the parser's main function needs ~29 MB (node 20); with it ~20 MB.
    expect(plain).toBeGreaterThan(10 * 1024 * 1024);
    expect(withPolicy).toBeGreaterThan(0);
    expect(withPolicy).toBeLessThan(plain * 0.8);
  }, 30_000);

  /**
   * Scavenges while a loop makes 8 million objects from one literal and keeps each for a while (the
   * pattern V8 pretenures: most of a site's objects survive their first scavenge), in a plain node
   * that first sets `flags` as applyV8Policy does. (Under tsx the loader's own work changes V8's
   * timing and it often decides otherwise, which is the randomness the policy removes.)
   * The decision is taken in the loop's optimized code, so the child compiles on its main thread
   * (`--no-concurrent-recompilation`): with the compile on a background thread, a busy machine (the
   * test suite's other workers) could leave the loop unoptimized to its end, and plain node then
   * pretenured nothing (111 scavenges in one CI run, against 20-27 otherwise).
   */
  async function scavenges(flags: readonly string[]): Promise<number> {
    const script = `
      for (const flag of ${JSON.stringify(flags)}) require('node:v8').setFlagsFromString(flag);
      function make(index) { return { index, pair: [index, index + 1], tag: 'x' }; }
      let kept = [];
      for (let round = 0; round < 40; round++) {
        for (let index = 0; index < 200000; index++) kept.push(make(index));
        if (kept.length > 1000000) kept = [];
      }`;
    const { stdout } = await run(
      process.execPath,
      ['--trace-gc', '--no-concurrent-recompilation', '-e', script],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout.split('\n').filter((line) => line.includes('Scavenge')).length;
  }

  it('keeps objects that survive their first scavenge in the young generation (no pretenuring)', async () => {
    const [plain, withPolicy] = await Promise.all([scavenges([]), scavenges(startupFlags([]))]);
    // Pretenured, the literal's objects are born old and the young generation is rarely full
    // (node 20: about 22 scavenges); without pretenuring they are all born young (over 100).
    expect(plain).toBeGreaterThan(0);
    expect(withPolicy).toBeGreaterThan(plain * 3);
  }, 30_000);
});

describe('scavenging on one core', () => {
  it('turns parallel scavenging off when the process may run on one core only', () => {
    expect(scavengeFlag(1)).toBe('--no-parallel-scavenge');
    expect(scavengeFlag(2)).toBe('--parallel-scavenge');
    expect(scavengeFlag(64)).toBe('--parallel-scavenge');
  });

  it("leaves the operator's own choice alone", () => {
    expect(scavengeChosen(['--parallel-scavenge'])).toBe(true);
    expect(scavengeChosen(['--no_parallel_scavenge'])).toBe(true);
    expect(scavengeChosen(['--heap-prof', '--parallel-scavenge-task-trace'])).toBe(false);
    expect(scavengeChosen([])).toBe(false);
  });

  /** The helper threads' share of each scavenge (ms) in a node that applies the policy on `cores` cores. */
  async function backgroundScavenging(cores: number): Promise<number[]> {
    const script = `
      const stop = (await import(${JSON.stringify(policy)})).applyV8Policy([], () => ${cores});
      (await import('node:fs')).writeSync(1, 'policy applied\\n');
      let kept = [];
      for (let index = 0; index < 3000000; index++) {
        kept.push({ index, pair: [index, index + 1] });
        if (kept.length > 20000) kept = [];
      }
      stop();`;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--trace-gc-nvp', '--input-type=module', '-e', script],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
    );
    // Only the scavenges after the policy (tsx's loading scavenges before it).
    const after = stdout.slice(stdout.indexOf('policy applied'));
    return [...after.matchAll(/gc=s .*?background\.scavenge\.parallel=([\d.]+)/g)].map((match) =>
      Number(match[1]),
    );
  }

  it('on one core every scavenge runs on the event loop alone; on two the helpers take part', async () => {
    const [one, two] = await Promise.all([backgroundScavenging(1), backgroundScavenging(2)]);
    expect(one.length).toBeGreaterThan(10);
    expect(one.every((ms) => ms === 0)).toBe(true);
    expect(two.some((ms) => ms > 0)).toBe(true);
  }, 30_000);
});
