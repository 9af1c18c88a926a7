/** Cost per Outcome: one chart per Outcome Definition, a switcher between them, the figures and their definitions. */
import { get, type Json } from './api.js';
import { barChart } from './charts.js';
import { h, notice, scrollBox } from './dom.js';
import { count, usd } from './format.js';
import { type Period, periodPicker, rangeOf } from './period.js';

const label = (value: unknown) => (value === null ? 'no Outcome yet' : String(value));
const money = (value: number | null) => (value === null ? '—' : usd(value));

export async function costPerOutcome(
  root: HTMLElement,
  period: Period,
  chosen: string | null,
  rerender: (period: Period, definition: string) => void,
) {
  const definitions = ((await get('/svc/v1/outcome-definitions')).data as Json[]).filter(
    (definition, index, list) => list.findIndex((other) => other.id === definition.id) === index,
  );
  root.replaceChildren(h('h1', {}, 'Cost per Outcome'));
  if (definitions.length === 0) {
    root.append(
      notice(
        'empty',
        'This Project has no Outcome Definitions.',
        'Declare them under projects[].outcome_definitions in the configuration (docs/configuration.md) and restart.',
      ),
    );
    return;
  }
  const definition = definitions.find((one) => one.id === chosen) ?? definitions[0]!;
  const range = rangeOf(period);
  const report = await get(
    `/svc/v1/reports/cost-per-outcome?definition_id=${encodeURIComponent(definition.id)}&from=${range.from}&to=${range.to}`,
  );
  root.append(
    h(
      'div',
      { class: 'toolbar' },
      h(
        'span',
        { class: 'segmented', 'data-testid': 'definition-switcher' },
        'Definition ',
        ...definitions.map((one) =>
          h(
            'button',
            {
              class: one.id === definition.id ? 'on' : '',
              'data-definition': one.id,
              onclick: () => rerender(period, one.id),
            },
            one.id,
          ),
        ),
      ),
      periodPicker(period, (next) => rerender(next, definition.id)),
    ),
  );
  const groups = report.groups as Json[];
  const card = h(
    'div',
    { class: 'card', 'data-testid': 'cost-chart', 'data-definition': definition.id },
    h('h2', {}, `${definition.id}: cost per value and spend per Work Unit`),
    h(
      'p',
      { class: 'muted' },
      `${count(report.work_units)} Work Units created ${range.from.slice(0, 10)} to ${range.to.slice(0, 10)}, total spend `,
      h(
        'strong',
        { 'data-testid': 'period-spend', 'data-value': String(report.total_spend_micros_usd) },
        usd(report.total_spend_micros_usd),
      ),
    ),
  );
  root.append(card);
  if (report.work_units === 0) {
    card.append(
      notice(
        'empty',
        'No Work Units were created in this period.',
        'Pick a longer period, or create Work Units, attach Runs to model calls and report Outcomes (npm run demo does it on the quick start).',
      ),
    );
    return;
  }
  const valued = groups.filter((group) => group.value !== null);
  barChart(
    card,
    valued.map((group) => label(group.value)),
    [
      { label: 'cost per value', values: valued.map((group) => group.cost_per_value_micros_usd) },
      { label: 'spend per Work Unit', values: valued.map((group) => group.spend_per_work_unit_micros_usd) },
    ],
  );
  root.append(
    scrollBox(
      h(
        'table',
        { 'data-testid': 'cost-table' },
        h(
          'tr',
          {},
          h('th', {}, 'value'),
          ...[
            'Work Units',
            'provisional',
            'total spend',
            'spend per Work Unit',
            'median',
            'p90',
            'cost per value',
            'unknown attempts',
          ].map((text) => h('th', { class: 'num' }, text)),
        ),
        ...groups.map((group) =>
          h(
            'tr',
            { 'data-value': label(group.value) },
            h('td', {}, label(group.value)),
            h('td', { class: 'num' }, count(group.work_units)),
            h(
              'td',
              { class: 'num' },
              group.provisional_work_units > 0
                ? h('span', { class: 'badge warn' }, count(group.provisional_work_units))
                : '0',
            ),
            h('td', { class: 'num' }, usd(group.total_spend_micros_usd)),
            h('td', { class: 'num' }, money(group.spend_per_work_unit_micros_usd)),
            h('td', { class: 'num' }, money(group.median_spend_micros_usd)),
            h('td', { class: 'num' }, money(group.p90_spend_micros_usd)),
            h(
              'td',
              {
                class: 'num',
                'data-testid': `cost-per-${label(group.value)}`,
                'data-micros': String(group.cost_per_value_micros_usd),
              },
              money(group.cost_per_value_micros_usd),
            ),
            h('td', { class: 'num' }, count(group.unknown_attempts)),
          ),
        ),
      ),
    ),
    h(
      'div',
      { class: 'card definitions' },
      h(
        'p',
        {},
        h('strong', {}, 'Cost per value'),
        ' = total spend of all Work Units of the period ÷ Work Units whose head Outcome is that value (rounded half up): the price of one such Outcome, including the Work Units that ended otherwise.',
      ),
      h(
        'p',
        {},
        h('strong', {}, 'Spend per Work Unit'),
        ' = total spend of the Work Units with that value ÷ their number. Median and p90 are nearest-rank. A Work Unit counts once, under its head revision; provisional heads (reported while the Work Unit was open) are counted and flagged. Spend is the committed micro-USD of all its Runs, unknown attempts included at their whole reservation.',
      ),
    ),
  );
}
