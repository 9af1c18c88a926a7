/** Overview: spend over time stacked by alias or connection, the period's totals, refusals, and spend by tag or metadata. */
import { get, type Json } from './api.js';
import { stackedChart } from './charts.js';
import { h, notice, scrollBox } from './dom.js';
import { count, usd } from './format.js';
import { type Period, periodPicker, rangeOf } from './period.js';
import { spendByAttribute } from './spend-by-attribute.js';

type Dimension = 'alias' | 'connection';

export async function overview(
  root: HTMLElement,
  period: Period,
  by: Dimension,
  rerender: (period: Period, by: Dimension) => void,
  attribute: { groupBy: string | null; choose: (groupBy: string | null) => void },
) {
  const range = rangeOf(period);
  const [report, byAttribute] = await Promise.all([
    get(`/svc/v1/reports/spend?group_by=day,${by}&from=${range.from}&to=${range.to}`),
    spendByAttribute(range, attribute.groupBy, attribute.choose),
  ]);
  const totals = report.totals as Json;
  const toolbar = h(
    'div',
    { class: 'toolbar' },
    periodPicker(period, (next) => rerender(next, by)),
    h(
      'span',
      { class: 'segmented' },
      'Stack by ',
      ...(['alias', 'connection'] as const).map((dimension) =>
        h(
          'button',
          {
            class: dimension === by ? 'on' : '',
            'data-stack': dimension,
            onclick: () => rerender(period, dimension),
          },
          dimension,
        ),
      ),
    ),
    h('span', { class: 'muted' }, `${range.from.slice(0, 10)} to ${range.to.slice(0, 10)} (UTC)`),
  );
  const tile = (label: string, testId: string, value: string, exact: number) =>
    h(
      'div',
      { class: 'tile' },
      h('div', { class: 'label' }, label),
      h('div', { class: 'value', 'data-testid': testId, 'data-value': String(exact) }, value),
    );
  const tiles = h(
    'div',
    { class: 'tiles' },
    tile('Committed spend', 'total-committed', usd(totals.committed_micros_usd), totals.committed_micros_usd),
    tile('Calls', 'total-calls', count(totals.calls), totals.calls),
    tile(
      'Unknown attempts',
      'total-unknown',
      `${count(totals.unknown_attempts)} · ${usd(totals.unknown_micros_usd)}`,
      totals.unknown_attempts,
    ),
    tile(
      'Refused reservations',
      'total-refused',
      count(totals.refused_reservations),
      totals.refused_reservations,
    ),
  );
  root.replaceChildren(h('h1', {}, 'Overview'), toolbar, tiles);
  if (totals.calls === 0 && totals.refused_reservations === 0) {
    root.append(
      notice(
        'empty',
        'No model calls in this period yet.',
        'Create a Work Unit and a Run (POST /svc/v1/work-units, POST /svc/v1/runs), call /v1/messages with the header ',
        h('code', {}, 'X-Svc-Run-ID'),
        ', then report an Outcome. ',
        h('code', {}, 'npm run demo'),
        ' does all three against the quick start.',
      ),
    );
    return;
  }
  const days = dayStarts(range.from, range.to);
  const rows = report.rows as Json[];
  const names = [...new Set(rows.map((row) => String(row[by])))].sort();
  const seriesOf = (figure: string) =>
    names.map((name) => ({
      label: name,
      values: days.map(
        (dayIso) => rows.find((row) => row.bucket === dayIso && row[by] === name)?.[figure] ?? 0,
      ),
    }));
  const times = days.map((dayIso) => Date.parse(dayIso) / 1000);
  const spendCard = h(
    'div',
    { class: 'card', 'data-testid': 'spend-chart' },
    h('h2', {}, `Committed spend per day, by ${by}`),
  );
  root.append(spendCard);
  stackedChart(spendCard, times, seriesOf('committed_micros_usd'), true);
  const refusalCard = h(
    'div',
    { class: 'card', 'data-testid': 'refusal-chart' },
    h('h2', {}, `Refused reservations per day, by ${by}`),
  );
  root.append(refusalCard);
  if (totals.refused_reservations === 0)
    refusalCard.append(h('p', { class: 'muted' }, 'No reservation was refused in this period.'));
  else stackedChart(refusalCard, times, seriesOf('refused_reservations'), false);
  root.append(breakdown(rows, by, names));
  root.append(byAttribute);
}

function breakdown(rows: Json[], by: Dimension, names: string[]): HTMLElement {
  const sum = (name: string, figure: string) =>
    rows.filter((row) => row[by] === name).reduce((total, row) => total + row[figure], 0);
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, `By ${by}`),
    scrollBox(
      h(
        'table',
        {},
        h(
          'tr',
          {},
          h('th', {}, by),
          ...['calls', 'input tokens', 'output tokens', 'committed', 'unknown', 'refused'].map((label) =>
            h('th', { class: 'num' }, label),
          ),
        ),
        ...names.map((name) =>
          h(
            'tr',
            {},
            h('td', {}, name),
            h('td', { class: 'num' }, count(sum(name, 'calls'))),
            h('td', { class: 'num' }, count(sum(name, 'input_tokens'))),
            h('td', { class: 'num' }, count(sum(name, 'output_tokens'))),
            h('td', { class: 'num' }, usd(sum(name, 'committed_micros_usd'))),
            h('td', { class: 'num' }, count(sum(name, 'unknown_attempts'))),
            h('td', { class: 'num' }, count(sum(name, 'refused_reservations'))),
          ),
        ),
      ),
    ),
  );
}

function dayStarts(fromIso: string, toIso: string): string[] {
  const days: string[] = [];
  for (
    let time = Date.parse(`${fromIso.slice(0, 10)}T00:00:00.000Z`);
    time < Date.parse(toIso);
    time += 86_400_000
  ) {
    days.push(new Date(time).toISOString());
  }
  return days;
}
