/**
 * The one upstream HTTP call (undici, keep-alive pool per connection). It applies the connection's
 * timeouts (connect, first byte, idle between body chunks) and auth headers, and classifies
 * failures by what the upstream may have seen: `connect` means nothing was sent; `timeout` and
 * `dropped` mean the request may have been received (and billed).
 */
import { context, propagation } from '@opentelemetry/api';
import { type Dispatcher, errors as undiciErrors } from 'undici';
import type { CancelSignal } from '../../lib/cancel-signal.js';
import { DispatchedBody, type UpstreamBody } from './upstream-body.js';

export interface UpstreamEndpoint {
  /** Connection name, for messages. */
  name: string;
  dispatcher: Dispatcher;
  origin: string;
  /** Path prefix of the connection's base URL (e.g. '/v1'), '' for none. */
  basePath: string;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  /** Auth headers for this exact request (SigV4 signs the body). */
  authHeaders(
    method: string,
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Record<string, string>;
}

export interface UpstreamRequest {
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  signal?: CancelSignal;
}

export type UpstreamFailureKind = 'connect' | 'timeout' | 'dropped' | 'aborted';

export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The call failed before any byte left this process (body serialisation, signing, a bad URL, a
 * request builder that threw): nothing reached the upstream, so nothing can have been billed.
 */
export class NotSentError extends Error {
  override readonly name = 'NotSentError';
  constructor(
    /** client: the client's input cannot be sent (400); gateway: our bug (500). */
    readonly fault: 'client' | 'gateway',
    message: string,
  ) {
    super(message);
  }
}

/** A throw while building or serialising a request: too deep or too large input is the client's. */
export function notSentError(error: unknown): NotSentError {
  if (error instanceof NotSentError) return error;
  if (error instanceof RangeError)
    return new NotSentError('client', 'the body is nested too deeply or is too large to serialise');
  if (error instanceof Error && error.name === 'CannotCarryError')
    return new NotSentError('client', error.message);
  return new NotSentError('gateway', error instanceof Error ? error.message : String(error));
}

/** Runs a request builder; whatever it throws becomes a NotSentError. */
export function buildOrNotSent<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw notSentError(error);
  }
}

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Maps a thrown transport error to what the upstream may have seen. */
export function classifyTransportError(error: unknown, endpoint: string): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const code = (error as { code?: string }).code ?? '';
  const name = (error as Error).name;
  if (
    name === 'AbortError' ||
    code === 'UND_ERR_ABORTED' ||
    error instanceof undiciErrors.RequestAbortedError
  ) {
    return new UpstreamFailure('aborted', `request to ${endpoint} aborted`);
  }
  if (CONNECT_CODES.has(code) || error instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamFailure('connect', `cannot connect to ${endpoint} (${code || name})`);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamFailure('timeout', `${endpoint} timed out (${code})`);
  }
  return new UpstreamFailure(
    'dropped',
    `connection to ${endpoint} failed (${code || (error as Error).message})`,
  );
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export async function callUpstream(
  endpoint: UpstreamEndpoint,
  request: UpstreamRequest,
): Promise<UpstreamResponse> {
  const path = `${endpoint.basePath}${request.path}`;
  let body: string;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...request.headers };
  try {
    body = JSON.stringify(request.body);
    Object.assign(headers, endpoint.authHeaders('POST', path, body, headers));
  } catch (error) {
    throw notSentError(error);
  }
  // W3C trace context of the active attempt span (a no-op unless the tracing SDK is running).
  // Added after signing so a signed request's signature covers exactly what it did before.
  propagation.inject(context.active(), headers);
  return dispatchCall(endpoint, path, headers, body, request.signal);
}

/**
 * POSTs `body` through the connection's pool with undici's dispatch API, and resolves with the
 * answer's status and headers once they arrive, its body a DispatchedBody (upstream-body.ts) in
 * place of the Readable `request()` would make. Failures and cancellation behave as `request()`'s:
 * before the headers the promise rejects (classified); after them the body's reader gets the error.
 */
function dispatchCall(
  endpoint: UpstreamEndpoint,
  path: string,
  headers: Record<string, string>,
  body: string,
  signal: CancelSignal | undefined,
): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let answer: DispatchedBody | undefined;
    let cancelled: unknown;
    let listening = false;
    const stopListening = () => {
      if (listening) signal!.removeEventListener('abort', onAbort);
      listening = false;
    };
    const fail = (error: unknown) => {
      stopListening();
      if (answer) answer.fail(error);
      else reject(failureBeforeAnswer(error, endpoint.name));
    };
    function onAbort() {
      cancelled = signal!.reason ?? new undiciErrors.RequestAbortedError();
      stopListening();
      // Before the call has a connection, it is aborted when it gets one (as `request()` does).
      if (controller) controller.abort(cancelled as Error);
      answer?.fail(cancelled);
    }
    if (signal?.aborted) {
      reject(failureBeforeAnswer(signal.reason ?? new undiciErrors.RequestAbortedError(), endpoint.name));
      return;
    }
    if (signal) {
      signal.addEventListener('abort', onAbort);
      listening = true;
    }
    // A dispatcher reports what it refuses through onResponseError; a throw is handled the same way.
    try {
      dispatchOn(endpoint, path, headers, body, {
        onRequestStart(started) {
          controller = started;
          if (cancelled !== undefined) started.abort(cancelled as Error);
        },
        onResponseStart(started, statusCode, responseHeaders) {
          if (statusCode < 200 || answer) return;
          answer = new DispatchedBody(started);
          resolve({ status: statusCode, headers: responseHeaders, body: answer });
        },
        onResponseData(_controller, chunk) {
          answer?.push(chunk);
        },
        onResponseEnd() {
          stopListening();
          answer?.end();
        },
        onResponseError(_controller, error) {
          fail(error);
        },
      });
    } catch (error) {
      fail(error);
    }
  });
}

function dispatchOn(
  endpoint: UpstreamEndpoint,
  path: string,
  headers: Record<string, string>,
  body: string,
  handler: Dispatcher.DispatchHandler,
): void {
  endpoint.dispatcher.dispatch(
    {
      origin: endpoint.origin,
      path,
      method: 'POST',
      headers,
      body,
      headersTimeout: endpoint.firstByteTimeoutMs,
      bodyTimeout: endpoint.idleTimeoutMs,
    },
    handler,
  );
}

/**
 * A failure before the answer's headers, as callUpstream and callUpstreamRaw report it: an argument
 * undici refused was never sent; anything else is classified by what the upstream may have seen.
 */
export function failureBeforeAnswer(error: unknown, endpoint: string): Error {
  if (error instanceof undiciErrors.InvalidArgumentError) return new NotSentError('gateway', error.message);
  return classifyTransportError(error, endpoint);
}

/** Reads a whole (small) response body as JSON; a body that is not JSON is returned as text. */
export async function readJsonBody(body: UpstreamResponse['body'], endpoint: string): Promise<unknown> {
  let text: string;
  try {
    text = await body.text();
  } catch (error) {
    throw classifyTransportError(error, endpoint);
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
