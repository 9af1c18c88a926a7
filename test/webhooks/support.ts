/**
 * Shared parts of the webhook suites: a real HTTP receiver on loopback (node:http) whose behaviour
 * the test changes while it runs (answer a status, hang, be down), the reference signature
 * verifier written from the documented scheme (docs/events.md), and events appended to the outbox.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { newId } from '../../src/lib/ids.js';
import type { EventType, NewEvent, Store } from '../../src/store/port.js';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** What the receiver does with the next request: answer with a status, or hang (never answer). */
export type Behaviour = { kind: 'status'; status: number } | { kind: 'hang' };

export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  behaviour: (request: ReceivedRequest) => Behaviour = () => ({ kind: 'status', status: 200 });
  /** Requests being answered right now, and the most at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** Milliseconds a 2xx answer waits before it is sent (to make deliveries overlap). */
  answerDelayMs = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly hung: ServerResponse[] = [];
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        this.requests.push(received);
        const behaviour = this.behaviour(received);
        if (behaviour.kind === 'hang') {
          this.hung.push(response);
          return;
        }
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight--;
          response.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end('ok');
        }, this.answerDelayMs);
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection (the receiver is down). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    for (const response of this.hung.splice(0)) response.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Event ids received (every delivery, duplicates included), in arrival order. */
  eventIds(): string[] {
    return this.requests.map((request) => String(request.headers['svc-event-id']));
  }
}

/**
 * The reference verifier: parse `t=...,v1=...[,v1=...]`, refuse a timestamp outside the replay
 * window, recompute HMAC-SHA256(secret, "<t>.<raw body>") and compare it in constant time with
 * each v1. True when one signature verifies.
 */
export function verifySignature(
  header: string | undefined,
  rawBody: string,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [name, value] = part.split('=', 2);
    if (name === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (name === 'v1' && value) signatures.push(value);
  }
  if (timestamp === undefined || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** An event of `type` about run `resourceId` in `projectId`, appended to the outbox. */
export function newEvent(
  projectId: string,
  resourceId: string,
  type: EventType = 'run.budget_threshold',
): NewEvent {
  return {
    id: newId('evt'),
    projectId,
    type,
    resourceType: 'run',
    resourceId,
    occurredAt: new Date().toISOString(),
    data: { run_id: resourceId },
  };
}

export async function appendEvents(store: Store, events: NewEvent[]): Promise<void> {
  await store.events.appendEvents(events);
}

/** Waits until `check` returns true (polling), or fails after `timeoutMs` with `what`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The gateway configuration fields of a fast-retrying dispatcher that may deliver to loopback. */
export function fastWebhooks(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    allow_private_networks: true,
    poll_interval_ms: 50,
    timeout_ms: 400,
    backoff_base_ms: 20,
    backoff_cap_ms: 200,
    ...extra,
  };
}
