/**
 * The configuration file's schema (one YAML file). TypeBox gives the JSON Schema that validates the
 * file and the TypeScript type the rest of the code reads, so the two cannot drift.
 * docs/configuration.md documents every field with a complete example.
 */
import { type Static, Type as T, type TSchema } from '@sinclair/typebox';

const Id = (pattern: string, description: string) => T.String({ pattern, description });
const PositiveInteger = T.Integer({ minimum: 1 });
const NonNegativeInteger = T.Integer({ minimum: 0 });
const EnvName = T.String({ pattern: '^[A-Z_][A-Z0-9_]*$', description: 'name of an environment variable' });

export const SCOPES = [
  'work_unit:create',
  'run:create',
  'run:attach',
  'governance:read',
  'outcome:write',
  'inference',
  'keys:admin',
  'webhooks:admin',
  'captures:read',
] as const;
export type Scope = (typeof SCOPES)[number];

const OutcomeDefinitionSchema = T.Object(
  {
    id: Id('^odef_[A-Za-z0-9_-]{1,64}$', 'Outcome Definition id'),
    version: PositiveInteger,
    kind: T.Union([T.Literal('BOOLEAN'), T.Literal('CATEGORICAL')]),
    allowed_values: T.Optional(
      T.Array(T.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 64, uniqueItems: true }),
    ),
    enabled: T.Boolean({ default: true }),
  },
  { additionalProperties: false },
);

/** Spend caps in micro-USD; an absent cap does not apply (shared by Projects and the keys API). */
export const SpendCapsSchema = T.Object(
  {
    lifetime_micros_usd: T.Optional(NonNegativeInteger),
    day_micros_usd: T.Optional(NonNegativeInteger),
    month_micros_usd: T.Optional(NonNegativeInteger),
  },
  { additionalProperties: false },
);

/**
 * Inference rate limits (limits/inference-limits.ts): per minute, shared by every replica; an absent
 * limit does not apply (shared by Projects, configured keys and the keys API).
 */
export const InferenceLimitsSchema = T.Object(
  {
    requests_per_minute: T.Optional(T.Integer({ minimum: 1, maximum: 100_000_000 })),
    tokens_per_minute: T.Optional(T.Integer({ minimum: 1, maximum: 1_000_000_000_000 })),
  },
  { additionalProperties: false },
);

/**
 * A webhook endpoint declared in configuration (webhooks/configured-endpoints.ts): synced into the
 * store at start-up; its signing secret comes from an environment variable (a changed secret starts
 * a rotation overlap, like POST .../rotate-secret).
 */
