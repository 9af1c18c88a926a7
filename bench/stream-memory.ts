/**
 * Does a long streamed answer buffer? 20 concurrent streams of 1,000 chat-completions chunks each
 * (10 ms apart) through the gateway's chat-completions translator, while the gateway's resident
 * memory is sampled every 100 ms. Prints the figures; asserts nothing.
 *
 *   npm run build && node --import tsx bench/stream-memory.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startSimulator } from '../src/simulator/server.js';

const CHUNKS = 1000;
const STREAMS = 20;

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) / 1024;
}

async function main() {
  const simulator = await startSimulator({ port: 0 });
  simulator.setBehaviour({ deltas: CHUNKS, eventDelayMs: 10, text: 'token '.repeat(CHUNKS) });
  const folder = mkdtempSync(join(tmpdir(), 'svc-stream-memory-'));
  const port = 9311;
  writeFileSync(
    join(folder, 'svc.yaml'),
    `listen: { host: 127.0.0.1, port: ${port} }
store: { kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }
logging: { level: warn }
quickstart: { key_file: ${join(folder, 'key.txt')}, project: prj_bench }
projects:
  - id: prj_bench
    runs: { default_budget_micros_usd: 1000000000, max_budget_micros_usd: 1000000000, default_ttl_seconds: 3600, max_ttl_seconds: 3600 }
    rate_limit: { requests_per_second: 1000, burst: 1000 }
connections:
  - { name: sim-chat, profile: compat.chat-embeddings.v1, base_url: "${simulator.url}/v1", auth: { scheme: none } }
models:
  - alias: bench-chat
    targets: [{ connection: sim-chat, model: sim-chat-1, price: { input_per_mtok_micros: 1, output_per_mtok_micros: 1 } }]
`,
  );
  const gateway: ChildProcess = spawn(
    process.execPath,
    ['dist/src/main.js', 'serve', '--config', join(folder, 'svc.yaml')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve) =>
    gateway.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve()),
  );
  const key = readFileSync(join(folder, 'key.txt'), 'utf8').trim();
  const pid = gateway.pid!;
  const samples: number[] = [];
  const before = rssMiB(pid);
  const sampler = setInterval(() => samples.push(rssMiB(pid)), 100);
  const started = Date.now();
  const bytes = await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      const response = await request(`http://127.0.0.1:${port}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'bench-chat',
          max_tokens: 4096,
          stream: true,
          messages: [{ role: 'user', content: 'go' }],
        }),
      });
      let total = 0;
      for await (const chunk of response.body) total += chunk.length;
      return total;
    }),
  );
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  const peak = Math.max(...samples);
  process.stdout.write(
    `\n${STREAMS} concurrent streams x ${CHUNKS} chunks (10 ms apart), ${seconds.toFixed(1)} s, ${(bytes.reduce((a, b) => a + b, 0) / 1024 / 1024).toFixed(1)} MiB sent to clients\n` +
      `gateway RSS before ${before.toFixed(1)} MiB, peak while streaming ${peak.toFixed(1)} MiB, after ${rssMiB(pid).toFixed(1)} MiB\n` +
      `RSS over the streams, per second: ${samples
        .filter((_, index) => index % 10 === 0)
        .map((value) => value.toFixed(0))
        .join(' ')}\n`,
  );
  gateway.kill('SIGTERM');
  await new Promise((resolve) => gateway.once('exit', resolve));
  await simulator.close();
  rmSync(folder, { recursive: true, force: true });
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
