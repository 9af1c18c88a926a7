/**
 * The configuration file's schema (one YAML file). TypeBox gives the JSON Schema that validates the
 * file and the TypeScript type the rest of the code reads, so the two cannot drift.
 * docs/configuration.md documents every field with a complete example.
 */
import { type Static, Type as T } from '@sinclair/typebox';

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
    /** Spend caps of the whole Project (micro-USD): lifetime and UTC calendar windows (ledger/spend-caps.ts). */
    caps: T.Optional(SpendCapsSchema),
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
 * Prices of the experimental side endpoints on a chat-embeddings connection (micro-USD). An
 * endpoint whose price is absent is not served on that connection (501 endpoint_not_served).
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
    base_url: T.String({ pattern: '^https?://' }),
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

const ModelSchema = T.Object(
  {
    alias: T.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$' }),
    targets: T.Array(
      T.Object(
        {
          connection: T.String(),
          model: T.String({ minLength: 1 }),
          price: PriceSchema,
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
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
export type ModelConfig = Config['models'][number];
export type TargetConfig = ModelConfig['targets'][number];
export type PriceConfig = TargetConfig['price'];
export type AuthConfig = ConnectionConfig['auth'];
export type ResourcePricesConfig = NonNullable<ConnectionConfig['resource_prices']>;
