/**
 * The simulator framework: one plain node:http server (fast enough for benchmarks; keep-alive on)
 * serving every wire module's routes plus the control API (control.ts).
 *
 * Per request: split the query string off; control routes go to control.ts; otherwise find the
 * first route whose method and pattern match (else 404 JSON); read the body fully and JSON-parse it
 * when the content type says JSON (rawBody is kept for multipart); record the request (before the
 * handler runs, so a dropped or stalled call is still on record); resolve the behaviour
 * (behaviours.ts); apply `latencyMs` and `dropBeforeResponse`; then call the wire's handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BehaviourBook, type BehaviourMatch } from './behaviours.js';
import { CONTROL_PREFIX, handleControl } from './control.js';
import { readBody, sendJson, sleep } from './http-io.js';
import { type RequestFilter, RequestRecorder } from './recorder.js';
import type { RecordedRequest, SimBehaviour, SimCall, SimRoute, SimWire, SimWireState } from './types.js';
import { defaultWires } from './wires/index.js';

export interface SimulatorOptions {
  /** 0 or absent: any free port. */
  port?: number;
  host?: string;
  wires?: SimWire[];
  /** How many requests the record keeps (default 10,000; the oldest are forgotten first). */
  recordLimit?: number;
}

export interface Simulator {
  url: string;
  port: number;
  setBehaviour(behaviour: SimBehaviour, match?: BehaviourMatch): void;
  /** Clears every behaviour (the record is cleared by `clearRequests`). */
  reset(): void;
  requests(filter?: RequestFilter): RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
}

interface BoundRoute {
  wire: SimWire;
  route: SimRoute;
  state: SimWireState;
}

type BaseCall = Omit<SimCall, 'behaviour'>;

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const behaviours = new BehaviourBook();
  const recorder = new RequestRecorder(options.recordLimit ?? 10_000);
  const routes = bindRoutes(options.wires ?? defaultWires);

  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => failed(response, error));
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const query = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1));
    const method = request.method ?? 'GET';
    const rawBody = await readBody(request);
    if (path.startsWith(CONTROL_PREFIX)) {
      return handleControl({ behaviours, recorder }, method, path, query, rawBody, response);
    }
    const found = findRoute(routes, method, path);
    if (found === undefined) {
      return sendJson(response, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `No simulated route for ${method} ${path}` },
      });
    }
    const { bound, params } = found;
    const parsed = parseBody(request.headers['content-type'], rawBody);
    const call: BaseCall = { request, response, path, query, body: parsed.body, rawBody, params };
    const model = bound.wire.modelOf ? bound.wire.modelOf(call) : modelFromBody(parsed.body);
    const record: RecordedRequest = {
      wire: bound.wire.name,
      method,
      path,
      headers: request.headers,
      body: parsed.recorded,
      at: Date.now(),
    };
    recorder.add(record, model);
    // Tests need to see a client that went away mid-answer (the gateway aborting its upstream call).
    response.once('close', () => {
      if (!response.writableFinished) record.closedEarlyAt = Date.now();
    });
    const behaviour = behaviours.resolve(bound.wire.name, model);
    if (behaviour.latencyMs !== undefined && behaviour.latencyMs > 0) await sleep(behaviour.latencyMs);
    if (behaviour.dropBeforeResponse === true) {
      request.socket.destroy();
      return;
    }
    await bound.route.handle({ ...call, behaviour }, bound.state);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    setBehaviour: (behaviour, match) => behaviours.set(behaviour, match),
    reset: () => behaviours.reset(),
    requests: (filter) => recorder.list(filter),
    clearRequests: () => recorder.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Stalled streams and idle keep-alive sockets would otherwise hold close() open forever.
        server.closeAllConnections();
      }),
  };
}

function bindRoutes(wires: SimWire[]): BoundRoute[] {
  return wires.flatMap((wire) => {
    const state: SimWireState = new Map();
    return wire.routes.map((route) => ({ wire, route, state }));
  });
}

function findRoute(
  routes: BoundRoute[],
  method: string,
  path: string,
): { bound: BoundRoute; params: Record<string, string> } | undefined {
  for (const bound of routes) {
    if (bound.route.method !== method) continue;
    const match = bound.route.pattern.exec(path);
    if (match === null) continue;
    return { bound, params: { ...match.groups } };
  }
  return undefined;
}

/** `body` for the handler; `recorded` for the record (multipart bodies are kept as their byte length). */
function parseBody(contentType: string | undefined, rawBody: Buffer): { body: unknown; recorded: unknown } {
  if (rawBody.length === 0) return { body: undefined, recorded: undefined };
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('multipart/')) return { body: undefined, recorded: rawBody.length };
  const text = rawBody.toString('utf8');
  if (type.includes('json')) {
    try {
      const body: unknown = JSON.parse(text);
      return { body, recorded: body };
    } catch {
      return { body: text, recorded: text };
    }
  }
  return { body: text, recorded: text };
}

function modelFromBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model : undefined;
}

function failed(response: ServerResponse, error: unknown): void {
  if (!response.headersSent) {
    sendJson(response, 500, {
      type: 'error',
      error: { type: 'api_error', message: `simulator: ${String(error)}` },
    });
  } else {
    response.destroy();
  }
}
