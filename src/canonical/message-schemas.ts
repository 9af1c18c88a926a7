/**
 * Schemas of the Messages request pieces, each compiled on first use.
 *
 * The walk in validate-messages.ts dispatches by hand on what needs a mode decision (top-level
 * keys, message roles, block and tool types) and hands each leaf object to one of these compiled
 * validators, so every error carries an exact path and Ajv never explores a large union.
 * Blocks and tools come in two variants: `portable` (only the canonical members, unknown members
 * refused) and `native` (the same required shape, extra members forwarded verbatim).
 */
import { Type as T, type TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';

/** Cap on max_tokens: far above any model's output limit, low enough for safe integer pricing. */
export const MAX_TOKENS_LIMIT = 2_147_483_647;
/** Upstream accepts up to 100,000 messages. */
export const MAX_MESSAGES = 100_000;
export const MAX_STOP_SEQUENCES = 64;
export const MIN_THINKING_BUDGET = 1024;
/** top_k bound: a 32-bit signed integer, what the upstream wires carry (1e300 is an "integer" to JSON Schema). */
export const MAX_TOP_K = 2_147_483_647;

// Compiling every validator at load cost ~35 MB of resident memory for the process's lifetime (the
// compiles' garbage grew the V8 heap before the first request) while a deployment uses a few of
// them; each is compiled the first time a request needs it instead (docs/performance.md).
let ajvInstance: Ajv | undefined;
const ajv = (): Ajv => (ajvInstance ??= newAjv());

const newAjv = (): Ajv =>
  new Ajv({
    allErrors: false,
    strict: false,
    coerceTypes: false,
    useDefaults: false,
    discriminator: true,
    // Errors carry their schema: used to list the allowed values of a discriminator. Costs nothing on success.
    verbose: true,
  });

const NonEmpty = T.String({ minLength: 1 });
const AnyObject = T.Object({}, { additionalProperties: true });

function nullable(schema: TSchema): TSchema {
  return T.Union([schema, T.Null()]);
}

/** A string enum as one `enum` keyword (one clean error) rather than a union of literals. */
function oneOfStrings<const V extends readonly string[]>(values: V): TSchema {
  return T.Unsafe<V[number]>({ type: 'string', enum: [...values] });
}

/**
 * A union selected by `type` (Ajv reports the errors of the selected branch only). Also used with
 * one branch so that a wrong `type` is reported before the members that type would require.
 */
function tagged(branches: TSchema[]): TSchema {
  return T.Unsafe({
    type: 'object',
    required: ['type'],
    discriminator: { propertyName: 'type' },
    oneOf: branches,
  });
}

export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

function blockSchemas(open: boolean) {
  const object = (properties: Record<string, TSchema>) =>
    T.Object(properties, { additionalProperties: open });
  const CacheControl = T.Optional(
    nullable(
      tagged([
        object({ type: T.Literal('ephemeral'), ttl: T.Optional(oneOfStrings(['5m', '1h'] as const)) }),
      ]),
    ),
  );
  const CitationsToggle = T.Optional(nullable(object({ enabled: T.Optional(T.Boolean()) })));

  const text = object({
    type: T.Literal('text'),
    text: T.String(),
    citations: T.Optional(nullable(T.Array(T.Object({ type: NonEmpty }, { additionalProperties: true })))),
    cache_control: CacheControl,
  });
  const image = object({
    type: T.Literal('image'),
    source: tagged([
      object({ type: T.Literal('base64'), media_type: oneOfStrings(IMAGE_MEDIA_TYPES), data: T.String() }),
      object({ type: T.Literal('url'), url: NonEmpty }),
      object({ type: T.Literal('file'), file_id: NonEmpty }),
    ]),
    cache_control: CacheControl,
  });
  const document = object({
    type: T.Literal('document'),
    source: tagged([
      object({ type: T.Literal('base64'), media_type: T.Literal('application/pdf'), data: T.String() }),
      object({ type: T.Literal('text'), media_type: T.Literal('text/plain'), data: T.String() }),
      object({ type: T.Literal('content'), content: T.Union([T.String(), T.Array(tagged([text, image]))]) }),
      object({ type: T.Literal('url'), url: NonEmpty }),
      object({ type: T.Literal('file'), file_id: NonEmpty }),
    ]),
    title: T.Optional(nullable(T.String())),
    context: T.Optional(nullable(T.String())),
    citations: CitationsToggle,
    cache_control: CacheControl,
  });
  const search_result = object({
    type: T.Literal('search_result'),
    source: T.String(),
    title: T.String(),
    content: T.Array(tagged([text])),
    citations: CitationsToggle,
    cache_control: CacheControl,
  });
  const tool_use = object({
    type: T.Literal('tool_use'),
    id: NonEmpty,
    name: NonEmpty,
    input: AnyObject,
    cache_control: CacheControl,
  });
  // Nested content items are checked one by one by the walk (their types need a mode decision).
  const tool_result = object({
    type: T.Literal('tool_result'),
    tool_use_id: NonEmpty,
    content: T.Optional(
      T.Union([T.String(), T.Array(T.Object({ type: T.String() }, { additionalProperties: true }))]),
    ),
    is_error: T.Optional(T.Boolean()),
    cache_control: CacheControl,
  });
  const thinking = object({ type: T.Literal('thinking'), thinking: T.String(), signature: T.String() });
  const redacted_thinking = object({ type: T.Literal('redacted_thinking'), data: T.String() });
  return { text, image, document, search_result, tool_use, tool_result, thinking, redacted_thinking };
}

/** Blocks only native mode carries: their identifying fields are checked, the rest is forwarded verbatim. */
function nativeOnlyBlockSchemas() {
  const open = (properties: Record<string, TSchema>) => T.Object(properties, { additionalProperties: true });
  const serverToolResult = open({ type: NonEmpty, tool_use_id: NonEmpty, content: T.Unknown() });
  return {
    server_tool_use: open({ type: NonEmpty, id: NonEmpty, name: NonEmpty, input: AnyObject }),
    web_search_tool_result: serverToolResult,
    web_fetch_tool_result: serverToolResult,
    code_execution_tool_result: serverToolResult,
    bash_code_execution_tool_result: serverToolResult,
    text_editor_code_execution_tool_result: serverToolResult,
    tool_search_tool_result: serverToolResult,
    container_upload: open({ type: NonEmpty, file_id: NonEmpty }),
    video: open({ type: NonEmpty, source: AnyObject }),
    /** Only inside tool_result content. */
    tool_reference: open({ type: NonEmpty, tool_name: NonEmpty }),
  };
}

function toolSchemas(open: boolean) {
  const custom = T.Object(
    {
      type: T.Optional(T.Literal('custom')),
      name: T.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$' }),
      description: T.Optional(T.String()),
      input_schema: T.Object({ type: T.Literal('object') }, { additionalProperties: true }),
      strict: T.Optional(T.Boolean()),
      cache_control: T.Optional(
        nullable(
          tagged([
            T.Object(
              { type: T.Literal('ephemeral'), ttl: T.Optional(oneOfStrings(['5m', '1h'] as const)) },
              { additionalProperties: open },
            ),
          ]),
        ),
      ),
    },
    { additionalProperties: open },
  );
  return { custom };
}

/** Vendora-defined tools (native mode only): `type` and `name` checked, configuration forwarded verbatim. */
const DefinedTool = T.Object({ type: NonEmpty, name: NonEmpty }, { additionalProperties: true });

const ToolChoice = tagged([
  T.Object(
    { type: T.Literal('auto'), disable_parallel_tool_use: T.Optional(T.Boolean()) },
    { additionalProperties: false },
  ),
  T.Object(
    { type: T.Literal('any'), disable_parallel_tool_use: T.Optional(T.Boolean()) },
    { additionalProperties: false },
  ),
  T.Object(
    { type: T.Literal('tool'), name: NonEmpty, disable_parallel_tool_use: T.Optional(T.Boolean()) },
    { additionalProperties: false },
  ),
  T.Object({ type: T.Literal('none') }, { additionalProperties: false }),
]);

const ThinkingDisplay = T.Optional(oneOfStrings(['summarized', 'omitted'] as const));
const Thinking = tagged([
  T.Object(
    {
      type: T.Literal('enabled'),
      budget_tokens: T.Integer({ minimum: MIN_THINKING_BUDGET, maximum: MAX_TOKENS_LIMIT }),
      display: ThinkingDisplay,
    },
    { additionalProperties: false },
  ),
  T.Object({ type: T.Literal('disabled') }, { additionalProperties: false }),
  T.Object({ type: T.Literal('adaptive'), display: ThinkingDisplay }, { additionalProperties: false }),
]);

const OutputConfig = T.Object(
  {
    effort: T.Optional(nullable(oneOfStrings(['low', 'medium', 'high', 'xhigh', 'max'] as const))),
    format: T.Optional(
      nullable(
        tagged([
          T.Object({ type: T.Literal('json_schema'), schema: AnyObject }, { additionalProperties: false }),
        ]),
      ),
    ),
  },
  { additionalProperties: false },
);

/** Fields shared by /v1/messages and count_tokens. messages, system and tools are walked by hand after this. */
const sharedFields = {
  model: T.String({ minLength: 1, maxLength: 256 }),
  messages: T.Array(T.Unknown(), { minItems: 1, maxItems: MAX_MESSAGES }),
  system: T.Optional(T.Union([T.String(), T.Array(T.Unknown())])),
  tools: T.Optional(T.Array(T.Unknown())),
  tool_choice: T.Optional(ToolChoice),
  thinking: T.Optional(Thinking),
  output_config: T.Optional(OutputConfig),
};

/** Unknown top-level keys are refused by the walk before this runs (with boundary-specific messages). */
const MessagesTopLevel = T.Object(
  {
    model: sharedFields.model,
    max_tokens: T.Integer({ minimum: 1, maximum: MAX_TOKENS_LIMIT }),
    messages: sharedFields.messages,
    system: sharedFields.system,
    stream: T.Optional(T.Boolean()),
    stop_sequences: T.Optional(T.Array(NonEmpty, { maxItems: MAX_STOP_SEQUENCES })),
    temperature: T.Optional(T.Number({ minimum: 0, maximum: 1 })),
    top_p: T.Optional(T.Number({ minimum: 0, maximum: 1 })),
    top_k: T.Optional(T.Integer({ minimum: 0, maximum: MAX_TOP_K })),
    tools: sharedFields.tools,
    tool_choice: sharedFields.tool_choice,
    thinking: sharedFields.thinking,
    metadata: T.Optional(
      T.Object(
        { user_id: T.Optional(nullable(T.String({ maxLength: 256 }))) },
        { additionalProperties: false },
      ),
    ),
    service_tier: T.Optional(oneOfStrings(['auto', 'standard_only'] as const)),
    output_config: sharedFields.output_config,
  },
  { additionalProperties: true },
);

const CountTokensTopLevel = T.Object(sharedFields, { additionalProperties: true });

/** One validator per schema, compiled the first time its property is read. */
function lazyValidators<K extends string>(
  schemas: Record<K, TSchema>,
): Readonly<Record<K, ValidateFunction>> {
  const validators = {} as Record<K, ValidateFunction>;
  for (const key of Object.keys(schemas) as K[]) {
    Object.defineProperty(validators, key, {
      enumerable: true,
      configurable: true,
      get() {
        const compiled = ajv().compile(schemas[key]);
        Object.defineProperty(validators, key, { value: compiled, enumerable: true });
        return compiled;
      },
    });
  }
  return validators;
}

export const BLOCK_VALIDATORS = {
  portable: lazyValidators(blockSchemas(false)),
  native: lazyValidators({ ...blockSchemas(true), ...nativeOnlyBlockSchemas() }),
};

export const TOOL_VALIDATORS = {
  portable: lazyValidators(toolSchemas(false)),
  native: lazyValidators({ ...toolSchemas(true), defined: DefinedTool }),
};

export const TOP_LEVEL_VALIDATORS = lazyValidators({
  messages: MessagesTopLevel,
  countTokens: CountTokensTopLevel,
});
