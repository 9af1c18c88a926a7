/**
 * Every metric the gateway exports, as data: its Prometheus name, type, labels and meaning.
 * metrics.ts builds the prom-client instruments from these rows and docs/observability.md is
 * generated from them (checked by test/generated-docs.test.ts), so the two cannot drift.
 *
 * Names follow the OpenTelemetry GenAI semantic conventions where one exists, translated the way
 * the OpenTelemetry-to-Prometheus mapping does it (dots become underscores, the unit `s` becomes a
 * `_seconds` suffix; `{token}` is an annotation and adds nothing). Our own metrics start with `svc_`.
 * Every label is bounded by configuration or by a closed list in the code: never a Run, Work Unit,
 * attempt or request id.
 */

import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';
import { ERROR_TYPES } from './error-types.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  name: string;
  type: MetricType;
  help: string;
  labels: readonly string[];
  /** The OpenTelemetry semantic-convention name this metric carries, when there is one. */
  semconv?: string;
  buckets?: readonly number[];
}

/** gen_ai labels; `connection` is ours (the configured connection the attempt went to). */
const GEN_AI_LABELS = [
  'gen_ai_operation_name',
  'gen_ai_provider_name',
  'gen_ai_request_model',
  'gen_ai_response_model',
  'error_type',
  'connection',
] as const;

