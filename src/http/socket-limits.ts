/**
 * Bounds on client sockets, so clients that never send, never read or never close cannot hold file
 * descriptors and memory (issue 10). Four timeouts (`listen.timeouts`, docs/configuration.md):
 * - headers_ms: Node's headersTimeout, complete request headers (slowloris) -> 408 and close;
 *   like request_ms, Node reports it as a client error, which clientErrorHandler answers;
 * - request_ms: Node's requestTimeout, the complete request *received* (headers and body). It
 *   never covers the response, so an SSE answer may last as long as its upstream streams; it is
 *   long by default because it also bounds an upload's total duration;
 * - keep_alive_ms: an idle keep-alive connection after a response;
 * - idle_ms: no byte moved on the socket for this long. A connection with no request in flight
 *   (opened and never used, or a half-open client) is destroyed; so is one whose response waits on
 *   a client that stopped reading (bytes queued in the socket). A request waiting on its upstream
 *   (a silent stream, a slow non-streamed answer) is left alone: the connection's upstream
 *   timeouts bound it and end the response. Node's socket timer restarts on any activity of the
 *   socket, bytes the client keeps sending included; `watchStalledWrites` looks at the output only:
 *   output waiting on a socket that made no progress into the kernel for idle_ms ends the socket,
 *   and a reader that keeps taking bytes, however slowly, is never cut. Such a socket is reset
 *   rather than closed (`abandon`), so the kernel frees it at once too: closed, it kept the
 *   orphaned connection for a minute or more.
 * Node checks headers_ms and request_ms on a timer; it runs every second here (Node's default is
 * 30 s, which would let slow-header sockets live half a minute past their deadline).
 */
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors/catalogue.js';

export interface SocketTimeouts {
  headers_ms: number;
  request_ms: number;
  keep_alive_ms: number;
  idle_ms: number;
}

/** The part of the limits Node takes when the server is created (Fastify's `http` option). */
export function serverCreationOptions(timeouts: SocketTimeouts) {
  return {
    headersTimeout: timeouts.headers_ms,
    requestTimeout: timeouts.request_ms,
    keepAliveTimeout: timeouts.keep_alive_ms,
    connectionsCheckingInterval: Math.min(1000, timeouts.headers_ms),
  };
}

/**
 * The responses in flight on each client socket (pipelined requests queue behind the first), which
 * both the idle policy and the client-error answer read.
 */
export class ClientSockets {
  private readonly responses = new WeakMap<Socket, ServerResponse[]>();
  /** Sockets with a response in flight (what watchStalledWrites looks at). */
  readonly busySockets = new Set<Socket>();

  /** Tracks every request of `server` until its response closes. */
  track(server: Server): void {
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket;
      let inFlight = this.responses.get(socket);
      if (!inFlight) {
        inFlight = [];
        this.responses.set(socket, inFlight);
      }
      inFlight.push(response);
      this.busySockets.add(socket);
      response.once('close', () => {
        const index = inFlight.indexOf(response);
        if (index !== -1) inFlight.splice(index, 1);
        if (inFlight.length === 0) this.busySockets.delete(socket);
      });
    });
  }

  busy(socket: Socket): boolean {
    return (this.responses.get(socket)?.length ?? 0) > 0;
  }

  /** Whether a response on this socket has begun: its status line and headers have been written. */
  responding(socket: Socket): boolean {
    return this.responses.get(socket)?.some((response) => response.headersSent) ?? false;
  }
}

/** Installs the idle policy (see the header) on a created server. */
export function applyIdlePolicy(server: Server, timeouts: SocketTimeouts, sockets: ClientSockets): void {
  server.setTimeout(timeouts.idle_ms);
  // A 'timeout' listener replaces Node's default (destroy every timed-out socket).
  server.on('timeout', (socket: Socket) => {
    if (!sockets.busy(socket)) socket.destroy();
    else if (socket.writableLength > 0) abandon(socket);
  });
}

/**
 * Ends a connection whose client stopped reading, with a reset (RST): a plain close would leave the
 * unsent bytes to the kernel, which keeps the orphaned connection probing the client's zero window
 * for a minute or more after the process let go of it (most likely what an outside probe measured
 * as 50-80 s).
 */
function abandon(socket: Socket): void {
  socket.resetAndDestroy();
}

/** Where a socket's output stood at the last look, and since when it has not moved. */
interface WriteProgress {
  completed: number;
  queued: number;
  since: number;
}

/**
 * Ends the sockets whose output has waited idle_ms without any of it reaching the kernel (see the
 * header). Progress is read twice: bytes whose writes completed (`bytesWritten - writableLength`,
 * rising when a write finishes) and what the write in progress still holds in libuv
 * (`_handle.writeQueueSize`, Node's stream handle field, falling as the kernel takes it piece by
 * piece: one large answer is one write). Looked at every quarter of idle_ms (at most every second);
 * only sockets with a response in flight and output waiting are looked at.
 */
export function watchStalledWrites(server: Server, idleMs: number, sockets: ClientSockets): void {
  const progress = new WeakMap<Socket, WriteProgress>();
  const look = () => {
    const now = Date.now();
    for (const socket of sockets.busySockets) {
      if (socket.destroyed || socket.writableLength === 0) {
        progress.delete(socket);
        continue;
      }
      const completed = socket.bytesWritten - socket.writableLength;
      const queued =
        (socket as Socket & { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0;
      const last = progress.get(socket);
      if (!last || completed !== last.completed || queued < last.queued) {
        progress.set(socket, { completed, queued, since: now });
      } else if (now - last.since >= idleMs) {
        abandon(socket);
      } else {
        last.queued = queued;
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    timer ??= setInterval(look, Math.max(25, Math.min(1000, Math.floor(idleMs / 4)))).unref();
  });
  server.on('close', () => {
    clearInterval(timer);
    timer = undefined;
  });
}

/** A plain JSON answer written straight to the socket (no route, so no dialect, and no request id). */
function socketAnswer(code: ErrorCode, message: string): string {
  const { status } = ERROR_CATALOGUE[code];
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n` +
    JSON.stringify({ error: { code, message } })
  );
}

const TIMED_OUT = socketAnswer(
  'request_timeout',
  'The request did not arrive within the server timeouts (listen.timeouts).',
);
const HEADERS_TOO_LARGE = socketAnswer(
  'request_headers_too_large',
  'The request headers are larger than the server accepts.',
);
const MALFORMED = socketAnswer('invalid_request', 'Malformed HTTP request.');

/** Node's client errors, by code: a timeout (headers_ms, request_ms) or oversized headers, else malformed. */
function clientErrorAnswer(error: Error & { code?: string }): string {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return TIMED_OUT;
  if (error.code === 'HPE_HEADER_OVERFLOW') return HEADERS_TOO_LARGE;
  return MALFORMED;
}

/**
 * Answers a client error (malformed HTTP 400, a request not received in time 408, oversized headers
 * 431) and always frees the socket, even if the client never reads. When a response on the socket
 * has begun (a pipelined request went wrong behind it), an answer would land inside that response's
 * bytes: the socket is closed without one, as Node's own default does.
 */
export function clientErrorHandler(sockets: ClientSockets) {
  return (error: Error, socket: Socket): void => {
    if (socket.destroyed) return;
    if (!socket.writable || sockets.responding(socket)) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorAnswer(error), () => socket.destroy());
    // A client that does not read may keep the answer from flushing: free the socket anyway.
    setTimeout(() => socket.destroy(), 1000).unref();
  };
}
