/**
 * Configuration for deployments: environment overrides (SVC_LISTEN__PORT...), `--version`,
 * `serve --port`, the `${simulator}` base_url, and SIGHUP as a graceful in-process restart that
 * reloads models without dropping an in-flight call or ending the process (a real process).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import {
  freePort,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';

const run = promisify(execFile);
const folder = tempFolder('deploy-config');
afterAll(async () => {
  await stopAllGatewayProcesses();
  folder.remove();
});

function configFile(name: string, content: Record<string, unknown>): string {
  const path = join(folder.path, name);
  writeFileSync(path, stringify(content));
  return path;
}

describe('environment overrides', () => {
  const base = {
    projects: reliabilityProjects(),
    connections: [
      {
        name: 'up',
        profile: 'vendora.messages.2023-06-01',
        base_url: 'http://127.0.0.1:1',
        auth: { scheme: 'none' },
      },
    ],
  };

  it('overrides scalars, nested objects, array elements and whole arrays; ignores non-fields', () => {
    const file = configFile('overrides.yaml', base);
    const config = loadConfig(file, {
      SVC_LISTEN__PORT: '9123',
      SVC_LISTEN__HOST: '0.0.0.0',
      SVC_STORE__KIND: 'postgres',
      SVC_OBJECTS__KIND: 's3',
      SVC_OBJECTS__S3: '{bucket: svc-objects, force_path_style: true}',
      SVC_OBJECTS__S3__ENDPOINT: 'http://minio:9000',
      SVC_CONNECTIONS__0__BASE_URL: 'http://upstream:8080',
      SVC_LOGGING__LEVEL: 'debug',
      SVC_CONFIG: 'not-a-field.yaml',
      SVC_DATABASE_URL: 'postgres://secret@db/svc',
    });
    expect(config.listen).toMatchObject({ host: '0.0.0.0', port: 9123 });
    expect(config.store.kind).toBe('postgres');
    expect(config.objects.kind).toBe('s3');
    expect(config.objects.s3).toMatchObject({
      bucket: 'svc-objects',
      endpoint: 'http://minio:9000',
      force_path_style: true,
      region: 'us-east-1',
    });
    expect(config.connections[0]!.base_url).toBe('http://upstream:8080');
    expect(config.logging.level).toBe('debug');
    const replaced = loadConfig(file, { SVC_PROJECTS: JSON.stringify([reliabilityProjects()[0]]) });
    expect(replaced.projects.map((project) => project.id)).toEqual(['prj_a']);
  });

  it('refuses a bad value naming the variable it came from', () => {
    const file = configFile('bad.yaml', base);
    const failure = (() => {
      try {
        loadConfig(file, { SVC_LISTEN__PORT: 'eighty' });
      } catch (error) {
        return error as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(failure).toBeInstanceOf(ConfigError);
    expect(failure.message).toMatch(/\/listen\/port: .*\(set by SVC_LISTEN__PORT\)/);
    expect(() => loadConfig(file, { SVC_CONNECTIONS__X__NAME: 'a' })).toThrow(/must be a number/);
  });

  it('accepts ${simulator} only with the simulator enabled', () => {
    const connections = [{ ...base.connections[0], base_url: '${simulator}/v1' }];
    expect(() => loadConfig(configFile('sim-off.yaml', { ...base, connections }), {})).toThrow(
      /simulator.enabled/,
    );
    const on = loadConfig(
      configFile('sim-on.yaml', { ...base, connections, simulator: { enabled: true, port: 0 } }),
      {},
    );
    expect(on.connections[0]!.base_url).toBe('${simulator}/v1');
  });
});

describe('svc-gateway as a real process', () => {
  let simulator: Simulator;
  beforeAll(async () => {
    simulator = await startSimulator({ port: 0 });
  });
  afterAll(async () => {
    await simulator?.close();
  });

  /** A gateway on the simulator, with its own SQLite file; `models`: [alias, upstream model] pairs. */
  const simulatedConfig = (database: string, models: Array<[string, string]>) => ({
    store: { kind: 'sqlite', sqlite: { path: join(folder.path, database) } },
    data_dir: folder.path,
    projects: reliabilityProjects(),
    connections: [
      {
        name: 'sim',
        profile: 'vendora.messages.2023-06-01',
        base_url: simulator.url,
        auth: { scheme: 'none' },
      },
    ],
    models: models.map(([alias, model]) => ({
      alias,
      targets: [{ connection: 'sim', model, price: { input_per_mtok_micros: 1, output_per_mtok_micros: 1 } }],
    })),
  });

  it('prints the package version', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', '--version']);
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      version: string;
      bin: Record<string, string>;
    };
    expect(stdout.trim()).toBe(manifest.version);
    expect(manifest.bin['svc-gateway']).toBe('dist/src/main.js');
  });

  it('SIGHUP reloads models without dropping an in-flight call and never ends the process', async () => {
    const config = (aliases: string[]) =>
      simulatedConfig(
        'sighup.db',
        aliases.map((alias): [string, string] => [alias, 'sim-1']),
      );
    const gateway = await startGatewayProcess({
      config: config(['before']),
      folder: folder.path,
      name: 'sighup',
    });
    const call = (alias: string) =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': gateway.key,
          'vendora-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: alias, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await call('before')).status).toBe(200);
    expect((await call('after')).status).toBe(404);

    simulator.setBehaviour({ latencyMs: 1500 });
    const inFlight = call('before');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The process's own file: rewritten with the new alias list (listen/quickstart kept).
    const written = readFileSync(gateway.configFile, 'utf8').replace(/alias: before/, 'alias: after');
    writeFileSync(gateway.configFile, written);
    process.kill(gateway.pid, 'SIGHUP');
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { type: string }).type).toBe('message');
    simulator.reset();

    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = await call('after').then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    expect((await call('before')).status).toBe(404);
    expect(gateway.alive()).toBe(true);

    // A broken file on SIGHUP is refused and the running gateway keeps serving.
    writeFileSync(gateway.configFile, 'listen: [not, an, object]\n');
    process.kill(gateway.pid, 'SIGHUP');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await call('after')).status).toBe(200);
    expect(gateway.alive()).toBe(true);
    expect(gateway.output()).toMatch(/configuration is invalid; keeping the running one/);
    expect((await gateway.stop()).code).toBe(0);
  }, 60_000);

  it('a reload that cannot start (its port is taken) leaves the last configuration that started: A -> B -> bad C serves B', async () => {
    const config = (alias: string) => simulatedConfig('revert.db', [[alias, 'sim-1']]);
    const gateway = await startGatewayProcess({
      config: config('alpha'),
      folder: folder.path,
      name: 'revert',
    });
    const call = (port: number, alias: string) =>
      fetch(`http://127.0.0.1:${port}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': gateway.key,
          'vendora-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: alias, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      }).then(
        (response) => response.status,
        () => 0,
      );
    const reloadTo = (alias: string, port: number) => {
      const file = parse(readFileSync(gateway.configFile, 'utf8')) as {
        models: Array<{ alias: string }>;
        listen: { port: number };
      };
      file.models[0]!.alias = alias;
      file.listen.port = port;
      writeFileSync(gateway.configFile, stringify(file));
      process.kill(gateway.pid, 'SIGHUP');
    };
    const until = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !(await check()))
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await check()).toBe(true);
    };
    expect(await call(gateway.port, 'alpha')).toBe(200);

    const portB = await freePort();
    reloadTo('beta', portB);
    await until(async () => (await call(portB, 'beta')) === 200);

    // C is valid but cannot start: its port is held by another listener.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const portC = (blocker.address() as AddressInfo).port;
    try {
      reloadTo('gamma', portC);
      await until(async () => /did not start; restarting the (running|previous) one/.test(gateway.output()));
      await until(async () => (await call(portB, 'beta')) === 200);
      expect(await call(portB, 'gamma')).toBe(404);
      expect(await call(portB, 'alpha')).toBe(404);
      expect(await call(gateway.port, 'alpha')).toBe(0);
      expect(gateway.alive()).toBe(true);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    expect((await gateway.stop()).code).toBe(0);
  }, 60_000);

  it('a valid reload keeps the listening socket: no connection refused, every in-flight call completes', async () => {
    const config = (aliases: string[]) =>
      simulatedConfig('hammer.db', [
        ['slow', 'sim-slow'],
        ...aliases.map((alias): [string, string] => [alias, 'sim-1']),
      ]);
    const gateway = await startGatewayProcess({
      config: config(['same']),
      folder: folder.path,
      name: 'hammer',
    });
    /** One call, on a connection of its own unless `agent` keeps them alive: its status, or the connection error's code. */
    const call = (alias: string, agent: Agent | false = false) =>
      new Promise<number | string>((resolve) => {
        const body = JSON.stringify({
          model: alias,
          max_tokens: 16,
          messages: [{ role: 'user', content: 'hi' }],
        });
        const request = httpRequest(
          `${gateway.url}/v1/messages`,
          {
            method: 'POST',
            agent,
            headers: {
              'x-api-key': gateway.key,
              'vendora-version': '2023-06-01',
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
            response.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        request.end(body);
      });
    expect(await call('same')).toBe(200);

    simulator.setBehaviour({ latencyMs: 1500 }, { model: 'sim-slow' });
    const outcomes: Array<number | string> = [];
    let hammering = true;
    let slowest = 0;
    const hammer = async () => {
      while (hammering) {
        const startedAt = performance.now();
        outcomes.push(await call('same'));
        slowest = Math.max(slowest, performance.now() - startedAt);
      }
    };
    // Measured, not asserted: one client keeping its connections alive across the reload.
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    const keptAlive: Array<number | string> = [];
    const keepAliveHammer = async () => {
      while (hammering) keptAlive.push(await call('same', keepAlive));
    };
    const hammers = [...Array.from({ length: 4 }, hammer), keepAliveHammer()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const inFlight = Array.from({ length: 5 }, () => call('slow'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    writeFileSync(
      gateway.configFile,
      stringify({
        ...parse(readFileSync(gateway.configFile, 'utf8')),
        models: config(['same', 'after']).models,
      }),
    );
    const reloadedAt = performance.now();
    process.kill(gateway.pid, 'SIGHUP');
    let switchedMs = 0;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if ((await call('after')) === 200) {
        switchedMs = performance.now() - reloadedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    hammering = false;
    await Promise.all(hammers);
    simulator.reset();
    const slowCalls = await Promise.all(inFlight);
    const tally = (list: Array<number | string>) => {
      const counts: Record<string, number> = {};
      for (const outcome of list) counts[outcome] = (counts[outcome] ?? 0) + 1;
      return counts;
    };
    const counts = tally(outcomes);
    console.info(
      `[reload] ${outcomes.length} calls on fresh connections during a valid reload: ${JSON.stringify(counts)}; ` +
        `slowest ${Math.round(slowest)} ms; new configuration served ${Math.round(switchedMs)} ms after SIGHUP; ` +
        `in-flight calls: ${JSON.stringify(slowCalls)}; one keep-alive client: ${JSON.stringify(tally(keptAlive))}`,
    );
    keepAlive.destroy();
    expect(switchedMs).toBeGreaterThan(0);
    expect(slowCalls).toEqual([200, 200, 200, 200, 200]);
    expect(counts).toEqual({ 200: outcomes.length });
    expect(outcomes.length).toBeGreaterThan(20);
    expect(gateway.alive()).toBe(true);
    expect((await gateway.stop()).code).toBe(0);
  }, 90_000);

  it('serve --port overrides listen.port', async () => {
    const file = configFile('port.yaml', {
      projects: reliabilityProjects(),
      store: { kind: 'sqlite', sqlite: { path: join(folder.path, 'port.db') } },
    });
    const { freePort } = await import('../support/gateway-process.js');
    const port = await freePort();
    const child = (await import('node:child_process')).spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file, '--port', String(port)],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1' } },
    );
    try {
      const deadline = Date.now() + 20_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (response) => response.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }, 30_000);
});