const WebhookEndpointSchema = T.Object(
  {
    id: Id('^whe_[A-Za-z0-9_-]{1,64}$', 'webhook endpoint id'),
    url: T.String({ minLength: 1, maxLength: 2048 }),
    /** Event types delivered to it; absent: every type. */
    event_types: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1, uniqueItems: true })),
    /** Environment variable holding the signing secret (`whsec_` + at least 32 characters). */
    secret_env: EnvName,
    description: T.Optional(T.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** Fractions of a budget or cap at which an event fires once (docs/events.md); empty: none. */
const ThresholdsSchema = T.Array(T.Number({ exclusiveMinimum: 0, maximum: 1 }), {
  maxItems: 10,
  uniqueItems: true,
});

/** A Project's own thresholds; an absent list uses the top-level `events` one. */
const ProjectEventsSchema = T.Object(
  {
    run_budget_thresholds: T.Optional(ThresholdsSchema),
    cap_thresholds: T.Optional(ThresholdsSchema),
  },
  { additionalProperties: false },
);

/**
 * Body capture of a Project's model calls (capture/): off by default; when on, the request and the
 * response of every model call are kept sealed in the object store for `retention_hours`.
 */
export const CaptureSchema = T.Object(
  {
    enabled: T.Boolean({ default: false }),
    retention_hours: T.Integer({ minimum: 1, maximum: 8760, default: 168 }),
    /** Per body (request and response each): longer bodies are kept cut at this length and flagged truncated. */
    max_body_bytes: T.Integer({ minimum: 1, maximum: 64 * 1024 * 1024, default: 1024 * 1024 }),
  },
  { additionalProperties: false, default: {} },
);

const ProjectSchema = T.Object(
  {
    id: Id('^prj_[A-Za-z0-9_-]{1,64}$', 'Project id'),
    name: T.Optional(T.String({ maxLength: 200 })),
    runs: T.Object(
      {
        default_budget_micros_usd: PositiveInteger,
        max_budget_micros_usd: PositiveInteger,
        default_ttl_seconds: PositiveInteger,
        max_ttl_seconds: PositiveInteger,
      },
      { additionalProperties: false },
    ),
    rate_limit: T.Object(
      {
        requests_per_second: T.Number({ exclusiveMinimum: 0 }),
        burst: PositiveInteger,
      },
      { additionalProperties: false },
    ),
    outcome_definitions: T.Array(OutcomeDefinitionSchema, { default: [] }),
    /** Spend caps of the whole Project (micro-USD): lifetime and UTC calendar windows (money/spend-caps.ts). */
    caps: T.Optional(SpendCapsSchema),
    /** Requests and tokens per minute of the whole Project, every key together (model calls only). */
    inference_limits: T.Optional(InferenceLimitsSchema),
    /** Webhook endpoints of the Project declared in configuration (docs/events.md, Webhooks). */
    webhooks: T.Array(WebhookEndpointSchema, { default: [] }),
    /** Event thresholds of this Project (docs/events.md); absent lists use the top-level `events`. */
    events: T.Optional(ProjectEventsSchema),
    /** Request and response bodies of model calls kept sealed in the object store (docs/request-log.md). */
    capture: CaptureSchema,
  },
  { additionalProperties: false },
);

const KeySchema = T.Object(
  {
    id: Id('^key_[A-Za-z0-9_-]{1,64}$', 'Gateway Key id'),
    project: T.String(),
    scopes: T.Array(T.Union(SCOPES.map((scope) => T.Literal(scope))), { minItems: 1, uniqueItems: true }),
    secret_env: EnvName,
    label: T.Optional(T.String({ maxLength: 200 })),
    /** Requests and tokens per minute of this key (model calls only). */
    inference_limits: T.Optional(InferenceLimitsSchema),
  },
  { additionalProperties: false },
);

/** One object for every scheme (flat, so errors stay readable); check.ts enforces what each scheme needs. */
const AuthSchema = T.Object(
  {
    scheme: T.Union([
      T.Literal('none'),
      T.Literal('x-api-key'),
      T.Literal('bearer'),
      T.Literal('header'),
      T.Literal('sigv4'),
    ]),
    secret_env: T.Optional(EnvName),
    header: T.Optional(T.String({ pattern: '^[A-Za-z0-9-]+$' })),
    service: T.Optional(T.String({ minLength: 1 })),
    region: T.Optional(T.String({ minLength: 1 })),
    access_key_id_env: T.Optional(EnvName),
    secret_access_key_env: T.Optional(EnvName),
    session_token_env: T.Optional(EnvName),
  },
  { additionalProperties: false },
);

/**
 * LEGACY prices of the media endpoints on a connection (micro-USD). Replaced by media aliases (a
 * `models` entry with `endpoint:`); check.ts refuses it with the aliases to write instead.
 */
const ResourcePricesSchema = T.Object(
  {
    speech_per_million_characters_micros: T.Optional(NonNegativeInteger),
    transcription_per_minute_micros: T.Optional(NonNegativeInteger),
    /** Reservation bound of one transcription (its duration is unknown before the upstream answers). */
    transcription_max_seconds: T.Integer({ minimum: 1, default: 3600 }),
    image_micros: T.Optional(NonNegativeInteger),
    moderation_request_micros: T.Optional(NonNegativeInteger),
  },
  { additionalProperties: false },
);

const ConnectionSchema = T.Object(
  {
    name: T.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,63}$' }),
    profile: T.String(),
    /** `${simulator}` stands for the in-process simulator's URL (quick start), e.g. `${simulator}/v1`. */
    base_url: T.String({ pattern: '^(https?://|\\$\\{simulator\\})' }),
    auth: AuthSchema,
    timeouts: T.Object(
      {
        connect_ms: PositiveInteger,
        first_byte_ms: PositiveInteger,
        idle_ms: PositiveInteger,
      },
      { additionalProperties: false, default: { connect_ms: 5000, first_byte_ms: 60000, idle_ms: 60000 } },
    ),
    provider_executed_tools: T.Boolean({ default: false }),
    beta_tokens: T.Array(T.String({ minLength: 1 }), { default: [] }),
    max_connections: T.Integer({ minimum: 1, default: 128 }),
    resource_prices: T.Optional(ResourcePricesSchema),
  },
  { additionalProperties: false },
);