export const METRIC_DEFINITIONS = [
  {
    name: 'gen_ai_client_operation_duration_seconds',
    type: 'histogram',
    help: 'Duration of upstream attempts, from sending the request to settlement (seconds).',
    labels: GEN_AI_LABELS,
    semconv: 'gen_ai.client.operation.duration',
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  },
  {
    name: 'gen_ai_client_token_usage',
    type: 'histogram',
    help: 'Tokens per upstream attempt that reported usage, by gen_ai_token_type (input includes cache reads and writes).',
    labels: [
      'gen_ai_operation_name',
      'gen_ai_provider_name',
      'gen_ai_request_model',
      'gen_ai_response_model',
      'gen_ai_token_type',
      'connection',
    ],
    semconv: 'gen_ai.client.token.usage',
    buckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  },
  {
    name: 'gen_ai_client_operation_time_to_first_chunk_seconds',
    type: 'histogram',
    help: 'Streamed attempts: time from sending the request to the first chunk of the answer (seconds).',
    labels: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'connection'],
    semconv: 'gen_ai.client.operation.time_to_first_chunk',
    buckets: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  },
  {
    name: 'svc_cost_micros_usd_total',
    type: 'counter',
    help: 'Committed cost in micro-USD (the audit trail committed amount: actual cost, or the whole reservation for unknown attempts).',
    labels: ['project', 'alias', 'connection'],
  },
  {
    name: 'svc_reservations_admitted_total',
    type: 'counter',
    help: 'Ledger reservations admitted (an upstream attempt started).',
    labels: ['project', 'alias', 'connection', 'endpoint'],
  },
  {
    name: 'svc_reservations_refused_total',
    type: 'counter',
    help: 'Ledger reservations refused before any upstream call, by reason.',
    labels: ['project', 'alias', 'endpoint', 'reason'],
  },
  {
    name: 'svc_settlements_total',
    type: 'counter',
    help: `Settled attempts by settlement outcome (${SETTLEMENT_OUTCOMES.join(', ')}).`,
    labels: ['project', 'alias', 'connection', 'outcome'],
  },
  {
    name: 'svc_unknown_attempts_total',
    type: 'counter',
    help: 'Attempts settled unknown (sent, cost unknowable: the whole reservation is committed).',
    labels: ['project', 'alias', 'connection'],
  },
  {
    name: 'svc_lease_expired_attempts_total',
    type: 'counter',
    help: 'Attempts committed in full by the reaper because their lease passed unsettled (outcome lease_expired).',
    labels: [],
  },
  {
    name: 'svc_fallbacks_total',
    type: 'counter',
    help: "Portable-mode moves to the next target after a retryable failure, by the failed attempt's error class.",
    labels: ['alias', 'from_connection', 'to_connection', 'error_type'],
  },
  {
    name: 'svc_routed_away_total',
    type: 'counter',
    help: 'Targets skipped by portable routing (not eligible for the request), by the first reason code: unsupported_field, no_stream_primitive, value_rule, cannot_carry, provider_tools.',
    labels: ['alias', 'connection', 'reason'],
  },
  {
    name: 'svc_upstream_errors_total',
    type: 'counter',
    help: `Upstream attempts that failed, by connection and error class (${Object.keys(ERROR_TYPES).join(', ')}).`,
    labels: ['connection', 'error_type'],
  },
  {
    name: 'svc_open_streams',
    type: 'gauge',
    help: 'Streamed upstream attempts in progress.',
    labels: ['connection'],
  },
  {
    name: 'svc_store_transaction_duration_seconds',
    type: 'histogram',
    help: 'Duration of store operations (one transaction each), by port operation, including waiting for a pooled connection.',
    labels: ['operation', 'result'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  },
  {
    name: 'svc_store_pool_connections',
    type: 'gauge',
    help: 'PostgreSQL connections by pool (main; settle: settlements and lease renewals) and state (total open, idle, waiting clients, max), read at scrape time.',
    labels: ['pool', 'state'],
  },
  {
    name: 'svc_rate_limit_refusals_total',
    type: 'counter',
    help: 'Requests refused by a rate limit, by surface (governance, inference) and by the limit that refused (a fixed list: RATE_LIMITS in src/limits/rate-limit-scope.ts).',
    labels: ['project', 'surface', 'limit'],
  },
  {
    name: 'svc_rate_limits_redis_unavailable',
    type: 'gauge',
    help: "With rate_limits.kind redis: 1 while Redis is unreachable from this replica (an outage episode: the limits use the store's buckets, or refuse with fail_closed), else 0. Read at scrape time.",
    labels: [],
  },
  {
    name: 'svc_rate_limits_redis_fallback_total',
    type: 'counter',
    help: "With rate_limits.kind redis: limiter operations answered without Redis during outage episodes, by outcome (store: taken from or given back to the store's buckets; refused: fail_closed).",
    labels: ['outcome'],
  },
  {
    name: 'svc_background_jobs_total',
    type: 'counter',
    help: 'Background job transitions by kind and state (enqueued, claimed, completed, released).',
    labels: ['kind', 'state'],
  },
  {
    name: 'svc_background_jobs_running',
    type: 'gauge',
    help: 'Background jobs this process has claimed and not yet completed or released.',
    labels: ['kind'],
  },
  {
    name: 'svc_log_write_errors_total',
    type: 'counter',
    help: 'Log writes to standard output that failed (a full volume, a closed pipe: the line is dropped) and lines dropped past the 64 MiB an unread pipe may hold; standard error says when an episode begins and ends.',
    labels: [],
  },
  {
    name: 'svc_captures_written_total',
    type: 'counter',
    help: 'Body captures of model calls sealed into the object store (Projects with capture on).',
    labels: [],
  },
  {
    name: 'svc_capture_dropped_total',
    type: 'counter',
    help: 'Body captures not kept, by reason: queue_full (the background queue was full), object_store (the write failed), shutdown (still queued when the process stopped). The call itself was served.',
    labels: ['reason'],
  },
  {
    name: 'svc_http_requests_total',
    type: 'counter',
    help: 'Inbound HTTP requests by route pattern, method and status class.',
    labels: ['route', 'method', 'status_class'],
  },
  {
    name: 'svc_webhook_outbox_depth',
    type: 'gauge',
    help: 'Webhook deliveries pending or in flight, every Project and replica together (read from the store by this replica every few seconds).',
    labels: [],
  },
  {
    name: 'svc_webhook_delivery_attempts_total',
    type: 'counter',
    help: 'Webhook delivery attempts made by this replica, by result: success (2xx), http_error (any other status), timeout, network_error, refused_address.',
    labels: ['result'],
  },
  {
    name: 'svc_webhook_deliveries_total',
    type: 'counter',
    help: 'Webhook deliveries this replica finished, by result: succeeded, or failed (the retry window passed without a 2xx).',
    labels: ['result'],
  },
  {
    name: 'svc_webhook_delivery_duration_seconds',
    type: 'histogram',
    help: 'Duration of webhook delivery attempts, from sending to the complete answer or the failure (seconds), by result.',
    labels: ['result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
] as const satisfies readonly MetricDefinition[];

export type MetricName = (typeof METRIC_DEFINITIONS)[number]['name'];
