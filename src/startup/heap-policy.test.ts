import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapGrowingFlag, YOUNG_GENERATION_FLAG } from './heap-policy.js';

const run = promisify(execFile);
const policy = fileURLToPath(new URL('./heap-policy.ts', import.meta.url));

describe('heapGrowingFlag', () => {
  it('sets the gateway growth when the operator chose none', () => {
    expect(heapGrowingFlag([], undefined)).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowingFlag(['--heap-prof', '--max-old-space-size=512'], '--enable-source-maps')).toBe(
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    );
  });

  it("leaves an operator's own choice alone, on the command line or in NODE_OPTIONS", () => {
    expect(heapGrowingFlag(['--heap-growing-percent=50'], undefined)).toBeUndefined();
    expect(heapGrowingFlag(['--heap_growing_percent=0'], undefined)).toBeUndefined();
    expect(heapGrowingFlag([], '--max-old-space-size=512 --heap-growing-percent=10')).toBeUndefined();
  });
});

describe('applyHeapPolicy', () => {
  it('sets a flag this V8 knows (an unknown one would only print an error and change nothing)', async () => {
    const script = `(await import(${JSON.stringify(policy)})).applyHeapPolicy([], undefined);`;
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

describe('YOUNG_GENERATION_FLAG', () => {
  const text = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

  it("is on node's command line wherever the project starts the gateway", () => {
    const scripts = (JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toMatch(new RegExp(`^node ${YOUNG_GENERATION_FLAG} dist/src/main\\.js serve`));
    expect(scripts['svc-gateway']).toBe(`node ${YOUNG_GENERATION_FLAG} dist/src/main.js`);
    expect(text('Dockerfile')).toContain(
      `ENTRYPOINT ["node", "${YOUNG_GENERATION_FLAG}", "dist/src/main.js"]`,
    );
  });

  it('is a flag this node accepts', async () => {
    const { stdout } = await run(process.execPath, [YOUNG_GENERATION_FLAG, '-p', '1 + 1']);
    expect(stdout.trim()).toBe('2');
  });
});
