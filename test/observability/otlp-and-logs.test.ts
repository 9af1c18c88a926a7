/**
 * End to end through the composition root's pieces: the tracing SDK exporting over OTLP/HTTP to a
 * real receiver on loopback (decoding the JSON the exporter sends), the gateway started by
 * startGateway (store instrumented, metrics.listen served), and its log lines captured from pino:
 * one line per request (streams included), who/what/cost fields, the inbound x-request-id kept
 * when well formed, trace and span ids on every line written inside a traced request.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { type RunningGateway, startGateway } from '../../src/gateway-server.js';
import { createLogger } from '../../src/lib/logger.js';
import { traceFields } from '../../src/observability/log-fields.js';
import { type RunningTracing, startTracing } from '../../src/observability/tracing-sdk.js';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { messageBody } from '../messages/support.js';
import { baseConfig } from '../support/gateway.js';
import { simulatedUpstreamConfig } from '../support/simulated-gateway.js';
import { strictSamples, total } from './support.js';

const DIRECT = 'vendora.messages.2023-06-01';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

let receiver: Server;
const received: OtlpSpan[] = [];
const contentTypes: string[] = [];
let tracing: RunningTracing;
let simulator: Simulator;
let gateway: RunningGateway;
let folder: string;
// biome-ignore lint/suspicious/noExplicitAny: log lines are untyped JSON in tests
const lines: Array<Record<string, any>> = [];
let key: string;
let metricsUrl: string;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.push(String(request.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const resource of body.resourceSpans)
        for (const scope of resource.scopeSpans) received.push(...scope.spans);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
  tracing = await startTracing({ endpoint, serviceName: 'svc-e2e', sampleRatio: 1 });
  simulator = await startSimulator({ port: 0 });
  folder = mkdtempSync(join(tmpdir(), 'svc-otlp-'));
  key = `gw_${'K'.repeat(40)}`;
  const environment = { SVC_E2E_KEY: key };
  const config = parseConfig(
    {
      ...baseConfig(),
      ...simulatedUpstreamConfig(simulator.url),
      store: { kind: 'sqlite', sqlite: { path: join(folder, 'svc.db') } },
      data_dir: folder,
      keys: [
        {
          id: 'key_e2e',
          project: 'prj_a',
          scopes: ['inference', 'governance:read', 'work_unit:create'],
          secret_env: 'SVC_E2E_KEY',
        },
      ],
      metrics: { listen: { host: '127.0.0.1', port: 0 } },
      tracing: { endpoint },
    },
    'e2e',
    environment,
  );
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
    traceFields,
  );
  gateway = await startGateway({ config, environment, logger, tracing: true, drainMs: 1000 });
  const listening = lines.find((line) => line.msg === 'metrics listening');
  metricsUrl = String(listening?.url);
});

afterAll(async () => {
  await gateway?.close();
  await tracing?.shutdown();
  await simulator?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  if (folder) rmSync(folder, { recursive: true, force: true });
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { response, text: await response.text() };
}

describe('OTLP export, metrics.listen and log lines', () => {
  it('exports the spans of a call to a real OTLP/HTTP receiver', async () => {
    const { response } = await post(messageBody(`m:${DIRECT}`));
    expect(response.status).toBe(200);
    const attemptId = response.headers.get('svc-attempt-id')!;
    await tracing.flush();
    const attempt = received.find((span) => span.name === `chat m:${DIRECT}`)!;
    expect(attempt, received.map((span) => span.name).join(', ')).toBeDefined();
    expect(contentTypes[0]).toMatch(/^application\/json/);
    const attributes = Object.fromEntries(
      attempt.attributes.map((entry) => [entry.key, Object.values(entry.value)[0]]),
    );
    expect(attributes).toMatchObject({
      'svc.attempt.id': attemptId,
      'svc.settlement.outcome': 'completed',
      'gen_ai.request.model': `m:${DIRECT}`,
    });
    const server = received.find(
      (span) => span.traceId === attempt.traceId && span.name === 'POST /v1/messages',
    );
    expect(server).toBeDefined();
    expect(
      received.some((span) => span.traceId === attempt.traceId && span.name === 'svc.store settle'),
    ).toBe(true);
  });

  it('serves /metrics unauthenticated on metrics.listen, cost equal to the audit trail', async () => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    const samples = strictSamples(await response.text());
    const audit = await gateway.store.listAudit({ limit: 1000 });
    expect(total(samples, 'svc_cost_micros_usd_total')).toBe(
      audit.reduce((sum, entry) => sum + entry.costMicrosUsd, 0),
    );
    expect(total(samples, 'svc_store_transaction_duration_seconds_count', { operation: 'settle' })).toBe(
      audit.length,
    );
  });

  it('writes one line per request, streams included, with who, what, tokens, cost, outcome and trace ids', async () => {
    const { response, text } = await post(messageBody(`m:${DIRECT}`, { stream: true }), {
      'x-request-id': 'client-7f3a.trace:42',
    });
    expect(text).toContain('message_stop');
    expect(response.headers.get('request-id')).toBe('client-7f3a.trace:42');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const mine = lines.filter((line) => line.request_id === 'client-7f3a.trace:42');
    const completed = mine.filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(1);
    const [entry] = await gateway.store
      .listAudit({ limit: 1000 })
      .then((all) => all.filter((row) => row.attemptId === completed[0]!.attempt));
    expect(entry).toBeDefined();
    expect(completed[0]).toMatchObject({
      project: 'prj_a',
      key: 'key_e2e',
      run: null,
      alias: `m:${DIRECT}`,
      connection: DIRECT,
      attempts: 1,
      outcome: 'completed',
      status: 200,
      cost_micros_usd: entry!.costMicrosUsd,
      input_tokens: entry!.usage!.inputTokens,
      output_tokens: entry!.usage!.outputTokens,
    });
    expect(completed[0]!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(completed[0]!.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(typeof completed[0]!.ms).toBe('number');
    // The secret never appears in any line.
    expect(lines.some((line) => JSON.stringify(line).includes(key))).toBe(false);
  });

  it('replaces an ill-formed x-request-id; governance writes name Project, key and resource', async () => {
    const response = await fetch(`${gateway.url}/svc/v1/work-units`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': 'wu-log-1',
        'x-request-id': 'bad id with spaces',
      },
      body: '{}',
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    const requestId = response.headers.get('request-id')!;
    expect(requestId).toMatch(/^req_/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const line = lines.find((entry) => entry.request_id === requestId && entry.msg === 'request completed');
    expect(line).toMatchObject({
      project: 'prj_a',
      key: 'key_e2e',
      resource: '/svc/v1/work-units',
      resource_id: id,
      status: 201,
    });
  });

  it('puts the active trace and span ids on log lines written inside a span (pino mixin)', async () => {
    const { trace, context } = await import('@opentelemetry/api');
    const span = trace.getTracer('test').startSpan('inside');
    context.with(trace.setSpan(context.active(), span), () => gateway.app.log.info('inside a span'));
    span.end();
    const line = lines.find((entry) => entry.msg === 'inside a span');
    expect(line).toMatchObject({ trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
  });
});
