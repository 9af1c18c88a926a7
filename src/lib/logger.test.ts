import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'svc-logger-'));

/** A child process with the logger loaded, running `code`, its stdout sent to `stdout`. */
function child(code: string, stdout: number | 'pipe'): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { createLogger } from ${JSON.stringify(LOGGER)};\n${code}`,
    ],
    { stdio: ['ignore', stdout, 'pipe'] },
  );
}

function exited(subprocess: ChildProcess): Promise<void> {
  return new Promise((resolve) => subprocess.once('close', () => resolve()));
}

describe('logger on standard output', () => {
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('has written every line to a file by the time the process is killed outright', async () => {
    const path = join(folder, 'killed.log');
    const fd = openSync(path, 'w');
    const killed = child(
      `const logger = createLogger('info');
       for (let index = 0; index < 2000; index++) logger.info({ index }, 'line');
       process.kill(process.pid, 'SIGKILL');`,
      fd,
    );
    closeSync(fd);
    await exited(killed);
    expect(killed.signalCode).toBe('SIGKILL');
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2000);
    expect(JSON.parse(lines[1999]!)).toMatchObject({ index: 1999, msg: 'line', service: 'svc-gateway' });
  });

  it('keeps running when stdout is a pipe nobody reads', async () => {
    // 4 MB of lines: far past a pipe's buffer (64 KiB on Linux), which a synchronous writer would wait on.
    const writer = child(
      `const logger = createLogger('info');
       for (let index = 0; index < 20000; index++) logger.info({ index, filler: 'x'.repeat(160) }, 'line');
       process.stderr.write('logged\\n');
       setInterval(() => {}, 1000);`,
      'pipe',
    );
    writer.stdout!.pause();
    const logged = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000);
      writer.stderr!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('logged')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
    });
    writer.kill('SIGKILL');
    await exited(writer);
    expect(logged).toBe(true);
  }, 30_000);

  it('redacts credentials in the lines it writes', async () => {
    const path = join(folder, 'redacted.log');
    const fd = openSync(path, 'w');
    const writer = child(
      `createLogger('info').info({ headers: { 'x-api-key': 'gw_secret' }, password: 'hunter2' }, 'line');`,
      fd,
    );
    closeSync(fd);
    await exited(writer);
    const output = readFileSync(path, 'utf8');
    expect(output).not.toContain('gw_secret');
    expect(output).not.toContain('hunter2');
    expect(JSON.parse(output)).toMatchObject({
      headers: { 'x-api-key': '[redacted]' },
      password: '[redacted]',
    });
  });
});