const PriceSchema = T.Object(
  {
    input_per_mtok_micros: NonNegativeInteger,
    output_per_mtok_micros: NonNegativeInteger,
    cache_write_per_mtok_micros: T.Integer({ minimum: 0, default: 0 }),
    cache_read_per_mtok_micros: T.Integer({ minimum: 0, default: 0 }),
    request_fee_micros: T.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

const TokenTarget = T.Object(
  {
    connection: T.String(),
    model: T.String({ minLength: 1 }),
    price: PriceSchema,
  },
  { additionalProperties: false },
);

const AliasName = T.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$' });

/** A messages alias (the default): served on /v1/messages, count_tokens, /v1/responses and batches. */
const MessagesModelSchema = T.Object(
  {
    alias: AliasName,
    endpoint: T.Optional(T.Literal('messages')),
    targets: T.Array(TokenTarget, { minItems: 1 }),
    /**
     * The output bound of a POST /v1/chat/completions without max_tokens or max_completion_tokens:
     * the reservation is priced at it and every target is asked to honour it.
     */
    default_max_tokens: T.Integer({ minimum: 1, default: 4096 }),
  },
  { additionalProperties: false },
);

/**
 * Media aliases (issue 15): the model of a speech, transcription, image or moderation request is an
 * alias whose targets name a connection, the upstream model sent there and that model's prices in
 * the unit the endpoint bills. money/resource-pricing.ts prices them.
 */
const SpeechPriceSchema = T.Object(
  { per_million_characters_micros: NonNegativeInteger },
  { additionalProperties: false },
);
const TranscriptionPriceSchema = T.Object(
  {
    /** Exactly one of per_minute_micros and per_second_micros (check.ts). */
    per_minute_micros: T.Optional(NonNegativeInteger),
    per_second_micros: T.Optional(NonNegativeInteger),
    /** Reservation bound of one transcription (its duration is unknown before the upstream answers). */
    max_seconds: T.Integer({ minimum: 1, default: 3600 }),
  },
  { additionalProperties: false },
);
export const IMAGE_QUALITIES = ['standard', 'hd', 'low', 'medium', 'high'] as const;
const ImageSize = T.String({ pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' });
const ImagePriceSchema = T.Object(
  {
    /** One row per priced size and quality; a row without quality prices every quality of its size. */
    per_image: T.Array(
      T.Object(
        {
          size: ImageSize,
          quality: T.Optional(T.Union(IMAGE_QUALITIES.map((quality) => T.Literal(quality)))),
          micros: NonNegativeInteger,
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
    /** What the upstream model uses when a request omits size or quality (absent: the dearest row). */
    default_size: T.Optional(ImageSize),
    default_quality: T.Optional(T.Union(IMAGE_QUALITIES.map((quality) => T.Literal(quality)))),
  },
  { additionalProperties: false },
);
const ModerationPriceSchema = T.Object(
  { per_request_micros: NonNegativeInteger },
  { additionalProperties: false },
);
/** Embeddings bill input tokens only (the usage the upstream reports), plus an optional fee per request. */
const EmbeddingsPriceSchema = T.Object(
  {
    input_per_mtok_micros: NonNegativeInteger,
    request_fee_micros: T.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

function mediaModel<E extends string, P extends TSchema>(endpoint: E, price: P) {
  return T.Object(
    {
      alias: AliasName,
      endpoint: T.Literal(endpoint),
      targets: T.Array(
        T.Object(
          { connection: T.String(), model: T.String({ minLength: 1 }), price },
          { additionalProperties: false },
        ),
        { minItems: 1 },
      ),
    },
    { additionalProperties: false },
  );
}

export const SpeechModelSchema = mediaModel('audio.speech', SpeechPriceSchema);
export const TranscriptionModelSchema = mediaModel('audio.transcriptions', TranscriptionPriceSchema);
export const ImagesModelSchema = mediaModel('images.generations', ImagePriceSchema);
export const ModerationModelSchema = mediaModel('moderations', ModerationPriceSchema);
export const EmbeddingsModelSchema = mediaModel('embeddings', EmbeddingsPriceSchema);

/** The schema of one `models` entry, chosen by its `endpoint` (config/model-entries.ts validates by it). */
export const MODEL_SCHEMAS = {
  messages: MessagesModelSchema,
  'audio.speech': SpeechModelSchema,
  'audio.transcriptions': TranscriptionModelSchema,
  'images.generations': ImagesModelSchema,
  moderations: ModerationModelSchema,
  embeddings: EmbeddingsModelSchema,
} as const;
export type ModelEndpoint = keyof typeof MODEL_SCHEMAS;
export const MODEL_ENDPOINTS = Object.keys(MODEL_SCHEMAS) as ModelEndpoint[];

const ModelSchema = T.Union(Object.values(MODEL_SCHEMAS));

/** objects.s3: an S3-compatible bucket; credentials come from the named environment variables. */
const S3Schema = T.Object(
  {
    bucket: T.String({ minLength: 3, maxLength: 63 }),
    /** e.g. http://minio:9000; absent: AWS S3 of the region. */
    endpoint: T.Optional(T.String({ pattern: '^https?://' })),
    region: T.String({ minLength: 1, default: 'us-east-1' }),
    prefix: T.String({ pattern: '^([A-Za-z0-9_.-]+/)*$', default: '' }),
    force_path_style: T.Boolean({ default: false }),
    access_key_id_env: T.Optional(EnvName),
    secret_access_key_env: T.Optional(EnvName),
    session_token_env: T.Optional(EnvName),
    part_size_bytes: T.Integer({ minimum: 5 * 1024 * 1024, default: 8 * 1024 * 1024 }),
    checksum_algorithm: T.Union(
      [T.Literal('CRC32'), T.Literal('CRC32C'), T.Literal('SHA1'), T.Literal('SHA256')],
      {
        default: 'CRC32',
      },
    ),
  },
  { additionalProperties: false },
);

export const ConfigSchema = T.Object(
  {
    listen: T.Object(
      {
        host: T.String({ default: '127.0.0.1' }),
        port: T.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        /** Client socket bounds (src/http/socket-limits.ts); responses (streams) are never cut by them. */
        timeouts: T.Object(
          {
            headers_ms: T.Integer({ minimum: 100, default: 20_000 }),
            request_ms: T.Integer({ minimum: 100, default: 600_000 }),
            keep_alive_ms: T.Integer({ minimum: 100, default: 72_000 }),
            idle_ms: T.Integer({ minimum: 100, default: 30_000 }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    store: T.Object(
      {
        kind: T.Union([T.Literal('sqlite'), T.Literal('postgres')], { default: 'sqlite' }),
        sqlite: T.Object(
          {
            path: T.String({ default: 'data/svc.db' }),
            synchronous: T.Union([T.Literal('normal'), T.Literal('full')], { default: 'normal' }),
          },
          { additionalProperties: false, default: {} },
        ),
        postgres: T.Object(
          {
            url_env: T.String({ pattern: '^[A-Z_][A-Z0-9_]*$', default: 'SVC_DATABASE_URL' }),
            pool_max: T.Integer({ minimum: 1, default: 10 }),
            connect_timeout_ms: T.Integer({ minimum: 100, default: 2000 }),
            statement_timeout_ms: T.Integer({ minimum: 100, default: 5000 }),
          },
          { additionalProperties: false, default: {} },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    data_dir: T.String({ default: 'data' }),
    objects: T.Object(
      {
        /** local: a folder (objects.path); s3: an S3-compatible bucket shared by every replica. */
        kind: T.Union([T.Literal('local'), T.Literal('s3')], { default: 'local' }),
        s3: T.Optional(S3Schema),
        path: T.Optional(T.String()),
        sealing_key_env: T.Optional(EnvName),
        /** Quick start only: a key file created (0600) on first start; production uses sealing_key_env. */
        sealing_key_file: T.Optional(T.String({ minLength: 1 })),
        max_upload_bytes: T.Integer({ minimum: 1, default: 100 * 1024 * 1024 }),
        sweep_interval_seconds: T.Integer({ minimum: 1, default: 600 }),
        orphan_grace_seconds: T.Integer({ minimum: 60, default: 3600 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Where token buckets live: the store (shared by every replica on it) or Redis (optional). */
    rate_limits: T.Object(
      {
        kind: T.Union([T.Literal('store'), T.Literal('redis')], { default: 'store' }),
        redis_url_env: T.String({ pattern: '^[A-Z_][A-Z0-9_]*$', default: 'SVC_REDIS_URL' }),
        redis_key_prefix: T.String({ default: 'svc:rl:' }),
        /** While Redis is unreachable: the store's buckets (shared, exact) or refuse limited calls (503). */
        redis_on_unavailable: T.Union([T.Literal('store'), T.Literal('fail_closed')], { default: 'store' }),
        /** While Redis is unreachable, one PING per this many ms on average (jittered) checks it is back. */
        redis_probe_interval_ms: T.Integer({ minimum: 100, maximum: 60_000, default: 1000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    limits: T.Object(
      {
        messages_body_bytes: T.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
        batch_result_ceiling_bytes: T.Integer({ minimum: 1024, default: 64 * 1024 * 1024 }),
      },
      { additionalProperties: false, default: {} },
    ),
    auth: T.Object(
      {
        /** How long a replica trusts a looked-up Gateway Key: the bound on revocation taking effect everywhere. */
        key_cache_ms: T.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    idempotency: T.Object(
      { retention_hours: T.Integer({ minimum: 1, default: 24 }) },
      { additionalProperties: false, default: {} },
    ),
    ledger: T.Object(
      {
        lease_seconds: T.Integer({ minimum: 5, default: 900 }),
        reaper_interval_seconds: T.Integer({ minimum: 1, default: 30 }),
        image_input_bound_tokens: T.Integer({ minimum: 0, default: 10_000 }),
        document_input_bound_tokens: T.Integer({ minimum: 0, default: 200_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    logging: T.Object(
      {
        level: T.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => T.Literal(level)),
          { default: 'info' },
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    metrics: T.Object(
      {
        /** Prometheus metrics: GET /metrics on the gateway's port (a key with governance:read). */
        enabled: T.Boolean({ default: true }),
        /** Also serve GET /metrics unauthenticated on this separate address (what Prometheus scrapes). */
        listen: T.Optional(
          T.Object(
            { host: T.String({ default: '127.0.0.1' }), port: T.Integer({ minimum: 0, maximum: 65535 }) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    tracing: T.Object(
      {
        /** OTLP/HTTP traces endpoint (for example http://otel-collector:4318/v1/traces); absent: tracing off. */
        endpoint: T.Optional(T.String({ pattern: '^https?://' })),
        service_name: T.String({ minLength: 1, default: 'svc-gateway' }),
        sample_ratio: T.Number({ minimum: 0, maximum: 1, default: 1 }),
      },
      { additionalProperties: false, default: {} },
    ),
    projects: T.Array(ProjectSchema, { minItems: 1 }),
    keys: T.Array(KeySchema, { default: [] }),
    connections: T.Array(ConnectionSchema, { default: [] }),
    models: T.Array(ModelSchema, { default: [] }),
    jobs: T.Object(
      {
        /** How often an idle worker looks for due jobs. */
        poll_interval_ms: T.Integer({ minimum: 1, default: 500 }),
        /** Lease of a claimed job; renewed at a third of it while the job runs. */
        lease_ms: T.Integer({ minimum: 100, default: 60_000 }),
        concurrency: T.Integer({ minimum: 1, default: 4 }),
        /** Delay between two status polls of an upstream batch. */
        batch_poll_interval_ms: T.Integer({ minimum: 1, default: 30_000 }),
        /** How often expired batches and reapable deferred responses are removed. */
        sweep_interval_ms: T.Integer({ minimum: 1, default: 60_000 }),
      },
      { additionalProperties: false, default: {} },
    ),
    /** Webhook delivery (webhooks/dispatcher.ts; docs/events.md, Webhooks). */
    webhooks: T.Object(
      {
        /** Allow endpoint URLs that resolve to loopback, private, link-local and other internal addresses. */
        allow_private_networks: T.Boolean({ default: false }),
        /** Bound on one delivery: connecting, sending and receiving the answer's headers and body. */
        timeout_ms: T.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
        /** How long a delivery is retried before it is marked failed (default 72 h). */
        retry_window_seconds: T.Integer({ minimum: 1, default: 259_200 }),
        /** Exponential backoff with full jitter: the n-th retry waits random(0, min(cap, base x 2^(n-1))). */
        backoff_base_ms: T.Integer({ minimum: 1, default: 10_000 }),
        backoff_cap_ms: T.Integer({ minimum: 1, default: 3_600_000 }),
        /** Deliveries in flight to one endpoint, every replica together. */
        max_concurrent_per_endpoint: T.Integer({ minimum: 1, maximum: 64, default: 4 }),
        /** Deliveries in flight from one replica, every endpoint together. */
        max_concurrent_deliveries: T.Integer({ minimum: 1, maximum: 1024, default: 32 }),
        /** How often an idle dispatcher looks for new events and due deliveries. */
        poll_interval_ms: T.Integer({ minimum: 10, default: 1000 }),
        /** After a rotation, the previous secret keeps signing (a second v1=) for this long. */
        rotation_overlap_seconds: T.Integer({ minimum: 0, default: 86_400 }),
        /** Endpoints one Project may have (API and configuration together). */
        max_endpoints_per_project: T.Integer({ minimum: 1, maximum: 1000, default: 20 }),
        /** Attempt history rows kept per delivery (the newest). */
        attempt_history: T.Integer({ minimum: 1, maximum: 100, default: 10 }),
      },
      { additionalProperties: false, default: {} },
    ),
    events: T.Object(
      {
        /** Fractions of a Run's budget (committed + reserved) at which run.budget_threshold fires once. */
        run_budget_thresholds: T.Array(T.Number({ exclusiveMinimum: 0, maximum: 1 }), {
          maxItems: 10,
          uniqueItems: true,
          default: [0.5, 0.8, 1],
        }),
        /** Fractions of every key and Project spend cap window at which *.cap_threshold fires once. */
        cap_thresholds: T.Array(T.Number({ exclusiveMinimum: 0, maximum: 1 }), {
          maxItems: 10,
          uniqueItems: true,
          default: [0.5, 0.8, 1],
        }),
        /** Events older than this are deleted by the events sweep (unless a delivery still waits for them). */
        retention_days: T.Integer({ minimum: 1, maximum: 3650, default: 30 }),
        /** How often one replica notes expired Runs and keys and deletes events past retention. */
        sweep_interval_seconds: T.Integer({ minimum: 1, default: 60 }),
      },
      { additionalProperties: false, default: {} },
    ),
    reports: T.Object(
      {
        /**
         * PostgreSQL: how often one replica folds the audit trail and the refusals settled since the
         * last pass into the hourly rollups (a recurring job), so a report seldom folds much itself.
         * The SQLite store folds its own every second.
         */
        fold_interval_seconds: T.Integer({ minimum: 1, default: 60 }),
      },
      { additionalProperties: false, default: {} },
    ),
    responses: T.Object(
      {
        /** Used when a POST /v1/responses omits max_output_tokens; absent: the field is required. */
        default_max_output_tokens: T.Optional(T.Integer({ minimum: 1 })),
        /** Retry-After (seconds) answered while a deferred response is queued or running. */
        retry_after_seconds: T.Integer({ minimum: 1, default: 2 }),
      },
      { additionalProperties: false, default: {} },
    ),
    endpoints: T.Object(
      {
        default_connections: T.Record(T.String(), T.String(), { default: {} }),
      },
      { additionalProperties: false, default: {} },
    ),
    simulator: T.Optional(
      T.Object(
        { enabled: T.Boolean(), port: T.Integer({ minimum: 0, maximum: 65535 }) },
        { additionalProperties: false },
      ),
    ),
    quickstart: T.Optional(
      T.Object({ key_file: T.String(), project: T.String() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ProjectConfig = Config['projects'][number];
export type ConnectionConfig = Config['connections'][number];
export type AnyModelConfig = Config['models'][number];
/** A messages alias (token prices). */
export type ModelConfig = Static<typeof MessagesModelSchema>;
export type TargetConfig = ModelConfig['targets'][number];
export type PriceConfig = TargetConfig['price'];
export type SpeechPriceConfig = Static<typeof SpeechPriceSchema>;
export type TranscriptionPriceConfig = Static<typeof TranscriptionPriceSchema>;
export type ImagePriceConfig = Static<typeof ImagePriceSchema>;
export type ModerationPriceConfig = Static<typeof ModerationPriceSchema>;
export type EmbeddingsPriceConfig = Static<typeof EmbeddingsPriceSchema>;
export type MediaModelConfig = Exclude<AnyModelConfig, ModelConfig>;
export type MediaEndpoint = MediaModelConfig['endpoint'];

export function isMessagesModel(model: AnyModelConfig): model is ModelConfig {
  return model.endpoint === undefined || model.endpoint === 'messages';
}

/** The messages aliases of a configuration. */
export function messagesModels(config: Config): ModelConfig[] {
  return config.models.filter(isMessagesModel);
}
export type AuthConfig = ConnectionConfig['auth'];
export type ResourcePricesConfig = NonNullable<ConnectionConfig['resource_prices']>;
