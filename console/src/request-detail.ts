/**
 * One attempt of the request log (#/requests/<attempt id>): GET /svc/v1/attempts/{id} shown as what
 * was called (alias, connection, model, key, Run, Work Unit), how it ended (state, outcome, status),
 * tokens by type, reservation and cost, timings, the upstream's request id and the trace id, tags and
 * metadata, the route (targets tried before it and why they failed, targets skipped and why), and,
 * when the Project captures bodies, the captured request and response (GET .../capture, which needs
 * the captures:read scope: without it the page says so).
 */
import { ApiError, get, type Json } from './api.js';
import { h, notice, scrollBox } from './dom.js';
import { count, shortTime, usd } from './format.js';
import { outcomeBadge } from './requests.js';

const absent = (value: unknown) => value === null || value === undefined;

/** Any JSON value, readably: objects as label/value lists, lists of records as tables. */
export function valueView(value: unknown): HTMLElement | string {
  if (absent(value)) return '—';
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    if (value.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item))) {
      const columns = [...new Set(value.flatMap((item) => Object.keys(item as Json)))];
      return scrollBox(
        h(
          'table',
          { class: 'inner' },
          h('tr', {}, ...columns.map((column) => h('th', {}, column))),
          ...value.map((item) =>
            h('tr', {}, ...columns.map((column) => h('td', {}, valueView((item as Json)[column])))),
          ),
        ),
      );
    }
    return value.map((item) => (typeof item === 'object' ? JSON.stringify(item) : String(item))).join(', ');
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Json);
    if (entries.length === 0) return 'none';
    return h(
      'dl',
      { class: 'pairs' },
      ...entries.flatMap(([key, item]) => [h('dt', {}, key), h('dd', {}, valueView(item))]),
    );
  }
  return String(value);
}

function facts(testId: string, rows: Array<[string, string, unknown, Node | string]>): HTMLElement {
  return h(
    'dl',
    { class: 'facts', 'data-testid': testId },
    ...rows.flatMap(([label, field, raw, shown]) => [
      h('dt', {}, label),
      h('dd', { 'data-field': field, 'data-value': absent(raw) ? '' : String(raw) }, shown),
    ]),
  );
}

const text = (value: unknown) => (absent(value) ? '—' : String(value));
const money = (value: unknown) => (typeof value === 'number' ? usd(value) : '—');
const number = (value: unknown) => (typeof value === 'number' ? count(value) : '—');
const ms = (value: unknown) => (typeof value === 'number' ? `${count(value)} ms` : '—');

export async function requestDetail(root: HTMLElement, id: string) {
  const attempt = await get(`/svc/v1/attempts/${encodeURIComponent(id)}`);
  const usage = (attempt.usage ?? {}) as Json;
  const link = (prefix: string, value: unknown) =>
    absent(value) ? '—' : h('a', { href: `${prefix}${encodeURIComponent(String(value))}` }, String(value));
  const capture = h('div', { 'data-testid': 'capture' });
  root.replaceChildren(
    h('p', {}, h('a', { href: '#/requests' }, '← Requests')),
    h('h1', {}, attempt.id, ' ', outcomeBadge(attempt)),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Call'),
      facts('attempt-call', [
        ['created', 'created_at', attempt.created_at, shortTime(attempt.created_at)],
        ['settled', 'settled_at', attempt.settled_at, shortTime(attempt.settled_at ?? null)],
        ['state', 'state', attempt.state, text(attempt.state)],
        ['outcome', 'outcome', attempt.outcome, text(attempt.outcome)],
        ['HTTP status', 'http_status', attempt.http_status, text(attempt.http_status)],
        ['endpoint', 'endpoint', attempt.endpoint, text(attempt.endpoint)],
        ['alias', 'alias', attempt.alias, text(attempt.alias)],
        ['connection', 'connection', attempt.connection, text(attempt.connection)],
        ['profile', 'profile', attempt.profile, text(attempt.profile)],
        ['upstream model', 'upstream_model', attempt.upstream_model, text(attempt.upstream_model)],
        ['key', 'key_id', attempt.key_id, text(attempt.key_id)],
        ['Run', 'run_id', attempt.run_id, text(attempt.run_id)],
        ['Work Unit', 'work_unit_id', attempt.work_unit_id, link('#/work-units/', attempt.work_unit_id)],
        ['call id', 'call_id', attempt.call_id, text(attempt.call_id)],
      ]),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Tokens, money and time'),
      facts('attempt-figures', [
        ['input tokens', 'input_tokens', usage.input_tokens, number(usage.input_tokens)],
        ['output tokens', 'output_tokens', usage.output_tokens, number(usage.output_tokens)],
        [
          'cache write tokens',
          'cache_creation_input_tokens',
          usage.cache_creation_input_tokens,
          number(usage.cache_creation_input_tokens),
        ],
        [
          'cache read tokens',
          'cache_read_input_tokens',
          usage.cache_read_input_tokens,
          number(usage.cache_read_input_tokens),
        ],
        [
          'reservation',
          'reservation_micros_usd',
          attempt.reservation_micros_usd,
          money(attempt.reservation_micros_usd),
        ],
        ['cost', 'cost_micros_usd', attempt.cost_micros_usd, money(attempt.cost_micros_usd)],
        ['first byte', 'first_byte_ms', attempt.timings?.first_byte_ms, ms(attempt.timings?.first_byte_ms)],
        ['total', 'total_ms', attempt.timings?.total_ms, ms(attempt.timings?.total_ms)],
        [
          'upstream request id',
          'upstream_request_id',
          attempt.upstream_request_id,
          text(attempt.upstream_request_id),
        ],
        ['trace id', 'trace_id', attempt.trace_id, text(attempt.trace_id)],
      ]),
    ),
    h(
      'div',
      { class: 'card' },
      h('h2', {}, 'Tags and metadata'),
      facts('attempt-attributes', [
        ['tags', 'tags', attempt.tags ? JSON.stringify(attempt.tags) : null, valueView(attempt.tags)],
        [
          'metadata',
          'metadata',
          attempt.metadata ? JSON.stringify(attempt.metadata) : null,
          valueView(attempt.metadata),
        ],
      ]),
    ),
    h(
      'div',
      { class: 'card', 'data-testid': 'attempt-route' },
      h('h2', {}, 'Route'),
      h(
        'p',
        { class: 'muted' },
        'The targets of this call: those tried before this attempt and why they failed, those skipped and why.',
      ),
      typeof attempt.route?.index === 'number'
        ? h('p', { 'data-testid': 'route-index' }, `This is attempt ${attempt.route.index + 1} of its call.`)
        : null,
      valueView(attempt.route),
    ),
    h('div', { class: 'card' }, h('h2', {}, 'Bodies'), capture),
  );
  await showCapture(capture, attempt);
}

