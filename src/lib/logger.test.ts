import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger, plainFieldsLogger } from './logger.js';

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
      `import { createLogger, logWriteErrors } from ${JSON.stringify(LOGGER)};\n${code}`,
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

  it('a full device (ENOSPC on every write) drops and counts the lines, says so once, and never exits', async () => {
    const fd = openSync('/dev/full', 'w');
    const writer = child(
      `const logger = createLogger('info');
       for (let index = 0; index < 500; index++) logger.info({ index }, 'line');
       process.stderr.write('errors ' + logWriteErrors() + '\\n');`,
      fd,
    );
    closeSync(fd);
    let stderr = '';
    writer.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await exited(writer);
    expect(writer.exitCode).toBe(0);
    expect(stderr).toContain('errors 500\n');
    expect(stderr.match(/cannot write log lines to standard output \(ENOSPC\)/g)).toHaveLength(1);
  });

  it('a pipe whose reader is gone (EPIPE) is counted, said once, and the process keeps running', async () => {
    const writer = child(
      `const logger = createLogger('info');
       let index = 0;
       const timer = setInterval(() => {
         logger.info({ index: index++ }, 'line');
         if (index === 100) { process.stderr.write('errors ' + logWriteErrors() + '\\n'); clearInterval(timer); }
       }, 5);`,
      'pipe',
    );
    writer.stdout!.destroy();
    let stderr = '';
    writer.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await exited(writer);
    expect(writer.exitCode).toBe(0);
    // Every line written after the reader left is counted (the first few may have reached the pipe).
    const errors = Number(/errors (\d+)/.exec(stderr)?.[1]);
    expect(errors).toBeGreaterThan(90);
    expect(errors).toBeLessThanOrEqual(100);
    expect(stderr.match(/cannot write log lines to standard output \(EPIPE\)/g)).toHaveLength(1);
  });

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

/** A logger writing to an in-memory destination; `lines()` parses what it wrote. */
function capturing(level: string, mixin?: () => Record<string, unknown>) {
  const written: string[] = [];
  const logger = createLogger(level, { write: (line: string) => written.push(line) }, mixin);
  return { logger, written, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('plainFieldsLogger (the request line)', () => {
  const shapes: Record<string, unknown>[] = [
    { request_id: 'req_1', method: 'POST', path: '/v1/messages', status: 200, ms: 1.25 },
    {
      path: '/a"b\\c',
      note: 'tab\there, newline\nhere, nul\u0000, bell\u0007',
      emoji: 'caf\u00e9 \u{1f600}',
    },
    { absent: undefined, none: null, yes: true, no: false, nan: Number.NaN, inf: Number.POSITIVE_INFINITY },
    { long: 'x'.repeat(300), quoteLong: `${'"'.repeat(120)}\\` },
    {},
  ];

  it('writes the same line pino writes, field for field and in order, for every kind of value', () => {
    for (const fields of shapes) {
      const { logger, written } = capturing('info');
      logger.child({}, { redact: [] }).info(fields, 'request completed');
      plainFieldsLogger(logger).info(fields, 'request completed');
      const [byPino, byPlain] = written.map((line) => line.replace(/"time":"[^"]*"/, '"time":""'));
      expect(byPlain).toBe(byPino);
      expect(byPlain!.endsWith('}\n')).toBe(true);
    }
  });

  it("writes each line's own message, however messages alternate", () => {
    const { logger, lines } = capturing('info');
    const plain = plainFieldsLogger(logger);
    for (const message of ['request completed', 'other', undefined, 'request completed'])
      plain.info({ status: 200 }, message);
    expect(lines().map((line) => line.msg)).toEqual([
      'request completed',
      'other',
      undefined,
      'request completed',
    ]);
  });

  it('keeps the lone surrogate pino would write raw, escaped, and the line parses', () => {
    const { logger, lines } = capturing('info');
    plainFieldsLogger(logger).info({ path: 'a\ud800b' }, 'request completed');
    expect(lines()[0]).toMatchObject({ path: 'a\ud800b', msg: 'request completed', level: 30 });
  });

  it('follows the logger: its level, its bindings and its mixin', () => {
    const quiet = capturing('warn');
    plainFieldsLogger(quiet.logger).info({ status: 200 }, 'request completed');
    expect(quiet.written).toHaveLength(0);

    const traced = capturing('info', () => ({ trace_id: 'from-mixin', span_id: 's' }));
    plainFieldsLogger(traced.logger.child({ component: 'http' })).info(
      { status: 200, trace_id: 'from-line' },
      'request completed',
    );
    expect(traced.lines()).toEqual([
      expect.objectContaining({
        service: 'svc-gateway',
        component: 'http',
        status: 200,
        trace_id: 'from-line',
        span_id: 's',
        msg: 'request completed',
      }),
    ]);
  });

  it('leaves every other line of the logger to pino, redaction included', () => {
    const { logger, lines } = capturing('info');
    plainFieldsLogger(logger);
    logger.info({ password: 'hunter2' }, 'other');
    expect(lines()[0]).toMatchObject({ password: '[redacted]' });
  });
});
