/**
 * fast-check arbitraries for hostile requests to every POST endpoint and every path parameter of
 * the gateway (the fuzz suite in test/governance/fuzz.test.ts and its long run, bench/fuzz.ts).
 * A request is a Probe (test/support/input-world.ts): a route, a path parameter (a real id of the
 * world, random bytes percent-encoded, odd Unicode) and a body (a valid template with one field
 * replaced or added, arbitrary JSON, raw text, nothing, or a multipart form). The property every
 * answer must hold: the gateway answered, and not with a 5xx.
 */
import fc from 'fast-check';
import type { InputWorld, Probe } from './input-world.js';

/** Values that have broken parsers, validators, stores or pricing somewhere. */
const NASTY_VALUES: unknown[] = [
  1e300,
  -1e300,
  2 ** 53,
  2 ** 63,
  -1,
  0,
  1.5,
  -0.5,
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff x',
  '😀',
  '\u202e',
  'x'.repeat(70_000),
  [],
  {},
  null,
  true,
  '__proto__',
  { __proto__: { polluted: true } },
  { constructor: { prototype: {} } },
  '2025-13-45T99:99:99Z',
  '../../etc/passwd',
  'file_x',
  'run_x',
  'wku_x',
];

const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_VALUES) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
);

const fieldName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'stream', 'metadata', 'tools', 'x'),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

interface Route {
  method: Probe['method'];
  /** `{id}` is replaced by the path parameter. */
  path: string;
  /** A valid body (given the world's ids), or 'multipart', or undefined for no body. */
  template?: (world: InputWorld) => Record<string, unknown>;
  multipart?: true;
  /** Which of the world's ids is a valid parameter here. */
  validId?: (world: InputWorld) => string;
}

const messages = (extra: Record<string, unknown> = {}) => ({
  model: 'sim',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
});

export const ROUTES: Route[] = [
  { method: 'POST', path: '/svc/v1/work-units', template: () => ({}) },
  { method: 'GET', path: '/svc/v1/work-units/{id}', validId: (world) => world.workUnitId },
  {
    method: 'POST',
    path: '/svc/v1/work-units/{id}/close',
    template: () => ({}),
    validId: (world) => world.workUnitId,
  },
  {
    method: 'POST',
    path: '/svc/v1/work-units/{id}/outcomes',
    template: () => ({
      definition_id: 'odef_resolved',
      value: true,
      observed_at: '2025-12-31T12:00:00.000Z',
    }),
    validId: (world) => world.workUnitId,
  },
  {
    method: 'POST',
    path: '/svc/v1/runs',
    template: (world) => ({ work_unit_id: world.workUnitId, budget_micros_usd: 1000, ttl_seconds: 60 }),
  },
  { method: 'GET', path: '/svc/v1/runs/{id}', validId: (world) => world.runId },
  {
    method: 'POST',
    path: '/svc/v1/runs/{id}/close',
    template: () => ({ reason: 'done' }),
    validId: (world) => world.runId,
  },
  { method: 'POST', path: '/v1/messages', template: () => messages() },
  { method: 'POST', path: '/v1/messages', template: () => messages({ stream: true }) },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    template: () => ({ model: 'sim', messages: messages().messages }),
  },
  { method: 'POST', path: '/v1/files', multipart: true },
  { method: 'GET', path: '/v1/files/{id}' },
  { method: 'GET', path: '/v1/files/{id}/content' },
  { method: 'DELETE', path: '/v1/files/{id}' },
  {
    method: 'POST',
    path: '/v1/batches',
    template: () => ({ input_file_id: 'file_x', endpoint: '/v1/messages', completion_window: '24h' }),
  },
  { method: 'GET', path: '/v1/batches/{id}' },
  { method: 'POST', path: '/v1/batches/{id}/cancel', template: () => ({}) },
  {
    method: 'POST',
    path: '/v1/responses',
    template: () => ({ model: 'sim', input: 'Hi', max_output_tokens: 16 }),
  },
  { method: 'GET', path: '/v1/responses/{id}' },
  { method: 'POST', path: '/v1/responses/{id}/cancel', template: () => ({}) },
  { method: 'DELETE', path: '/v1/responses/{id}' },
  {
    method: 'POST',
    path: '/v1/audio/speech',
    template: () => ({ model: 'tts', input: 'Hi', voice: 'alloy' }),
  },
  { method: 'POST', path: '/v1/audio/transcriptions', multipart: true },
  { method: 'POST', path: '/v1/images/generations', template: () => ({ prompt: 'a cat', n: 1 }) },
  { method: 'POST', path: '/v1/moderations', template: () => ({ input: 'Hi' }) },
  {
    method: 'POST',
    path: '/v1/embeddings',
    template: () => ({ model: 'text-embedding-3-small', input: ['Hi', 'there'], dimensions: 4 }),
  },
  { method: 'POST', path: '/v1/async/invocations', template: () => ({}) },
  { method: 'GET', path: '/v1/async/invocations/{id}' },
  { method: 'POST', path: '/v1/async/invocations/{id}/cancel', template: () => ({}) },
  { method: 'POST', path: '/v1/rerank', template: () => ({ query: 'q', documents: ['a'] }) },
];

