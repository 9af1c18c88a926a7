/**
 * A gateway on one store with every endpoint served (governance, messages, files, batches,
 * responses and the media endpoints on the simulator), a Gateway Key with every scope, one open
 * Work Unit and one Run: what the input-guard and fuzz suites send their requests to. `probe`
 * sends one request as raw bytes (JSON or multipart), so malformed input reaches the gateway as is.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { StoreKind } from './gateway.js';
import { SIM_MEDIA_MODELS, simulatedConnections } from './resource-gateway.js';
import { type SimulatorWorld, startSimulatorWorld } from './simulator-world.js';

const PRICE = { input_per_mtok_micros: 3_000_000, output_per_mtok_micros: 15_000_000 };
export const BOUNDARY = 'svc-input-boundary';

export interface InputWorld {
  store: StoreKind;
  world: SimulatorWorld;
  url: string;
  key: string;
  workUnitId: string;
  runId: string;
  close(): Promise<void>;
}

export interface Probe {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** A JSON body (serialised with JSON.stringify: lone surrogates travel as \ud800 escapes). */
  body?: unknown;
  /** Raw body text, sent as application/json. */
  rawBody?: string;
  /** A multipart upload with one file part; `cut` drops the closing boundary. */
  multipart?:
    | { filename: string; purpose: string; cut: boolean; content?: string; fileField?: string }
    | undefined;
  /** A field the error message must name. */
  param?: string;
}

export interface ProbeResult {
  status: number;
  body: unknown;
}

export async function startInputWorld(store: StoreKind): Promise<InputWorld> {
  const world = await startSimulatorWorld({
    store,
    environment: { SIM_UPSTREAM_KEY: 'sk-simulated-upstream' },
    config: (simUrl) => ({
      connections: simulatedConnections(simUrl),
      models: [
        { alias: 'sim', targets: [{ connection: 'sim-vendora', model: 'up-sim', price: PRICE }] },
        ...SIM_MEDIA_MODELS,
      ],
      endpoints: { default_connections: { files: 'sim-chat', batches: 'sim-chat' } },
    }),
  });
  const key = await world.gateway.key();
  const url = world.gateway.url;
  const partial = { store, world, url, key, workUnitId: '', runId: '', close: () => world.close() };
  const workUnit = await probe(partial, { method: 'POST', path: '/svc/v1/work-units', body: {} });
  const workUnitId = (workUnit.body as { id: string }).id;
  const run = await probe(partial, {
    method: 'POST',
    path: '/svc/v1/runs',
    body: { work_unit_id: workUnitId },
  });
  return { ...partial, workUnitId, runId: (run.body as { id: string }).id };
}

function multipartBody(form: NonNullable<Probe['multipart']>): Buffer {
  const part = (headers: string, value: string) => `--${BOUNDARY}\r\n${headers}\r\n\r\n${value}\r\n`;
  const body =
    part('Content-Disposition: form-data; name="purpose"', form.purpose) +
    part(
      `Content-Disposition: form-data; name="${form.fileField ?? 'file'}"; filename="${form.filename}"\r\nContent-Type: application/jsonl`,
      form.content ?? '{"custom_id":"a"}\n',
    );
  return Buffer.from(form.cut ? body.slice(0, -10) : `${body}--${BOUNDARY}--\r\n`, 'utf8');
}

/** One request over a fresh connection; never throws for an HTTP answer (status 0 when the connection failed). */
export function probe(world: Pick<InputWorld, 'url' | 'key'>, entry: Probe): Promise<ProbeResult> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${world.key}`,
    'vendora-version': '2023-06-01',
    'idempotency-key': `probe-${randomUUID()}`,
    connection: 'close',
  };
  let payload: Buffer | undefined;
  if (entry.multipart !== undefined) {
    payload = multipartBody(entry.multipart);
    headers['content-type'] = `multipart/form-data; boundary=${BOUNDARY}`;
  } else if (entry.rawBody !== undefined || entry.body !== undefined) {
    payload = Buffer.from(entry.rawBody ?? JSON.stringify(entry.body), 'utf8');
    headers['content-type'] = 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(payload.length);
  const target = new URL(world.url);
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: entry.method,
        path: entry.path,
        headers,
        timeout: 20_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', () => resolve({ status: 0, body: 'response error' }));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // keep the text
          }
          resolve({ status: response.statusCode ?? 0, body });
        });
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error) => resolve({ status: 0, body: `connection failed: ${error.message}` }));
    outgoing.end(payload);
  });
}
