/**
 * The Requests page's filters. They live in the page's hash (#/requests?alias=...&tag.team=...), so
 * a filtered log can be bookmarked and shared; `queryOf` turns them into the query of
 * GET /svc/v1/attempts (time presets become `from`, tags and metadata become `tag.<key>` and
 * `metadata.<key>` parameters).
 */
import { h } from './dom.js';

export const OUTCOMES = [
  'completed',
  'refused_upstream',
  'not_sent',
  'unknown',
  'cancelled_running',
  'lease_expired',
];

/** Filters passed to the API as they are, with the label of their field. */
const PLAIN: Array<[string, string, string]> = [
  ['key_id', 'Key id', 'key_…'],
  ['alias', 'Alias', 'any alias'],
  ['connection', 'Connection', 'any connection'],
  ['upstream_model', 'Model (upstream)', 'any model'],
  ['run_id', 'Run id', 'run_…'],
  ['work_unit_id', 'Work Unit id', 'wku_…'],
  ['http_status', 'HTTP status', 'e.g. 429'],
];

const RANGES: Array<[string, string, number]> = [
  ['', 'any time', 0],
  ['1h', 'last hour', 3_600_000],
  ['24h', 'last 24 hours', 86_400_000],
  ['7d', 'last 7 days', 7 * 86_400_000],
  ['30d', 'last 30 days', 30 * 86_400_000],
  ['custom', 'from / to (UTC)', 0],
];

/** The API query for the filters in the hash (the hash's `after` is the page cursor). */
export function queryOf(filters: URLSearchParams, nowMs = Date.now()): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of filters) {
    if (value === '' || name === 'range' || name === 'after') continue;
    query.append(name, value);
  }
  const preset = RANGES.find(([id]) => id === filters.get('range'));
  if (preset && preset[2] > 0) query.set('from', new Date(nowMs - preset[2]).toISOString());
  if (filters.get('after')) query.set('after', filters.get('after')!);
  return query;
}

/** "team=search, env=prod" -> [['team','search'], ['env','prod']] (pairs without "=" are kept whole, the API names them). */
function pairsOf(text: string): Array<[string, string]> {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const at = item.indexOf('=');
      return at < 0 ? [item, ''] : [item.slice(0, at).trim(), item.slice(at + 1).trim()];
    });
}

function attributeText(filters: URLSearchParams, prefix: string): string {
  return [...filters]
    .filter(([name]) => name.startsWith(prefix))
    .map(([name, value]) => `${name.slice(prefix.length)}=${value}`)
    .join(', ');
}

/** "2026-11-28T10:00:00.000Z" <-> the value of a datetime-local input read as UTC. */
const localOf = (iso: string | null) => (iso ? iso.slice(0, 16) : '');
const isoOf = (local: string) => (local ? `${local.length === 16 ? `${local}:00` : local}Z` : '');

export function filterForm(
  filters: URLSearchParams,
  suggestions: { aliases: string[]; keys: string[] },
  apply: (next: URLSearchParams) => void,
): HTMLElement {
  const field = (label: string, control: HTMLElement) =>
    h('label', { class: 'field' }, h('span', {}, label), control);
  const text = (name: string, placeholder: string, list?: string) =>
    h('input', {
      name,
      'data-filter': name,
      placeholder,
      autocomplete: 'off',
      value: filters.get(name) ?? '',
      ...(list ? { list } : {}),
    });
  const range = h(
    'select',
    { name: 'range', 'data-filter': 'range' },
    ...RANGES.map(([id, label]) => h('option', { value: id }, label)),
  );
  range.value = filters.get('range') ?? (filters.get('from') || filters.get('to') ? 'custom' : '');
  const from = h('input', {
    type: 'datetime-local',
    'data-filter': 'from',
    value: localOf(filters.get('from')),
  });
  const to = h('input', { type: 'datetime-local', 'data-filter': 'to', value: localOf(filters.get('to')) });
  const custom = h('div', { class: 'form-grid' }, field('From (UTC)', from), field('To (UTC)', to));
  custom.hidden = range.value !== 'custom';
  range.addEventListener('change', () => {
    custom.hidden = range.value !== 'custom';
  });
  const outcome = h(
    'select',
    { name: 'outcome', 'data-filter': 'outcome' },
    h('option', { value: '' }, 'any outcome'),
    ...OUTCOMES.map((one) => h('option', { value: one }, one)),
  );
  outcome.value = filters.get('outcome') ?? '';
  const plain = PLAIN.map(([name, label, placeholder]) => {
    const list = name === 'alias' ? 'filter-aliases' : name === 'key_id' ? 'filter-keys' : undefined;
    return { name, control: text(name, placeholder, list), label };
  });
  const tags = text('tags', 'team=search, feature=chat');
  tags.value = attributeText(filters, 'tag.');
  const metadata = text('metadata', 'customer=acme');
  metadata.value = attributeText(filters, 'metadata.');
  const form = h(
    'form',
    { class: 'card filters', 'data-testid': 'request-filters' },
    h(
      'div',
      { class: 'form-grid' },
      field('Time', range),
      ...plain.map((one) => field(one.label, one.control)),
      field('Outcome', outcome),
      field('Tags (key=value, …)', tags),
      field('Run / Work Unit metadata (key=value, …)', metadata),
    ),
    custom,
    h('datalist', { id: 'filter-aliases' }, ...suggestions.aliases.map((value) => h('option', { value }))),
    h('datalist', { id: 'filter-keys' }, ...suggestions.keys.map((value) => h('option', { value }))),
    h(
      'div',
      { class: 'form-actions' },
      h('button', { class: 'primary', type: 'submit', 'data-testid': 'apply-filters' }, 'Apply'),
      h(
        'button',
        { type: 'button', 'data-testid': 'clear-filters', onclick: () => apply(new URLSearchParams()) },
        'Clear',
      ),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (range.value === 'custom') {
      if (from.value) next.set('from', isoOf(from.value));
      if (to.value) next.set('to', isoOf(to.value));
    } else if (range.value) next.set('range', range.value);
    for (const one of plain) if (one.control.value.trim()) next.set(one.name, one.control.value.trim());
    if (outcome.value) next.set('outcome', outcome.value);
    for (const [key, value] of pairsOf(tags.value)) next.append(`tag.${key}`, value);
    for (const [key, value] of pairsOf(metadata.value)) next.append(`metadata.${key}`, value);
    if (filters.get('limit')) next.set('limit', filters.get('limit')!);
    apply(next);
  });
  return form;
}
