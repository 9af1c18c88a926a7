/**
 * A kill -9 during batch polling loses nothing: the gateway runs as a child process
 * (`node --import tsx src/main.ts serve`) on a temporary SQLite file, the simulator in another
 * process. The gateway is SIGKILLed after the job polled the upstream batch once; a restarted
 * process resumes the job from its lease, the batch completes, the upstream saw exactly one
 * submission, and the ledger holds exactly one settlement of the batch's attempt (not reaped by the
 * restart: it belongs to the job, not to the dead process).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { newKeySecret } from '../../src/lib/secrets.js';
import { connectSimulator } from '../../src/simulator/control.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { eventually } from '../support/deferred-gateway.js';

const children: ChildProcess[] = [];
const folder = mkdtempSync(join(tmpdir(), 'svc-kill-'));

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

/** Spawns a process and resolves with the first match of `pattern` in its output. */
function start(
  args: string[],
  pattern: RegExp,
  environment: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; match: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: process.cwd(),
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in 20 s: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const found = pattern.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve({ child, match: found[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ready: ${output}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

describe('kill -9 during batch polling', () => {
  it('resumes the job after a restart: the batch completes with one submission and one settlement', {
    timeout: 60_000,
  }, async () => {
    const sim = await start(['src/simulator/main.ts', '--port', '0'], /(http:\/\/127\.0\.0\.1:\d+)/);
    const control = connectSimulator(sim.match);
    const secret = newKeySecret();
    const database = join(folder, 'svc.db');
    const config = {
      listen: { host: '127.0.0.1', port: 0 },
      store: { kind: 'sqlite', sqlite: { path: database } },
      data_dir: folder,
      logging: { level: 'warn' },
      projects: [
        {
          id: 'prj_a',
          runs: {
            default_budget_micros_usd: 1_000_000,
            max_budget_micros_usd: 10_000_000,
            default_ttl_seconds: 3600,
            max_ttl_seconds: 86_400,
          },
          rate_limit: { requests_per_second: 100, burst: 100 },
        },
      ],
      keys: [{ id: 'key_kill', project: 'prj_a', scopes: ['inference'], secret_env: 'SVC_KILL_KEY' }],
      connections: [
        {
          name: 'sim-vendora',
          profile: 'vendora.messages.2023-06-01',
          base_url: sim.match,
          auth: { scheme: 'none' },
        },
      ],
      models: [
        {
          alias: 'batch-model',
          targets: [
            {
              connection: 'sim-vendora',
              model: 'sim-messages-1',
              price: { input_per_mtok_micros: 1_000_000, output_per_mtok_micros: 2_000_000 },
            },
          ],
        },
      ],
      endpoints: { default_connections: { batches: 'sim-vendora', files: 'sim-vendora' } },
      jobs: { poll_interval_ms: 20, batch_poll_interval_ms: 100, lease_ms: 1000 },
    };
    const configPath = join(folder, 'config.yaml');
    writeFileSync(configPath, JSON.stringify(config));
    const serve = () =>
      start(['src/main.ts', 'serve', '--config', configPath], /listening on (http:\/\/\S+)/, {
        SVC_KILL_KEY: secret,
      });

    const first = await serve();
    const client = new OpenAI({
      baseURL: `${first.match}/v1`,
      apiKey: secret,
      maxRetries: 0,
      defaultHeaders: { 'Svc-Route': 'sim-vendora' },
    });
    await control.setBehaviour({ batchPolls: 5 }, { wire: 'message-batches' });
    const lines = ['one', 'two'].map((id) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/messages',
        body: { model: 'batch-model', max_tokens: 50, messages: [{ role: 'user', content: `Hi ${id}` }] },
      }),
    );
    const file = await client.files.create(
      { file: await toFile(Buffer.from(lines.join('\n')), 'in.jsonl'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': 'kill-file' } },
    );
    const batch = await client.batches.create(
      { input_file_id: file.id, endpoint: '/v1/messages' as never, completion_window: '24h' },
      { headers: { 'Idempotency-Key': 'kill-batch' } },
    );
    const polls = () =>
      control
        .requests({ wire: 'message-batches' })
        .then((requests) => requests.filter((request) => request.method === 'GET'));
    await eventually(polls, (seen) => seen.length >= 1, 10_000);
    first.child.kill('SIGKILL');
    await exited(first.child);
    const pollsAtKill = (await polls()).length;
    expect(pollsAtKill).toBeLessThan(6);

    const second = await serve();
    const again = new OpenAI({ baseURL: `${second.match}/v1`, apiKey: secret, maxRetries: 0 });
    const done = await eventually(
      () => again.batches.retrieve(batch.id),
      (value) => value.status === 'completed',
      20_000,
    );
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = (await (await again.files.content(done.output_file_id!)).text()).trim().split('\n');
    expect(output.map((text) => JSON.parse(text).custom_id).sort()).toEqual(['one', 'two']);
    const submissions = (await control.requests({ wire: 'message-batches' })).filter(
      (request) => request.method === 'POST',
    );
    expect(submissions).toHaveLength(1);

    second.child.kill('SIGTERM');
    await exited(second.child);
    sim.child.kill('SIGTERM');
    const store = new SqliteStore({ path: database, synchronous: 'normal', exclusive: false });
    try {
      const audit = await store.listAudit({ limit: 100 });
      const batchEntries = audit.filter((entry) => entry.endpoint === '/v1/batches');
      expect(batchEntries).toHaveLength(1);
      expect(batchEntries[0]).toMatchObject({ state: 'settled', outcome: 'completed' });
      expect(batchEntries[0]!.costMicrosUsd).toBeGreaterThan(0);
      expect(batchEntries[0]!.costMicrosUsd).toBeLessThanOrEqual(batchEntries[0]!.reservationMicrosUsd);
    } finally {
      await store.close();
    }
  });
});
