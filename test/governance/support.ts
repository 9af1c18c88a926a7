/**
 * Shared helpers of the governance HTTP suite: each file runs its cases once per store kind
 * (PostgreSQL through describePostgres), talks to a started gateway over real HTTP with `call`,
 * and checks errors in the svc dialect with `expectSvcError`.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect } from 'vitest';
import { baseConfig, type CallResult, call, type StoreKind } from '../support/gateway.js';
import { describePostgres } from '../support/postgres.js';

/** A parsed JSON response body (tests read fields freely and let assertions fail). */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON in tests
export type Json = Record<string, any>;

export const STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres'];

/** describe() once per store kind; the PostgreSQL variant runs (or skips, or fails under CI) via describePostgres. */
export function describeEachStore(name: string, suite: (kind: StoreKind) => void): void {
  for (const kind of STORE_KINDS) {
    const title = `${name} [${kind}]`;
    if (kind === 'postgres') describePostgres(title, () => suite(kind));
    else describe(title, () => suite(kind));
  }
}

/** A fresh, legal Idempotency-Key. */
export function newIdempotencyKey(label = 'k'): string {
  return `${label}-${randomUUID()}`;
}

/** Asserts an error in the /svc/v1 dialect: exact shape, status, code, and request-id header = body. */
export function expectSvcError(result: CallResult, status: number, code: string): void {
  expect({ status: result.status, code: result.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(result.body)).toEqual(['error']);
  expect(Object.keys(result.body.error).sort()).toEqual(['code', 'message', 'request_id']);
  expect(typeof result.body.error.message).toBe('string');
  expect(result.body.error.message.length).toBeGreaterThan(0);
  expect(result.body.error.request_id).toMatch(/^req_/);
  expect(result.headers.get('request-id')).toBe(result.body.error.request_id);
  expect(result.headers.get('content-type')).toMatch(/^application\/json/);
}

/** A governance client for one Gateway Key: every POST gets a fresh Idempotency-Key unless one is given. */
export class Api {
  constructor(
    readonly url: string,
    readonly key: string,
  ) {}

  post(path: string, body: unknown, idempotencyKey = newIdempotencyKey()): Promise<CallResult> {
    return call(this.url, 'POST', path, { key: this.key, body, idempotencyKey });
  }

  get(path: string): Promise<CallResult> {
    return call(this.url, 'GET', path, { key: this.key });
  }

  async createWorkUnit(body: unknown = {}): Promise<Json> {
    const result = await this.post('/svc/v1/work-units', body);
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body;
  }

  async createRun(workUnitId: string, extra: Record<string, unknown> = {}): Promise<Json> {
    const result = await this.post('/svc/v1/runs', { work_unit_id: workUnitId, ...extra });
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body;
  }

  async closeWorkUnit(id: string): Promise<Json> {
    const result = await this.post(`/svc/v1/work-units/${id}/close`, {});
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body;
  }

  report(workUnitId: string, body: Record<string, unknown>, idempotencyKey?: string): Promise<CallResult> {
    return this.post(`/svc/v1/work-units/${workUnitId}/outcomes`, body, idempotencyKey);
  }

  async reportOk(workUnitId: string, body: Record<string, unknown>): Promise<Json> {
    const result = await this.report(workUnitId, body);
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    return result.body;
  }
}

export const OBSERVED_AT = '2025-12-31T12:00:00.000Z';

export function resolvedOutcome(value: boolean, supersedes?: string): Record<string, unknown> {
  return {
    definition_id: 'odef_resolved',
    value,
    observed_at: OBSERVED_AT,
    ...(supersedes === undefined ? {} : { supersedes_outcome_id: supersedes }),
  };
}

type ProjectConfig = Json;

/** The harness configuration's projects with `change` applied to a copy of each. */
export function projectsWith(change: (project: ProjectConfig) => void): ProjectConfig[] {
  const projects = structuredClone(baseConfig().projects) as ProjectConfig[];
  for (const project of projects) change(project);
  return projects;
}

export interface RawResult {
  status: number;
  headers: Record<string, string>;
  body: Json;
}

/**
 * One request written byte for byte on a socket (repeated headers, control characters) that fetch
 * and node:http would normalise or refuse. Header values are sent as latin1 bytes.
 */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: string[],
  body = '',
): Promise<RawResult> {
  const url = new URL(path, base);
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
  for (let index = 0; index + 1 < headers.length; index += 2)
    lines.push(`${headers[index]}: ${headers[index + 1]}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const payload = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split).split('\r\n');
      const status = Number(head[0]?.split(' ')[1]);
      const responseHeaders: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        responseHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = text.slice(split + 4);
      let parsed: unknown = rest;
      try {
        parsed = rest ? JSON.parse(rest) : undefined;
      } catch {
        // keep text
      }
      resolve({ status, headers: responseHeaders, body: parsed as Json });
    });
    socket.write(payload);
  });
}
