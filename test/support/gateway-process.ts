/**
 * Real gateway processes for the reliability tests: `node --import tsx src/main.ts serve` on a
 * temporary YAML configuration, exactly as a user starts it.
 *
 * - The port: the gateway does not print the port it bound for `port: 0`, so a free port is found
 *   by binding a server to port 0 and closing it; a start that loses that race (EADDRINUSE) is
 *   retried on another port.
 * - Ready: GET /readyz answers 200 (the store answers too).
 * - The Gateway Key: `quickstart.key_file` is written by the test before the start, so several
 *   processes on one store share one key without racing to create it.
 * - Stop by PID: SIGTERM (then SIGKILL after a grace period), or SIGKILL for crash tests. Every
 *   process started here is registered; stopAllGatewayProcesses() (afterAll) and the test
 *   process's own exit kill whatever is still running, even when a test failed half-way.
 * Set SVC_RELIABILITY_DEBUG=1 to see every process's output on stderr as it happens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { newKeySecret } from '../../src/lib/secrets.js';
import { testProjects } from './projects.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const OUTPUT_LIMIT = 2_000_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface GatewayProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** The Gateway Key (all scopes) of `quickstart.project`. */
  readonly key: string;
  readonly configFile: string;
  /** Milliseconds from spawn to the first 200 from /readyz. */
  readonly startMs: number;
  readonly exited: Promise<Exit>;
  alive(): boolean;
  /** stdout and stderr so far (bounded). */
  output(): string;
  /** Sends `signal` to the PID and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<Exit>;
  /** SIGTERM, then SIGKILL if the process has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<Exit>;
}

export class GatewayStartError extends Error {
  constructor(
    message: string,
    readonly exit: Exit | undefined,
    readonly output: string,
  ) {
    super(`${message}\n--- gateway output ---\n${output.slice(-4000)}`);
  }
}

export interface GatewayProcessOptions {
  /** Raw configuration (YAML fields); `listen` and `quickstart` are filled in here. */
  config: Record<string, unknown>;
  /** Where the configuration file and the key file live (shared by processes on one store). */
  folder: string;
  /** Added to this process's environment (e.g. the variable the store URL is read from). */
  environment?: Record<string, string>;
  name?: string;
  readyTimeoutMs?: number;
  /** Project of the quick-start key (default prj_a). */
  project?: string;
  /** A file descriptor the process's standard output goes to (default: a pipe read into output()). */
  stdout?: number;
}

const running = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A port that was free a moment ago (bind to 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A temporary folder; remove() deletes it. */
export function tempFolder(label: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `svc-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The test Projects with rate limits generous enough for load and crash tests. */
export function reliabilityProjects(): Record<string, unknown>[] {
  return testProjects(10_000);
}

function keyFileFor(folder: string, project: string): { path: string; secret: string } {
  const path = join(folder, `key-${project}.txt`);
  if (!existsSync(path)) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(path, `${newKeySecret()}\n`, { mode: 0o600 });
  }
  return { path, secret: readFileSync(path, 'utf8').trim() };
}

/**
 * Ready = this child printed its banner for `url` (so a foreign process that took the port in the
 * meantime cannot pass for it) and /readyz answers 200.
 */
async function readyOrExit(
  child: ChildProcess,
  url: string,
  exited: Promise<Exit>,
  timeoutMs: number,
  output: () => string,
): Promise<{ ready: true } | { ready: false; exit: Exit | undefined }> {
  let exit: Exit | undefined;
  void exited.then((value) => {
    exit = value;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exit !== undefined || child.exitCode !== null || child.signalCode !== null)
      return { ready: false, exit: exit ?? (await exited) };
    if (!output().includes(`listening on ${url} `)) {
      await new Promise((done) => setTimeout(done, 50));
      continue;
    }
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status === 200) return { ready: true };
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  return { ready: false, exit };
}

function spawnOnce(options: GatewayProcessOptions, port: number, attempt: number) {
  const name = options.name ?? 'gateway';
  const project = options.project ?? 'prj_a';
  const key = keyFileFor(options.folder, project);
  const config = {
    logging: { level: 'warn' },
    ...options.config,
    listen: { ...(options.config.listen as object | undefined), host: '127.0.0.1', port },
    quickstart: { key_file: key.path, project },
  };
  const configFile = join(options.folder, `${name}-${process.pid}-${port}-${attempt}.yaml`);
  writeFileSync(configFile, stringify(config));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', configFile], {
    cwd: ROOT,
    env: { ...process.env, ...options.environment, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', options.stdout ?? 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const append = (chunk: Buffer) => {
    if (output.length < OUTPUT_LIMIT) output += chunk.toString('utf8');
    if (process.env.SVC_RELIABILITY_DEBUG)
      process.stderr.write(`[${name} ${child.pid}] ${chunk.toString('utf8')}`);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<Exit>((done) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      done({ code, signal });
    });
  });
  return { child, exited, configFile, key: key.secret, output: () => output, name };
}

/** Starts a gateway process and resolves once /readyz answers 200; rejects with its output otherwise. */
export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  let lastError: GatewayStartError | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const startedAt = performance.now();
    const started = spawnOnce(options, port, attempt);
    const { child, exited } = started;
    const outcome = await readyOrExit(child, url, exited, options.readyTimeoutMs ?? 30_000, started.output);
    if (!outcome.ready) {
      if (outcome.exit === undefined) {
        child.kill('SIGKILL');
        await exited;
      }
      lastError = new GatewayStartError(
        outcome.exit === undefined
          ? `${started.name} was not ready in time`
          : `${started.name} exited during start-up (${JSON.stringify(outcome.exit)})`,
        outcome.exit,
        started.output(),
      );
      if (/EADDRINUSE/.test(started.output())) continue;
      throw lastError;
    }
    const pid = child.pid;
    if (pid === undefined) throw new Error('spawned without a pid');
    const startMs = Math.round(performance.now() - startedAt);
    const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, signal);
      return exited;
    };
    return {
      name: started.name,
      pid,
      port,
      url,
      key: started.key,
      configFile: started.configFile,
      startMs,
      exited,
      alive: () => child.exitCode === null && child.signalCode === null,
      output: started.output,
      kill,
      async stop(graceMs = 5000) {
        if (child.exitCode !== null || child.signalCode !== null) return exited;
        process.kill(pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
        }, graceMs);
        const exit = await exited;
        clearTimeout(timer);
        return exit;
      },
    };
  }
  throw lastError ?? new Error('could not start a gateway process');
}

/**
 * Runs a gateway process that is expected to refuse to start: resolves with its exit and output
 * once it exits, or rejects (after killing it) if it becomes ready instead.
 */
export async function expectStartFailure(
  options: GatewayProcessOptions,
  timeoutMs = 30_000,
): Promise<{ exit: Exit; output: string }> {
  const port = await freePort();
  const started = spawnOnce(options, port, 0);
  const outcome = await readyOrExit(
    started.child,
    `http://127.0.0.1:${port}`,
    started.exited,
    timeoutMs,
    started.output,
  );
  if (outcome.ready || outcome.exit === undefined) {
    started.child.kill('SIGKILL');
    await started.exited;
    throw new GatewayStartError(
      outcome.ready
        ? 'the gateway started although it should have refused'
        : 'the gateway neither started nor exited',
      undefined,
      started.output(),
    );
  }
  return { exit: outcome.exit, output: started.output() };
}

/** Kills every gateway process this test process started that is still running (afterAll). */
export async function stopAllGatewayProcesses(): Promise<void> {
  const children = [...running];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
        }),
    ),
  );
}
