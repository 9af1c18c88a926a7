/**
 * Shared helpers of the Messages facade suite: calls over real HTTP, the vendora error-dialect
 * check, SSE parsing, a small governance client (Work Units and Runs) and audit look-ups.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { expect } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { startSimulator } from '../../src/simulator/server.js';
import type { AuditEntry, Store } from '../../src/store/port.js';
import {
  type CallResult,
  call,
  type StoreKind,
  startTestGateway,
  type TestGatewayOptions,
} from '../support/gateway.js';
import {
  messagesHeaders,
  PRICE,
  type SimulatedGateway,
  simulatedUpstreamConfig,
} from '../support/simulated-gateway.js';

export { PRICE };

// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON in tests
export type Json = Record<string, any>;

/** A minimal valid portable request for `model`. */
export function messageBody(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }], ...extra };
}

export function postMessages(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return call(url, 'POST', '/v1/messages', { headers: messagesHeaders(key, headers), body });
}

export function postCountTokens(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return call(url, 'POST', '/v1/messages/count_tokens', { headers: messagesHeaders(key, headers), body });
}

/**
 * Asserts an error in the vendora dialect: exact envelope, status, svc code, error type, the
 * request-id header equal to the body's, and (when given) the message naming `field`.
 */
export function expectVendoraError(
  result: CallResult,
  status: number,
  code: string,
  options: { type?: string; field?: string } = {},
): void {
  const context = JSON.stringify(result.body);
  expect({ status: result.status, code: result.body?.error?.code }, context).toEqual({ status, code });
  expect(Object.keys(result.body).sort(), context).toEqual(['error', 'request_id', 'type']);
  expect(result.body.type).toBe('error');
  expect(Object.keys(result.body.error).sort(), context).toEqual(['code', 'message', 'type']);
  if (options.type !== undefined) expect(result.body.error.type, context).toBe(options.type);
  expect(typeof result.body.error.message).toBe('string');
  expect(result.body.request_id).toMatch(/^req_/);
  expect(result.headers.get('request-id')).toBe(result.body.request_id);
  if (options.field !== undefined) expect(result.body.error.message, context).toContain(options.field);
}

export interface SseEvent {
  event: string;
  data: Json;
}

/** Parses an SSE body of `event:`/`data:` frames (the gateway writes one data line per frame). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const frame of text.split('\n\n')) {
    if (frame.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    events.push({ event, data: data.length > 0 ? JSON.parse(data.join('\n')) : {} });
  }
  return events;
}

export function newIdempotencyKey(): string {
  return `k-${randomUUID()}`;
}

/** Governance calls for one Gateway Key. */
export class Governance {
  constructor(
    readonly url: string,
    readonly key: string,
  ) {}

  post(path: string, body: unknown): Promise<CallResult> {
    return call(this.url, 'POST', path, { key: this.key, body, idempotencyKey: newIdempotencyKey() });
  }

  async run(budget: number, ttlSeconds = 3600): Promise<Json> {
    const unit = await this.post('/svc/v1/work-units', {});
    expect(unit.status, JSON.stringify(unit.body)).toBe(201);
    const run = await this.post('/svc/v1/runs', {
      work_unit_id: unit.body.id,
      budget_micros_usd: budget,
      ttl_seconds: ttlSeconds,
    });
    expect(run.status, JSON.stringify(run.body)).toBe(201);
    return run.body;
  }

  async getRun(id: string): Promise<Json> {
    const result = await call(this.url, 'GET', `/svc/v1/runs/${id}`, { key: this.key });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    return result.body;
  }

  async closeRun(id: string): Promise<void> {
    const result = await this.post(`/svc/v1/runs/${id}/close`, {});
    expect(result.status, JSON.stringify(result.body)).toBe(201);
  }
}

export async function auditOfRun(store: Store, runId: string): Promise<AuditEntry[]> {
  return store.listAudit({ runId, limit: 10_000 });
}