async function showCapture(target: HTMLElement, attempt: Json) {
  // `capture` tells whether bodies are kept; a gateway that does not say is asked directly (404: none).
  const state = attempt.capture as Json | undefined;
  if (state && !state.available) {
    target.dataset.state = 'none';
    target.replaceChildren(
      h(
        'p',
        { class: 'muted' },
        'No bodies are kept for this attempt: capture is off for this Project (projects[].capture), it failed, or they expired.',
      ),
    );
    return;
  }
  try {
    const captured = await get(`/svc/v1/attempts/${encodeURIComponent(attempt.id)}/capture`);
    target.dataset.state = 'shown';
    const others = ((captured.call_attempt_ids ?? []) as string[]).filter((one) => one !== attempt.id);
    target.replaceChildren(
      h(
        'p',
        { class: 'muted' },
        `Captured ${shortTime(captured.captured_at)}, kept until ${shortTime(captured.expires_at)} (UTC).`,
        others.length > 0 ? ' The same bodies belong to the other attempts of this call: ' : null,
        ...others.flatMap((one, index) => [
          index > 0 ? ', ' : '',
          h('a', { href: `#/requests/${encodeURIComponent(one)}` }, one),
        ]),
      ),
      body('Request', 'capture-request', captured.request),
      body(
        `Response${typeof captured.response?.status === 'number' ? ` (HTTP ${captured.response.status})` : ''}`,
        'capture-response',
        captured.response,
      ),
    );
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 403) {
      target.dataset.state = 'denied';
      target.replaceChildren(
        notice(
          'error',
          'Reading the bodies needs captures:read.',
          `${state?.expires_at ? `This attempt's bodies are kept until ${shortTime(state.expires_at)}; s` : 'S'}ign in with a key that has the captures:read scope to read them.`,
        ),
      );
    } else if (failure instanceof ApiError && failure.status === 404) {
      target.dataset.state = state ? 'gone' : 'none';
      target.replaceChildren(
        h(
          'p',
          { class: 'muted' },
          state
            ? 'The bodies are gone (expired or swept).'
            : 'No bodies are kept for this attempt: capture is off for this Project (projects[].capture), it failed, or they expired.',
        ),
      );
    } else throw failure;
  }
}

function body(title: string, testId: string, part: Json | null | undefined): HTMLElement {
  if (!part) return h('div', {}, h('h3', {}, title), h('p', { class: 'muted' }, 'none'));
  let shown = String(part.body ?? '');
  const binary = part.encoding === 'base64';
  if (!binary && /json/i.test(String(part.content_type ?? ''))) {
    try {
      shown = JSON.stringify(JSON.parse(shown), null, 2);
    } catch {
      // Shown as received (a truncated body is not valid JSON).
    }
  }
  return h(
    'div',
    { 'data-testid': testId },
    h(
      'h3',
      {},
      title,
      ' ',
      h('span', { class: 'badge' }, String(part.content_type ?? 'unknown type')),
      typeof part.bytes === 'number' ? h('span', { class: 'badge' }, `${count(part.bytes)} bytes`) : null,
      part.truncated ? h('span', { class: 'badge warn' }, 'truncated') : null,
    ),
    binary ? h('p', { class: 'muted' }, 'Not text: the bytes kept, in base64.') : null,
    h('pre', { class: 'body', 'data-encoding': String(part.encoding ?? 'utf8') }, shown),
  );
}
