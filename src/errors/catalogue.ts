/**
 * The one error catalogue. Every error the service answers has a stable code here, with its HTTP
 * status and its type in the vendora and vendorb dialects. docs/errors.md is checked against this
 * table by a test, so adding an error is one row here plus its line there.
 */
/** `error.type` in the vendora dialect (the canonical model's stream errors carry it too). */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export interface ErrorEntry {
  status: number;
  /** `error.type` in the vendora dialect (/v1/messages, /v1/messages/count_tokens). */
  vendora: ErrorType;
  /** `error.type` in the vendorb dialect (every other /v1 endpoint). */
  vendorb: string;
  /** What happened and what the caller should do (rendered into docs/errors.md). */
  meaning: string;
}

export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'A field is missing, malformed, outside its domain or unknown, or the Content-Type is wrong. Do not retry unchanged.',
  },
  invalid_outcome: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The Outcome report is invalid (definition not frozen on the Work Unit, value not allowed, bad evidence). Do not retry unchanged.',
  },
  invalid_webhook_url: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The webhook endpoint `url` is refused: not http(s), has credentials or a fragment, too long, does not resolve, or resolves to a loopback, private, link-local or other internal address (allowed only with webhooks.allow_private_networks). The message says which.',
  },
  webhook_endpoint_limit: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning: 'The Project has webhooks.max_endpoints_per_project endpoints already. Delete one first.',
  },
  invalid_idempotency_key: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'Idempotency-Key missing or illegal (1-255 visible ASCII characters). Supply a stable legal key per logical operation.',
  },
  unsupported_field: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The request uses a field, tool, block or header this mode or connection refuses (SPEC.md 4.2). Remove it or change mode.',
  },
  no_eligible_route: {
    status: 400,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning: 'Every target of the model alias was routed away; the message names each target and why.',
  },
  request_too_large: {
    status: 413,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning: 'The request body or upload exceeds the configured limit.',
  },
  request_timeout: {
    status: 408,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The request headers or the whole request did not arrive within `listen.timeouts` (`headers_ms`, `request_ms`); the connection is closed. Send the request again, faster, or raise the timeouts.',
  },
  request_headers_too_large: {
    status: 431,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      "The request headers exceed Node.js's limit (16 KiB in all, `--max-http-header-size`); the connection is closed. Send fewer or shorter headers.",
  },
  report_figure_too_large: {
    status: 422,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'A report figure (a count or a micro-USD sum) reaches 2^53 and cannot be written exactly as a JSON number; nothing is rounded. Ask for a shorter period or a finer grouping.',
  },
  authentication_failed: {
    status: 401,
    vendora: 'authentication_error',
    vendorb: 'authentication_error',
    meaning:
      'Missing, unknown or revoked Gateway Key, or x-api-key and Authorization both present and different.',
  },
  gateway_key_scope_denied: {
    status: 403,
    vendora: 'permission_error',
    vendorb: 'permission_error',
    meaning: 'The Gateway Key lacks the scope the endpoint needs.',
  },
  run_budget_exceeded: {
    status: 403,
    vendora: 'permission_error',
    vendorb: 'permission_error',
    meaning:
      'The worst-case cost of the call does not fit the Run remaining budget. Stop the Run or create a new compliant Run.',
  },
  key_budget_exceeded: {
    status: 403,
    vendora: 'permission_error',
    vendorb: 'permission_error',
    meaning:
      'The worst-case cost of the call does not fit a spend cap of the Gateway Key (lifetime, UTC day or UTC month; the message names it). Wait for the window to roll over or use another key.',
  },
  project_budget_exceeded: {
    status: 403,
    vendora: 'permission_error',
    vendorb: 'permission_error',
    meaning:
      'The worst-case cost of the call does not fit a spend cap of the Project (lifetime, UTC day or UTC month; the message names it). Wait for the window to roll over or raise the cap in configuration.',
  },
  model_not_allowed: {
    status: 403,
    vendora: 'permission_error',
    vendorb: 'permission_error',
    meaning: 'The Gateway Key may only use the model aliases listed on it; this alias is not one of them.',
  },
  key_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown Gateway Key id, or one of another Project.',
  },
  webhook_endpoint_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown webhook endpoint id, or one of another Project.',
  },
  webhook_delivery_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown delivery id for this webhook endpoint, or one of another Project or endpoint.',
  },
  event_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning:
      'Unknown event id, one of another Project, or one deleted after the events retention (docs/events.md).',
  },
  route_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'No such endpoint (check the SDK base URL: it must not include /v1 for the vendora SDK).',
  },
  attempt_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning:
      "No attempt with this id in the key's Project (GET /svc/v1/attempts/{id}); another Project's attempts answer the same.",
  },
  work_unit_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown Work Unit id, or one of another Project.',
  },
  run_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown Run id, or one of another Project.',
  },
  model_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'The model is not a configured model alias.',
  },
  resource_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning: 'Unknown file, batch or response id, or one of another Project.',
  },
  capture_not_found: {
    status: 404,
    vendora: 'not_found_error',
    vendorb: 'not_found_error',
    meaning:
      'No body capture for this attempt id: its Project does not capture, the capture expired or was dropped, or the attempt is unknown or of another Project.',
  },
  idempotency_conflict: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The Idempotency-Key was used for a different request, or the first request with it is still in flight.',
  },
  run_not_active: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning: 'The Run is closed or expired. Stop attaching calls to it.',
  },
  work_unit_closed: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning: 'The Work Unit is closed; no new Run can be created on it.',
  },
  outcome_revision_conflict: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'supersedes_outcome_id is absent while a head exists, or does not name the current head. Read it and resubmit.',
  },
  outcome_write_closed: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The head already has 20 revisions, or the 30-day window after the Work Unit was closed has passed.',
  },
  resource_conflict: {
    status: 409,
    vendora: 'invalid_request_error',
    vendorb: 'invalid_request_error',
    meaning:
      'The resource is in a state that does not allow this operation (for example DELETE of a response still owed, cancel of a finished one).',
  },
  governance_rate_limited: {
    status: 429,
    vendora: 'rate_limit_error',
    vendorb: 'rate_limit_error',
    meaning: 'The Project or key exceeded its governance rate limit. Honour Retry-After.',
  },
  rate_limited: {
    status: 429,
    vendora: 'rate_limit_error',
    vendorb: 'rate_limit_error',
    meaning:
      'The key or Project exceeded its inference rate limit (requests or tokens per minute; the message names it). Honour Retry-After.',
  },
  governance_resource_limit: {
    status: 429,
    vendora: 'rate_limit_error',
    vendorb: 'rate_limit_error',
    meaning: 'A resource limit is reached (32 Runs per Work Unit). Waiting does not clear it.',
  },
  upstream_error: {
    status: 502,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning:
      'The upstream answered with an error; status and type are the upstream error translated into this dialect.',
  },
  upstream_unavailable: {
    status: 502,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning:
      'No upstream could be reached (connect error, timeout, dropped connection) on any eligible target.',
  },
  upstream_timeout: {
    status: 504,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning: 'The upstream did not answer within the configured first-byte timeout.',
  },
  endpoint_not_served: {
    status: 501,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning: 'The endpoint exists in the contract but is not served: its only profile is withheld.',
  },
  governance_unavailable: {
    status: 503,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning: 'The governance store cannot be reached or timed out. Nothing was written; retry later.',
  },
  run_governance_unavailable: {
    status: 503,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning:
      'The ledger cannot be reached, so the model call was not admitted and nothing reached the upstream.',
  },
  rate_limits_unavailable: {
    status: 503,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning:
      'Redis, which holds the rate limits, cannot be reached and rate_limits.redis_on_unavailable is fail_closed: calls a limit applies to are refused. Nothing was reserved or sent; retry after Retry-After.',
  },
  object_store_unavailable: {
    status: 503,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning:
      'The object store (S3 bucket or local folder) cannot be reached, timed out, throttled or failed. Nothing was reserved or charged; retry after Retry-After.',
  },
  store_busy: {
    status: 429,
    vendora: 'rate_limit_error',
    vendorb: 'rate_limit_error',
    meaning:
      'Back-pressure: every store connection of this replica is busy and its wait queue is full or too slow. The database is healthy and nothing was written; retry after Retry-After.',
  },
  internal_error: {
    status: 500,
    vendora: 'api_error',
    vendorb: 'server_error',
    meaning: 'An unexpected error. The request id in the response identifies the log lines.',
  },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
