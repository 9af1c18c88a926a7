/**
 * A full log volume never takes the gateway down (issue 38): a real gateway process whose standard
 * output is a file on a tiny tmpfs filled to the last byte keeps answering every request; its log
 * write errors are counted (svc_log_write_errors_total) and said once on standard error; once space
 * is freed, writes succeed again and standard error says so once. Needs root for `mount` (CI runs
 * as root); elsewhere the same checks run with /dev/full as standard output (ENOSPC on every write),
 * without the recovery.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  freePort,
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { eventually } from './support.js';

const EPISODE = /cannot write log lines to standard output \(ENOSPC\)/g;
const RECOVERED = /standard output takes log lines again/g;

/** A 64 KiB tmpfs at a new folder, or undefined when this user may not mount. */
function mountTinyVolume(): string | undefined {
  const path = mkdtempSync(join(tmpdir(), 'svc-tmpfs-log-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', path], { stdio: 'ignore' });
    return path;
  } catch {
    rmdirSync(path);
    return undefined;
  }
}

/** Writes `path` until the volume has no byte left (ENOSPC). */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(4096, 120);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    expect((error as { code?: string }).code).toBe('ENOSPC');
  }
  try {
    for (;;) writeSync(fd, block.subarray(0, 1));
  } catch {
    // not even one byte left
  } finally {
    closeSync(fd);
  }
}

async function logWriteErrors(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = /^svc_log_write_errors_total (\d+)$/m.exec(text);
  return line ? Number(line[1]) : 0;
}

describe('reliability: a full log volume', () => {
  const folder = tempFolder('full-log');
  let volume: string | undefined;
  let stdoutFd: number;
  let metricsPort: number;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    // Mounted here, not when the file is collected: a run that skips these tests mounts nothing.
    volume = mountTinyVolume();
    if (volume) fill(join(volume, 'filler'));
    stdoutFd = openSync(volume ? join(volume, 'gateway.log') : '/dev/full', 'a');
    metricsPort = await freePort();
    gateway = await startGatewayProcess({
      name: 'full-log',
      folder: folder.path,
      stdout: stdoutFd,
      config: {
        logging: { level: 'info' },
        store: { kind: 'sqlite', sqlite: { path: join(folder.path, 'svc.db') } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        metrics: { listen: { host: '127.0.0.1', port: metricsPort } },
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    if (stdoutFd !== undefined) closeSync(stdoutFd);
    if (volume) {
      execFileSync('umount', [volume]);
      rmdirSync(volume);
    }
    folder.remove();
  });

  it('keeps answering every request while each log line fails, counts them, and says so once', async () => {
    const before = await logWriteErrors(metricsPort);
    expect(before).toBeGreaterThan(0); // the start-up lines already failed
    for (let index = 0; index < 50; index++) {
      const answer = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-api-key': gateway.key } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    }
    expect(gateway.alive()).toBe(true);
    expect(await logWriteErrors(metricsPort)).toBeGreaterThanOrEqual(before + 50);
    expect(gateway.output().match(EPISODE)).toHaveLength(1);
    expect(gateway.output().match(RECOVERED)).toBeNull();
  });

  it('writes again once space is freed, and says so once (needs the tmpfs)', async (context) => {
    if (!volume) return context.skip();
    rmSync(join(volume, 'filler'));
    const before = await logWriteErrors(metricsPort);
    for (let index = 0; index < 5; index++) {
      const answer = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-api-key': gateway.key } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    }
    expect(await logWriteErrors(metricsPort)).toBe(before);
    expect(gateway.output().match(RECOVERED)).toHaveLength(1);
    expect(gateway.output().match(EPISODE)).toHaveLength(1);
    const lines = readFileSync(join(volume, 'gateway.log'), 'utf8').trim().split('\n');
    expect(lines.filter((line) => line.includes('"request completed"')).length).toBeGreaterThanOrEqual(5);
  });
});

describe('reliability: standard output and standard error both on a full device', () => {
  const folder = tempFolder('full-both');
  afterAll(async () => {
    await stopAllGatewayProcesses();
    folder.remove();
  });

  it('the gateway starts (its banner lost), answers and stays up', async () => {
    const port = await freePort();
    const configFile = join(folder.path, 'gateway.yaml');
    writeFileSync(
      configFile,
      stringify({
        listen: { host: '127.0.0.1', port },
        logging: { level: 'info' },
        store: { kind: 'sqlite', sqlite: { path: join(folder.path, 'svc.db') } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
      }),
    );
    const full = openSync('/dev/full', 'a');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'serve', '--config', configFile],
      {
        env: { ...process.env, NODE_NO_WARNINGS: '1' },
        stdio: ['ignore', full, full],
      },
    );
    closeSync(full);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const ready = await eventually(
        async () => {
          if (child.exitCode !== null) return false;
          const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (response) => response.status,
            () => 0,
          );
          return status === 200 ? true : undefined;
        },
        30_000,
        'the gateway to answer /readyz',
      );
      expect(ready).toBe(true);
      for (let index = 0; index < 20; index++)
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 60_000);
});