function percentEncoded(bytes: Uint8Array): string {
  return [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/** A path parameter: a real id, random bytes, odd Unicode, or a known troublemaker. */
function parameter(route: Route, world: InputWorld): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [
    fc.uint8Array({ minLength: 1, maxLength: 24 }).map(percentEncoded),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).map((text) => encodeURIComponent(text)),
    fc.constantFrom('%00', 'x%00', '%ed%a0%80', '%c0%80', '..', '%2e%2e', '%2F', 'a'.repeat(600), '%', '%zz'),
  ];
  if (route.validId) options.push(fc.constant(route.validId(world)));
  return fc.oneof(...options);
}

function body(template: Record<string, unknown>): fc.Arbitrary<Pick<Probe, 'body' | 'rawBody'>> {
  const keys = Object.keys(template);
  const replaced =
    keys.length === 0
      ? fc.tuple(fieldName, value).map(([key, item]) => ({ ...template, [key]: item }))
      : fc.tuple(fc.constantFrom(...keys), value).map(([key, item]) => ({ ...template, [key]: item }));
  return fc.oneof(
    { weight: 4, arbitrary: replaced.map((item) => ({ body: item })) },
    {
      weight: 2,
      arbitrary: fc.tuple(fieldName, value).map(([key, item]) => ({ body: { ...template, [key]: item } })),
    },
    { weight: 1, arbitrary: fc.constant({ body: template }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((item) => ({ body: item })) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((text) => ({ rawBody: text })) },
    {
      weight: 1,
      arbitrary: fc.nat(3000).map((depth) => ({ rawBody: `${'['.repeat(depth)}${']'.repeat(depth)}` })),
    },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

const form: fc.Arbitrary<NonNullable<Probe['multipart']>> = fc.record({
  filename: fc.oneof(
    fc.constant('a.jsonl'),
    fc.string({ unit: 'binary', maxLength: 20 }).map((text) => text.replace(/["\r\n]/g, '')),
  ),
  purpose: fc.oneof(
    fc.constantFrom('batch', 'assistants', 'user_data'),
    fc.string({ unit: 'binary', maxLength: 20 }),
  ),
  cut: fc.boolean(),
  content: fc.oneof(
    fc.constant('{"custom_id":"a","method":"POST","url":"/v1/messages","body":{}}\n'),
    fc.string({ unit: 'binary', maxLength: 200 }),
  ),
  fileField: fc.constantFrom('file', 'file', 'purpose', 'x'),
});

/** One hostile request against `world`, labelled with its route. */
export function hostileRequest(world: InputWorld): fc.Arbitrary<{ route: string; probe: Probe }> {
  return fc.oneof(
    ...ROUTES.map((route) => {
      const label = `${route.method} ${route.path}`;
      const path = route.path.includes('{id}')
        ? parameter(route, world).map((id) => route.path.replace('{id}', id))
        : fc.constant(route.path);
      const payload: fc.Arbitrary<Partial<Probe>> = route.multipart
        ? form.map((multipart) => ({ multipart }))
        : route.template
          ? body(route.template(world))
          : fc.constant({});
      return fc
        .tuple(path, payload)
        .map(([target, rest]) => ({ route: label, probe: { method: route.method, path: target, ...rest } }));
    }),
  );
}
