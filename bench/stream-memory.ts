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
import { freePort, gatewayConfig } from './harness.js';

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
  const port = await freePort();
  // The benchmark's gateway (bench/harness.ts): `bench-chat` is the simulator's chat-completions wire.
  writeFileSync(
    join(folder, 'svc.yaml'),
    gatewayConfig({
      folder,
      name: 'stream-memory',
      port,
      simulatorPort: Number(new URL(simulator.url).port),
      store: `{ kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }`,
      logLevel: 'warn',
    }),
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
