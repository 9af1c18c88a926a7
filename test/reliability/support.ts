/** Shared helpers of the process-level reliability tests (test/reliability). */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON in tests
export type Json = Record<string, any>;

export interface CallResult {
  status: number;
  headers: Headers;
  body: Json;
  /** Milliseconds from sending to the whole body read. */
  ms: number;
}

/**
 * One HTTP call with fetch (its own copy, so these tests do not load the in-process app); JSON
 * bodies parsed. `timeoutMs` aborts a call that hangs (the outage tests measure answers, never waits).
 */
export async function call(
  base: string,
  method: string,
  path: string,
  options: {
    key?: string;
    body?: unknown;
    headers?: Record<string, string>;
    idempotencyKey?: string;
    timeoutMs?: number;
  } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization ??= `Bearer ${options.key}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const started = performance.now();
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
  });
  const text = await response.text();
  let parsed: Json = { text };
  try {
    parsed = text ? (JSON.parse(text) as Json) : {};
  } catch {
    // keep the text
  }
  return {
    status: response.status,
    headers: response.headers,
    body: parsed,
    ms: performance.now() - started,
  };
}

export function newIdempotencyKey(label = 'rel'): string {
  return `${label}-${randomUUID()}`;
}

/** A governance POST with a Gateway Key and an Idempotency-Key. */
export function post(
  url: string,
  key: string,
  path: string,
  body: unknown,
  idempotencyKey = newIdempotencyKey(),
): Promise<CallResult> {
  return call(url, 'POST', path, { key, body, idempotencyKey });
}

export function get(url: string, key: string, path: string): Promise<CallResult> {
  return call(url, 'GET', path, { key });
}

export function countBy(results: CallResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1;
  return counts;
}

/** An error in the /svc/v1 dialect with this status and code. */
export function expectSvcError(result: CallResult, status: number, code: string): void {
  expect({ status: result.status, code: result.body?.error?.code }, JSON.stringify(result.body)).toEqual({
    status,
    code,
  });
  expect(result.body.error.request_id).toMatch(/^req_/);
}

export function outcomeBody(value: boolean, supersedes?: string): Json {
  return {
    definition_id: 'odef_resolved',
    value,
    observed_at: '2025-12-31T12:00:00.000Z',
    ...(supersedes === undefined ? {} : { supersedes_outcome_id: supersedes }),
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(
    `${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`,
  );
}

/**
 * The upstream of the process-level gateways: the simulator as a vendora-wire connection
 * `sim-vendora`, and the alias `sim` routed to it at `price` (spread into the gateway's config).
 */
export function simulatedVendora(
  simulatorUrl: string,
  price: Json,
  timeouts?: { connect_ms: number; first_byte_ms: number; idle_ms: number },
): { connections: Json[]; models: Json[] } {
  return {
    connections: [
      {
        name: 'sim-vendora',
        profile: 'vendora.messages.2023-06-01',
        base_url: simulatorUrl,
        auth: { scheme: 'none' },
        ...(timeouts ? { timeouts } : {}),
      },
    ],
    models: [{ alias: 'sim', targets: [{ connection: 'sim-vendora', model: 'up-sim', price }] }],
  };
}
