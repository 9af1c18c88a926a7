/**
 * Requests (#/requests): the request log, GET /svc/v1/attempts (governance:read), newest first, with
 * its filters (request-filters.ts) and keyset paging (50 a page, or the hash's `limit`): "Next page" puts the API's `next_cursor` in
 * the hash as `after`, so every page has its own address. A row opens the attempt's detail
 * (#/requests/<attempt id>, request-detail.ts).
 */
import { ApiError, get, type Json } from './api.js';
import { h, notice } from './dom.js';
import { count, shortTime, usd } from './format.js';
import { filterForm, queryOf } from './request-filters.js';
import { reflowTable } from './tables.js';

const PAGE = 50;

export async function requestList(root: HTMLElement, filters: URLSearchParams) {
  const query = queryOf(filters);
  if (!query.has('limit')) query.set('limit', String(PAGE));
  const [answer, suggestions] = await Promise.all([
    get(`/svc/v1/attempts?${query}`).catch((failure: unknown) => {
      // A filter the API refuses (400 naming the parameter) is shown above the form, not instead of it.
      if (failure instanceof ApiError && failure.status === 400) return failure;
      throw failure;
    }),
    suggestionsOf(),
  ]);
  const refused = answer instanceof ApiError ? answer : null;
  const page: Json = refused ? { data: [], has_more: false, next_cursor: null } : (answer as Json);
  const go = (next: URLSearchParams) => {
    const text = next.toString();
    location.hash = text ? `#/requests?${text}` : '#/requests';
  };
  const active = [...filters.keys()].filter((name) => name !== 'after' && name !== 'limit').length;
  const panel = h(
    'details',
    { class: 'filter-panel', 'data-testid': 'filter-panel' },
    h('summary', {}, active > 0 ? `Filters (${active} active)` : 'Filters'),
    filterForm(filters, suggestions, go),
  );
  panel.open = active > 0 || window.innerWidth > 640;
  const attempts = page.data as Json[];
  const paging = h(
    'div',
    { class: 'form-actions' },
    filters.get('after')
      ? h(
          'button',
          {
            type: 'button',
            'data-testid': 'first-page',
            onclick: () => {
              const next = new URLSearchParams(filters);
              next.delete('after');
              go(next);
            },
          },
          '← Newest',
        )
      : null,
    page.has_more && page.next_cursor
      ? h(
          'button',
          {
            type: 'button',
            'data-testid': 'next-page',
            onclick: () => {
              const next = new URLSearchParams(filters);
              next.set('after', page.next_cursor);
              go(next);
            },
          },
          'Next page →',
        )
      : null,
  );
  root.replaceChildren(
    h('h1', {}, 'Requests'),
    h(
      'p',
      { class: 'muted' },
      'Every attempt of this Project, with or without a Run, newest first. One client request that fell back to another target shows one row per attempt (same call id).',
    ),
    panel,
    refused
      ? notice('error', 'The gateway refused these filters.', refused.message)
      : attempts.length === 0
        ? notice(
            'empty',
            active > 0 ? 'No attempt matches these filters.' : 'No model call yet.',
            active > 0
              ? 'Widen the time range or clear a filter.'
              : 'Calls to /v1/messages and the other model endpoints appear here.',
          )
        : attemptTable(attempts),
    h(
      'div',
      { class: 'muted', 'data-testid': 'page-count', 'data-count': String(attempts.length) },
      `${count(attempts.length)} on this page`,
    ),
    paging,
  );
}

/** Aliases and key ids for the filters' suggestions (empty when the key may not list them). */
async function suggestionsOf(): Promise<{ aliases: string[]; keys: string[] }> {
  const ids = (path: string) =>
    get(path)
      .then((list) => (list.data as Json[]).map((item) => String(item.id)))
      .catch(() => [] as string[]);
  const [aliases, keys] = await Promise.all([ids('/v1/models?limit=1000'), ids('/svc/v1/keys')]);
  return { aliases, keys };
}

export function outcomeBadge(attempt: Json): HTMLElement {
  const outcome = attempt.outcome ?? attempt.state ?? 'pending';
  const kind =
    outcome === 'completed' ? 'ok' : outcome === 'unknown' || outcome === 'lease_expired' ? 'warn' : '';
  return h('span', { class: `badge ${kind}`, 'data-outcome': String(outcome) }, String(outcome));
}

function attributesText(attributes: Json | null | undefined): string {
  if (!attributes) return '';
  return Object.entries(attributes)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

function attemptTable(attempts: Json[]): HTMLElement {
  const rows = attempts.map((attempt) => {
    const usage = attempt.usage as Json | null;
    return {
      attributes: {
        class: 'link',
        'data-attempt': attempt.id,
        onclick: () => {
          location.hash = `#/requests/${encodeURIComponent(attempt.id)}`;
        },
      },
      cells: [
        h(
          'td',
          { 'data-label': 'time', class: 'time' },
          h('a', { href: `#/requests/${encodeURIComponent(attempt.id)}` }, shortTime(attempt.created_at)),
        ),
        h(
          'td',
          { 'data-label': 'alias' },
          h('div', {}, attempt.alias ?? '—'),
          h('div', { class: 'caption' }, `${attempt.connection ?? '—'} · ${attempt.upstream_model ?? '—'}`),
        ),
        h(
          'td',
          { 'data-label': 'outcome' },
          outcomeBadge(attempt),
          ' ',
          h(
            'span',
            { class: 'muted', 'data-status': String(attempt.http_status ?? '') },
            String(attempt.http_status ?? ''),
          ),
        ),
        h('td', { 'data-label': 'tokens in', class: 'num' }, usage ? count(usage.input_tokens) : '—'),
        h('td', { 'data-label': 'tokens out', class: 'num' }, usage ? count(usage.output_tokens) : '—'),
        h(
          'td',
          { 'data-label': 'cost', class: 'num', 'data-cost': String(attempt.cost_micros_usd ?? '') },
          attempt.cost_micros_usd === null || attempt.cost_micros_usd === undefined
            ? '—'
            : usd(attempt.cost_micros_usd),
        ),
        h(
          'td',
          { 'data-label': 'ms', class: 'num' },
          typeof attempt.timings?.total_ms === 'number' ? count(attempt.timings.total_ms) : '—',
        ),
        h('td', { 'data-label': 'key', class: 'id' }, attempt.key_id ?? '—'),
        h(
          'td',
          { 'data-label': 'Run', class: 'id' },
          attempt.run_id ?? '—',
          attempt.work_unit_id ? h('div', { class: 'caption' }, attempt.work_unit_id) : null,
        ),
        h('td', { 'data-label': 'tags', class: 'tags' }, attributesText(attempt.tags) || '—'),
      ],
    };
  });
  return reflowTable(
    { 'data-testid': 'request-table' },
    [
      'time (UTC)',
      'alias',
      'outcome',
      { label: 'in', numeric: true },
      { label: 'out', numeric: true },
      { label: 'cost', numeric: true },
      { label: 'ms', numeric: true },
      'key',
      'Run / Work Unit',
      'tags',
    ],
    rows,
  );
}
