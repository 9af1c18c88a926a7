import { ERROR_CATALOGUE, type ErrorCode, type ErrorType } from './catalogue.js';

export interface GatewayErrorOptions {
  /** The request field the error is about (vendorb `param`). */
  param?: string;
  /** Seconds, sent as the Retry-After header. */
  retryAfter?: string;
  /** Overrides the catalogue status (upstream errors keep the translated upstream status). */
  status?: number;
  /** Overrides the vendora/vendorb type (upstream errors keep the translated upstream type). */
  type?: ErrorType;
}

/** Use cases throw this; only the HTTP renderers turn it into a body. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: GatewayErrorOptions = {},
  ) {
    super(message);
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
  }
}

/** Thrown by store adapters when the database cannot be reached or timed out. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /**
   * The adapter knows the write did not commit: it failed before anything reached the database (a
   * refused or timed-out connection, a full queue) or before its COMMIT was sent. Otherwise (a
   * statement or COMMIT sent on a connection that then died or timed out) nobody knows.
   */
  readonly uncommitted: boolean;

  constructor(message: string, options: ErrorOptions & { uncommitted?: boolean } = {}) {
    super(message, options);
    this.uncommitted = options.uncommitted ?? false;
  }
}

/**
 * The store failed a reservation for a call that was therefore not sent. `inDoubt`: the store may
 * have committed it; the ledger resolves it when the store answers again (ledger/in-doubt.ts). The
 * client's answer is the store's 503, with the attempt's id to find it in the audit trail.
 */
export class ReservationUnavailableError extends StoreUnavailableError {
  readonly inDoubt: boolean;

  constructor(
    readonly attemptId: string,
    cause: StoreUnavailableError,
  ) {
    super(cause.message, { cause, uncommitted: cause.uncommitted });
    this.inDoubt = !cause.uncommitted;
  }
}

/**
 * Thrown by object store adapters (objects/port.ts) when the store cannot take or give an object for
 * a reason that passes: unreachable, reset, timed out, throttled, a 5xx, a full or failing disk.
 * Answered 503 object_store_unavailable with Retry-After; nothing the request reserved is kept.
 */
export class ObjectStoreUnavailableError extends Error {
  override readonly name = 'ObjectStoreUnavailableError';
}