export async function auditOfAttempt(store: Store, attemptId: string): Promise<AuditEntry | undefined> {
  const entries = await store.listAudit({ limit: 10_000 });
  return entries.find((entry) => entry.attemptId === attemptId);
}

/** Waits until `check` returns a value other than undefined (polling), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The body the client sent with only `model` replaced: what native mode must forward. */
export function withModel(body: Record<string, unknown>, model: string): Record<string, unknown> {
  return { ...body, model };
}

/** Micro-USD cost of a usage at the suite's PRICE (ceil of the sum / 1e6, plus the fee). */
export function priced(
  price: {
    input_per_mtok_micros: number;
    output_per_mtok_micros: number;
    cache_write_per_mtok_micros: number;
    cache_read_per_mtok_micros: number;
    request_fee_micros: number;
  },
  usage: { input: number; output: number; cacheWrite?: number; cacheRead?: number },
): number {
  const tokens =
    BigInt(usage.input) * BigInt(price.input_per_mtok_micros) +
    BigInt(usage.output) * BigInt(price.output_per_mtok_micros) +
    BigInt(usage.cacheWrite ?? 0) * BigInt(price.cache_write_per_mtok_micros) +
    BigInt(usage.cacheRead ?? 0) * BigInt(price.cache_read_per_mtok_micros);
  return price.request_fee_micros + Number((tokens + 999_999n) / 1_000_000n);
}

export interface GatewayOptions {
  store?: StoreKind;
  providerExecutedTools?: boolean;
  /** Extra connections (given the simulator URL), appended to one per creatable profile. */
  connections?: (simulatorUrl: string) => Array<Record<string, unknown>>;
  /** Extra model aliases appended to `m:<profile>` and `fallback`. */
  models?: Array<Record<string, unknown>>;
  /** Changes applied to each generated connection (timeouts, for instance). */
  patchConnection?: (connection: Record<string, unknown>) => void;
  /** Other top-level configuration fields. */
  config?: Record<string, unknown>;
  clock?: Clock;
  observer?: TestGatewayOptions['observer'];
  ledgerStore?: TestGatewayOptions['ledgerStore'];
}

/** Like startSimulatedGateway, with extra connections and model aliases (which need the simulator URL). */
export async function startGateway(options: GatewayOptions = {}): Promise<SimulatedGateway> {
  const simulator = await startSimulator({ port: 0 });
  try {
    const upstream = simulatedUpstreamConfig(simulator.url, {
      providerExecutedTools: options.providerExecutedTools,
    });
    const connections: Array<Record<string, unknown>> = [
      ...upstream.connections,
      ...(options.connections?.(simulator.url) ?? []),
    ];
    for (const connection of connections) options.patchConnection?.(connection);
    const gateway = await startTestGateway({
      store: options.store,
      clock: options.clock,
      observer: options.observer,
      ledgerStore: options.ledgerStore,
      config: { connections, models: [...upstream.models, ...(options.models ?? [])], ...options.config },
    });
    return {
      ...gateway,
      simulator,
      async close() {
        // A client socket that connected but never sent a request (undici's fetch can leave one)
        // would hold the graceful close open until the server's header timeout.
        gateway.app.server.closeAllConnections();
        await gateway.close();
        await simulator.close();
      },
    };
  } catch (error) {
    await simulator.close();
    throw error;
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The worst case the gateway reserves for `body` (sent as JSON.stringify(body)) at `price`. */
export function reservationFor(body: Record<string, unknown>, given?: typeof PRICE): number {
  const price = given ?? PRICE;
  const inputPrice = Math.max(
    price.input_per_mtok_micros,
    price.cache_write_per_mtok_micros,
    price.cache_read_per_mtok_micros,
  );
  const bytes = BigInt(Buffer.byteLength(JSON.stringify(body)));
  const tokens =
    bytes * BigInt(inputPrice) + BigInt(body.max_tokens as number) * BigInt(price.output_per_mtok_micros);
  return price.request_fee_micros + Number((tokens + 999_999n) / 1_000_000n);
}
