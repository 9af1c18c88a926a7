/**
 * Turns anything thrown by a route into a response in the route's dialect. Unknown errors become
 * 500 internal_error with the request id; the stack goes to the log, never to the client.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import {
  GatewayError,
  ObjectStoreUnavailableError,
  ReservationUnavailableError,
  StoreUnavailableError,
} from '../errors/gateway-error.js';
import { dialectOf, renderError } from '../errors/render.js';

/** Seconds a client waits before retrying while the object store is down (S3 clients back off from 1-2 s). */
const OBJECT_STORE_RETRY_AFTER = '2';

function asGatewayError(error: unknown, path: string): GatewayError | undefined {
  if (error instanceof GatewayError) return error;
  if (error instanceof StoreUnavailableError) {
    return path.startsWith('/svc/')
      ? new GatewayError(
          'governance_unavailable',
          'The governance store cannot be reached; nothing was written. Retry later.',
          {
            retryAfter: '1',
          },
        )
      : new GatewayError(
          'run_governance_unavailable',
          error instanceof ReservationUnavailableError && error.inDoubt
            ? 'The ledger did not confirm the reservation; the call was not sent and nothing is charged for it (svc-attempt-id). Retry later.'
            : 'The ledger cannot be reached; the call was not admitted. Retry later.',
          {
            retryAfter: '1',
          },
        );
  }
  if (error instanceof ObjectStoreUnavailableError) {
    return new GatewayError(
      'object_store_unavailable',
      'The object store cannot be reached or failed; nothing was stored, reserved or charged. Retry later.',
      { retryAfter: OBJECT_STORE_RETRY_AFTER },
    );
  }
  const fastifyError = error as FastifyError;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return path.startsWith('/svc/')
        ? new GatewayError('invalid_request', 'The request body exceeds 16 KiB.')
        : new GatewayError('request_too_large', 'The request body exceeds the configured limit.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_request', fastifyError.message);
    default:
      if (
        typeof fastifyError.statusCode === 'number' &&
        fastifyError.statusCode >= 400 &&
        fastifyError.statusCode < 500
      ) {
        return new GatewayError('invalid_request', fastifyError.message);
      }
      return undefined;
  }
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const path = request.url.split('?')[0]!;
    let gatewayError = asGatewayError(error, path);
    if (!gatewayError) {
      request.log.error({ err: error }, 'unhandled error');
      gatewayError = new GatewayError('internal_error', `Internal error; quote request id ${request.id}.`);
    } else if (gatewayError.status >= 500) {
      // The store's own reason (never a secret: SQLSTATE, driver code, message) tells an outage from load.
      const cause =
        error instanceof StoreUnavailableError || error instanceof ObjectStoreUnavailableError
          ? error.message
          : undefined;
      request.log.warn({ code: gatewayError.code, message: gatewayError.message, cause }, 'request failed');
    }
    const rendered = renderError(dialectOf(path), gatewayError, request.id);
    // The attempt whose reservation failed (released when in doubt): the client can quote it.
    if (error instanceof ReservationUnavailableError) reply.header('svc-attempt-id', error.attemptId);
    return reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const error = new GatewayError('route_not_found', `No endpoint ${request.method} ${path}.`);
    const rendered = renderError(dialectOf(path), error, request.id);
    return reply.code(rendered.status).send(rendered.body);
  });
}
