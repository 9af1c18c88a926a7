/**
 * Spend by tag or metadata, on the overview: choose a tag key (the Svc-Tags header of model calls) or
 * a metadata key (of the calls' Work Unit and Run) and see the period's spend per value, from
 * GET /svc/v1/reports/spend?group_by=tag.<key> (or metadata.<key>). Calls without that attribute are
 * the "(none)" group. The choice lives in the hash (#/overview?group_by=tag.team).
 */
import { ApiError, get, type Json } from './api.js';
import { barChart } from './charts.js';
import { h, notice } from './dom.js';
import { count, usd } from './format.js';
import { reflowTable } from './tables.js';

const KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Tag and metadata keys seen on the newest attempts, as suggestions (empty without the request log). */
async function keysSeen(): Promise<{ tag: string[]; metadata: string[] }> {
  try {
    const page = await get('/svc/v1/attempts?limit=200');
    const keys = (field: string) =>
      [...new Set((page.data as Json[]).flatMap((attempt) => Object.keys(attempt[field] ?? {})))].sort();
    return { tag: keys('tags'), metadata: keys('metadata') };
  } catch {
    return { tag: [], metadata: [] };
  }
}

export async function spendByAttribute(
  range: { from: string; to: string },
  groupBy: string | null,
  choose: (groupBy: string | null) => void,
): Promise<HTMLElement> {
  const [kind = 'tag', key = ''] = groupBy
    ? [groupBy.split('.')[0], groupBy.split('.').slice(1).join('.')]
    : [];
  const seen = await keysSeen();
  const kindSelect = h(
    'select',
    { 'data-testid': 'attribute-kind' },
    h('option', { value: 'tag' }, 'tag'),
    h('option', { value: 'metadata' }, 'metadata'),
  );
  kindSelect.value = kind === 'metadata' ? 'metadata' : 'tag';
  const keyInput = h('input', {
    'data-testid': 'attribute-key',
    placeholder: 'team',
    list: 'attribute-keys',
    autocomplete: 'off',
    'aria-label': 'key',
    value: key,
  });
  const suggestions = h('datalist', { id: 'attribute-keys' });
  const suggest = () =>
    suggestions.replaceChildren(
      ...seen[kindSelect.value as 'tag' | 'metadata'].map((value) => h('option', { value })),
    );
  suggest();
  kindSelect.addEventListener('change', suggest);
  const error = h('div', { role: 'alert' });
  const form = h(
    'form',
    { class: 'toolbar', 'data-testid': 'attribute-form' },
    h('span', {}, 'Group spend by'),
    kindSelect,
    keyInput,
    suggestions,
    h('button', { class: 'primary', type: 'submit', 'data-testid': 'group-spend' }, 'Show'),
    groupBy ? h('button', { type: 'button', onclick: () => choose(null) }, 'Clear') : null,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = keyInput.value.trim();
    if (!KEY.test(name)) {
      error.replaceChildren(
        notice(
          'error',
          'That is not a tag or metadata key.',
          'A key starts with a letter, then up to 63 letters, digits, "_", "." or "-".',
        ),
      );
      return;
    }
    choose(`${kindSelect.value}.${name}`);
  });
  const card = h(
    'div',
    { class: 'card', 'data-testid': 'spend-by-attribute', 'data-group-by': groupBy ?? '' },
    h('h2', {}, 'Spend by tag or metadata'),
    form,
    error,
  );
  if (!groupBy) {
    card.append(
      h(
        'p',
        { class: 'muted' },
        'Tag model calls with the header Svc-Tags: team=search, feature=chat, or give Work Units and Runs metadata; then group the period’s spend by one key.',
      ),
    );
    return card;
  }
  let report: Json;
  try {
    report = await get(
      `/svc/v1/reports/spend?group_by=${encodeURIComponent(groupBy)}&from=${range.from}&to=${range.to}`,
    );
  } catch (failure) {
    if (!(failure instanceof ApiError) || failure.status !== 400) throw failure;
    error.replaceChildren(notice('error', 'The gateway cannot group by that.', failure.message));
    return card;
  }
  const rows = [...(report.rows as Json[])].sort((a, b) => b.committed_micros_usd - a.committed_micros_usd);
  if (rows.length === 0) {
    card.append(notice('empty', 'No spend in this period.'));
    return card;
  }
  const label = (row: Json) =>
    row[groupBy] === null || row[groupBy] === undefined ? '(none)' : String(row[groupBy]);
  const chart = h('div', { class: 'chart-box' });
  card.append(chart);
  barChart(chart, rows.map(label), [
    { label: 'committed', values: rows.map((row) => row.committed_micros_usd) },
  ]);
  card.append(
    reflowTable(
      { 'data-testid': 'attribute-table' },
      [
        groupBy,
        { label: 'calls', numeric: true },
        { label: 'input tokens', numeric: true },
        { label: 'output tokens', numeric: true },
        { label: 'committed', numeric: true },
        { label: 'unknown', numeric: true },
      ],
      rows.map((row) => ({
        attributes: { 'data-attribute-value': label(row) },
        cells: [
          h('td', { 'data-label': groupBy }, label(row)),
          h('td', { 'data-label': 'calls', class: 'num', 'data-calls': String(row.calls) }, count(row.calls)),
          h('td', { 'data-label': 'input tokens', class: 'num' }, count(row.input_tokens)),
          h('td', { 'data-label': 'output tokens', class: 'num' }, count(row.output_tokens)),
          h(
            'td',
            { 'data-label': 'committed', class: 'num', 'data-micros': String(row.committed_micros_usd) },
            usd(row.committed_micros_usd),
          ),
          h('td', { 'data-label': 'unknown', class: 'num' }, count(row.unknown_attempts)),
        ],
      })),
    ),
  );
  return card;
}
