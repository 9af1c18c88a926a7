/**
 * Starts a real gateway on 127.0.0.1 (random port) over a fresh store for one test file:
 * SQLite in a temporary folder, or PostgreSQL in a database created for it and dropped after.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { type Config, SCOPES } from '../../src/config/schema.js';
import { buildUpstreams, type Upstreams } from '../../src/gateway/connections.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { type Clock, systemClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createLogger } from '../../src/lib/logger.js';
import { hashSecret, newKeySecret } from '../../src/lib/secrets.js';
import type { Limiter } from '../../src/limits/limiter.js';
import { projectCapsFrom } from '../../src/money/spend-caps.js';
import { eventThresholdsFrom } from '../../src/money/thresholds.js';
import { openObjectStore, readSealingKey } from '../../src/objects/open-objects.js';
import {
  type AttemptObserver,
  combineObservers,
  noAttemptObserver,
} from '../../src/observability/attempt-observer.js';
import { traceFields } from '../../src/observability/log-fields.js';
import type { Observability } from '../../src/observability/observability.js';
import { instrumentStore } from '../../src/observability/store-instrumentation.js';
import { refusalRecorder } from '../../src/reports/refusal-recorder.js';
import { bootstrapStore } from '../../src/startup/bootstrap.js';
import { openLimiter } from '../../src/startup/open-limiter.js';
import { openStore } from '../../src/startup/open-store.js';
import type { Store } from '../../src/store/port.js';
import { testProjects } from './projects.js';

export type StoreKind = 'sqlite' | 'postgres';

export interface TestGateway {
  url: string;
  app: FastifyInstance;
  store: Store;
  config: Config;
  ledger: Ledger;
  upstreams: Upstreams;
  /** Every log line the gateway wrote, as text. */
  logs: string[];
  /** Creates a Gateway Key in `project` with `scopes` (default: all) and returns its secret. */
  key(project?: string, scopes?: readonly string[]): Promise<string>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  store?: StoreKind;
  /** Raw configuration fields merged over the defaults below (top-level keys replaced). */
  config?: Record<string, unknown>;
  environment?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** PostgreSQL only: use this existing database (another replica's) instead of a fresh one. */
  databaseUrl?: string;
  /** Observes every attempt (default: none). */
  observer?: AttemptObserver;
  /** Wraps the store the ledger writes through (fault injection on a real store). */
  ledgerStore?: (store: Store) => Store;
  /** Metrics, tracing and the attempt observer (the store is instrumented like startGateway does). */
  observability?: Observability;
  /** Shared token buckets (default: what rate_limits configures, as startGateway opens them). */
  limiter?: Limiter;
}

export function baseConfig(): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    logging: { level: 'info' },
    projects: testProjects(),
  };
}

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const kind = options.store ?? 'sqlite';
  const environment = { ...options.environment };
  const cleanups: Array<() => Promise<void> | void> = [];
  const raw: Record<string, unknown> = { ...baseConfig(), ...options.config };
  if (kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'svc-test-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    raw.store = { kind: 'sqlite', sqlite: { path: join(folder, 'svc.db') } };
    raw.data_dir = folder;
  } else {
    if (options.databaseUrl === undefined) {
      const { createTestDatabase } = await import('./postgres-database.js');
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      environment.SVC_TEST_DATABASE_URL = database.url;
    } else environment.SVC_TEST_DATABASE_URL = options.databaseUrl;
    raw.store = { kind: 'postgres', postgres: { url_env: 'SVC_TEST_DATABASE_URL' } };
    const folder = mkdtempSync(join(tmpdir(), 'svc-test-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    raw.data_dir = folder;
  }
  const config = parseConfig(raw, 'test-config', environment);
  const logs: string[] = [];
  const logger = createLogger(
    config.logging.level,
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    }),
    // As main.ts: with tracing on, every line carries the active trace and span ids.
    options.observability?.tracing ? traceFields : undefined,
  );
  const opened = await openStore(config, environment);
  const store = options.observability ? instrumentStore(opened, options.observability) : opened;
  await bootstrapStore(store, config, environment);
  const clock = options.clock ?? systemClock;
  const upstreams = buildUpstreams(config, environment);
  const ledger = new Ledger(
    options.ledgerStore ? options.ledgerStore(store) : store,
    clock,
    logger,
    {
      leaseMs: config.ledger.lease_seconds * 1000,
      reaperIntervalMs: config.ledger.reaper_interval_seconds * 1000,
      projectCaps: projectCapsFrom(config.projects),
      eventThresholds: eventThresholdsFrom(config.events, config.projects),
    },
    combineObservers(
      options.observer ?? options.observability?.observer ?? noAttemptObserver,
      refusalRecorder(store, clock, logger),
    ),
  );
  // As startGateway: rate_limits picks the limiter (the store's buckets, or Redis with its fallback).
  const limits = options.limiter
    ? undefined
    : await openLimiter(config, environment, store, logger, options.observability?.metrics);
  const limiter = options.limiter ?? limits?.limiter;
  const app = await buildApp({
    config,
    store,
    clock,
    logger,
    upstreams,
    ledger,
    objects: openObjectStore(config, environment),
    sealingKey: readSealingKey(config, environment),
    ...(options.observability ? { observability: options.observability } : {}),
    ...(limiter ? { limiter } : {}),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    app,
    store,
    config,
    ledger,
    upstreams,
    logs,
    async key(project = 'prj_a', scopes = SCOPES) {
      const secret = newKeySecret();
      await store.createKey({
        id: newId('key'),
        projectId: project,
        secretHash: hashSecret(secret),
        scopes: [...scopes],
        label: 'test',
        createdAt: new Date().toISOString(),
      });
      return secret;
    },
    async close() {
      await app.close();
      await limits?.close();
      ledger.stopReaper();
      await upstreams.close();
      await store.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

/** One HTTP call with fetch; JSON bodies parsed. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization ??= `Bearer ${options.key}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // keep text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
