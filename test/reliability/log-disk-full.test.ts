/**
 * A full log volume never takes the gateway down (issue 38): a real gateway process whose standard
 * output is a file on a tiny tmpfs filled to the last byte keeps answering every request; its log
 * write errors are counted (svc_log_write_errors_total) and said once on standard error; once space
 * is freed, writes succeed again and standard error says so once. Needs root for `mount` (CI runs
 * as root); elsewhere the same checks run with /dev/full as standard output (ENOSPC on every write),
 * without the recovery.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';

const EPISODE = /cannot write log lines to standard output \(ENOSPC\)/g;
const RECOVERED = /standard output takes log lines again/g;

/** A 64 KiB tmpfs at a new folder, or undefined when this user may not mount. */
function mountTinyVolume(): string | undefined {
  const path = mkdtempSync(join(tmpdir(), 'svc-full-log-'));
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
  const volume = mountTinyVolume();
  let stdoutFd: number;
  let metricsPort: number;
  let gateway: GatewayProcess;

  beforeAll(async () => {
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

  it.runIf(volume !== undefined)('writes again once space is freed, and says so once', async () => {
    rmSync(join(volume!, 'filler'));
    const before = await logWriteErrors(metricsPort);
    for (let index = 0; index < 5; index++) {
      const answer = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-api-key': gateway.key } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
    }
    expect(await logWriteErrors(metricsPort)).toBe(before);
    expect(gateway.output().match(RECOVERED)).toHaveLength(1);
    expect(gateway.output().match(EPISODE)).toHaveLength(1);
    const lines = readFileSync(join(volume!, 'gateway.log'), 'utf8').trim().split('\n');
    expect(lines.filter((line) => line.includes('"request completed"')).length).toBeGreaterThanOrEqual(5);
  });
});
