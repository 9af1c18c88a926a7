/**
 * The reference for the benchmark: a bare node:http + undici pass-through (no validation, no auth,
 * no ledger): what "just forwarding" costs on this machine.
 * Usage: node --import tsx bench/bare-proxy.ts <port> <upstream origin>
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 8181);
const upstream = process.argv[3] ?? 'http://127.0.0.1:9100';
const pool = new Pool(upstream, { connections: 128, pipelining: 1 });

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', async () => {
    try {
      const upstreamResponse = await pool.request({
        path: request.url ?? '/',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'vendora-version': '2023-06-01' },
        body: Buffer.concat(chunks),
      });
      response.writeHead(upstreamResponse.statusCode, {
        'content-type': String(upstreamResponse.headers['content-type']),
      });
      for await (const chunk of upstreamResponse.body) {
        if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
      }
      response.end();
    } catch {
      response.writeHead(502).end();
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`bare proxy on ${port}\n`));
process.on('SIGTERM', () => {
  server.close();
  void pool.close();
  process.exit(0);
});
