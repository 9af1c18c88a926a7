import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowingFlag } from './heap-policy.js';

const run = promisify(execFile);
const policy = fileURLToPath(new URL('./heap-policy.ts', import.meta.url));

describe('heapGrowingFlag', () => {
  it('sets the gateway growth when the operator chose none', () => {
    expect(heapGrowingFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowingFlag(['--heap-prof', '--max-old-space-size=512'])).toBe(
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    );
  });

  it("leaves an operator's own choice on node's command line alone", () => {
    expect(heapGrowingFlag(['--heap-growing-percent=50'])).toBeUndefined();
    expect(heapGrowingFlag(['--heap_growing_percent=0'])).toBeUndefined();
  });

  it('is a flag node refuses in NODE_OPTIONS (so the command line is the only override)', async () => {
    const refused = await run(process.execPath, ['-e', '1'], {
      env: { ...process.env, NODE_OPTIONS: '--heap-growing-percent=10' },
    }).then(
      () => '',
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toContain('not allowed in NODE_OPTIONS');
  });
});

describe('applyHeapPolicy', () => {
  it('sets a flag this V8 knows (an unknown one would only print an error and change nothing)', async () => {
    const script = `(await import(${JSON.stringify(policy)})).applyHeapPolicy([]);`;
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
});
