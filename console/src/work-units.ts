/** Work Units: a paged list, and one Work Unit with its Runs (budget bars), their attempts and its Outcomes. */
import { all, get, type Json } from './api.js';
import { h, notice, scrollBox } from './dom.js';
import { count, shortTime, usd } from './format.js';

export async function workUnitList(root: HTMLElement, status: string) {
  const table = h(
    'table',
    { 'data-testid': 'work-unit-table' },
    h(
      'tr',
      {},
      ...['Work Unit', 'status', 'created', 'closed', 'Outcome Definitions', 'metadata'].map((label) =>
        h('th', {}, label),
      ),
    ),
  );
  const more = h('button', { hidden: true }, 'Load more');
  const filter = h(
    'select',
    {
      'data-testid': 'status-filter',
      onchange: () => {
        location.hash = `#/work-units?status=${filter.value}`;
      },
    },
    ...['', 'open', 'closed'].map((value) => {
      const option = h('option', { value }, value === '' ? 'any status' : value);
      option.selected = value === status;
      return option;
    }),
  );
  const box = scrollBox(table);
  root.replaceChildren(
    h('h1', {}, 'Work Units'),
    h('div', { class: 'toolbar' }, filter, h('span', { class: 'muted' }, 'newest first')),
    box,
    more,
  );
  let cursor: string | null = null;
  const load = async () => {
    const query = new URLSearchParams({ limit: '50' });
    if (status) query.set('status', status);
    if (cursor) query.set('cursor', cursor);
    const page = await get(`/svc/v1/work-units?${query}`);
    for (const unit of page.data as Json[]) {
      table.append(
        h(
          'tr',
          {
            class: 'link',
            'data-work-unit': unit.id,
            onclick: () => {
              location.hash = `#/work-units/${unit.id}`;
            },
          },
          h('td', {}, unit.id),
          h('td', {}, unit.status),
          h('td', {}, shortTime(unit.created_at)),
          h('td', {}, shortTime(unit.closed_at)),
          h('td', {}, (unit.outcome_definitions as Json[]).map((definition) => definition.id).join(', ')),
          h('td', { class: 'metadata' }, metadataText(unit.metadata)),
        ),
      );
    }
    cursor = page.next_cursor;
    more.hidden = !page.has_more;
    if (table.rows.length === 1) {
      box.replaceWith(
        notice(
          'empty',
          'No Work Units yet.',
          'Create one with POST /svc/v1/work-units (scope work_unit:create), or run ',
          h('code', {}, 'npm run demo'),
          ' against the quick start.',
        ),
      );
    }
  };
  more.addEventListener('click', () => void load());
  await load();
}

/** `{customer: "acme"}` -> "customer=acme" (empty when a Work Unit or Run has none). */
function metadataText(metadata: Json | null | undefined): string {
  return Object.entries(metadata ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

export async function workUnitDetail(root: HTMLElement, id: string) {
  const view = await get(`/svc/v1/work-units/${encodeURIComponent(id)}`);
  const unit = view.work_unit as Json;
  const runs = view.runs as Json[];
  const outcomes = view.outcomes as Json[];
  const spend = runs.reduce((sum, run) => sum + run.committed_micros_usd, 0);
  root.replaceChildren(
    h('p', {}, h('a', { href: '#/work-units' }, '← Work Units')),
    h('h1', {}, unit.id, ' ', h('span', { class: 'badge' }, unit.status)),
    h(
      'p',
      { class: 'muted' },
      `created ${shortTime(unit.created_at)} · closed ${shortTime(unit.closed_at)} · spend `,
      h('strong', { 'data-testid': 'work-unit-spend', 'data-value': String(spend) }, usd(spend)),
    ),
    metadataText(unit.metadata)
      ? h(
          'p',
          { class: 'muted', 'data-testid': 'work-unit-metadata' },
          `metadata: ${metadataText(unit.metadata)}`,
        )
      : '',
    h('h2', {}, `Runs (${runs.length})`),
    runs.length === 0
      ? notice(
          'empty',
          'No Runs in this Work Unit.',
          'Create one with POST /svc/v1/runs and attach calls with the header X-Svc-Run-ID.',
        )
      : h('div', { class: 'scroll' }, runTable(runs)),
    h('h2', {}, `Outcomes (${outcomes.length})`),
    outcomes.length === 0
      ? notice(
          'empty',
          'No Outcome reported yet.',
          `Report one with POST /svc/v1/work-units/${unit.id}/outcomes (scope outcome:write).`,
        )
      : scrollBox(outcomeTable(outcomes)),
  );
}

function budgetBar(run: Json): HTMLElement {
  const budget = Math.max(1, run.budget_micros_usd);
  const percent = (value: number) => `${Math.min(100, (value / budget) * 100).toFixed(2)}%`;
  return h(
    'div',
    {
      class: 'bar',
      title: `committed ${usd(run.committed_micros_usd)}, reserved ${usd(run.reserved_micros_usd)}, remaining ${usd(run.remaining_micros_usd)} of ${usd(run.budget_micros_usd)}`,
    },
    h('span', { class: 'committed', style: `width:${percent(run.committed_micros_usd)}` }),
    h('span', { class: 'reserved', style: `width:${percent(run.reserved_micros_usd)}` }),
  );
}

function runTable(runs: Json[]): HTMLElement {
  const table = h(
    'table',
    { 'data-testid': 'run-table' },
    h(
      'tr',
      {},
      h('th', {}, 'Run'),
      h('th', {}, 'status'),
      h(
        'th',
        {},
        'budget ',
        h('span', { class: 'legend-dot', style: 'background:#2f6fd0' }),
        'committed',
        h('span', { class: 'legend-dot', style: 'background:#f0a020' }),
        'reserved',
      ),
      h('th', { class: 'num' }, 'unknown'),
      h('th', {}, ''),
    ),
  );
  for (const run of runs) {
    const attempts = h('tr', { hidden: true }, h('td', { colspan: '5' }));
    const toggle = h('button', { 'data-attempts': run.id }, 'Attempts');
    toggle.addEventListener('click', async () => {
      attempts.hidden = !attempts.hidden;
      if (!attempts.hidden && attempts.dataset.loaded !== 'yes') {
        attempts.dataset.loaded = 'yes';
        attempts.firstElementChild!.replaceChildren(await attemptTable(run.id));
      }
    });
    table.append(
      h(
        'tr',
        { 'data-run': run.id },
        h('td', {}, run.id),
        h('td', {}, run.status, ' ', h('span', { class: 'badge' }, run.budget_state)),
        h(
          'td',
          {},
          budgetBar(run),
          h(
            'div',
            { class: 'caption', 'data-committed': String(run.committed_micros_usd) },
            `committed ${usd(run.committed_micros_usd)} · reserved ${usd(run.reserved_micros_usd)} · remaining ${usd(run.remaining_micros_usd)} of ${usd(run.budget_micros_usd)}`,
          ),
        ),
        h('td', { class: 'num' }, count(run.unknown_attempts)),
        h('td', {}, toggle),
      ),
      attempts,
    );
  }
  return table;
}

async function attemptTable(runId: string): Promise<HTMLElement> {
  const attempts = await all(`/svc/v1/runs/${encodeURIComponent(runId)}/attempts`);
  if (attempts.length === 0) return h('p', { class: 'muted' }, 'No settled attempt on this Run yet.');
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'attempts', 'data-testid': `attempts-${runId}` },
      h(
        'tr',
        {},
        ...['settled', 'route', 'outcome'].map((label) => h('th', {}, label)),
        ...['in', 'out', 'cache w', 'cache r', 'cost', 'ms'].map((label) => h('th', { class: 'num' }, label)),
      ),
      ...attempts.map((attempt) =>
        h(
          'tr',
          { 'data-attempt': attempt.id },
          h('td', {}, shortTime(attempt.settled_at)),
          h(
            'td',
            {},
            attempt.alias,
            h('div', { class: 'caption' }, `${attempt.connection} · ${attempt.upstream_model}`),
          ),
          h(
            'td',
            {},
            attempt.unknown
              ? h('span', { class: 'badge warn' }, `${attempt.outcome} · unknown`)
              : attempt.outcome,
          ),
          ...[
            attempt.input_tokens,
            attempt.output_tokens,
            attempt.cache_creation_input_tokens,
            attempt.cache_read_input_tokens,
          ].map((tokens) => h('td', { class: 'num' }, tokens === null ? '—' : count(tokens))),
          h(
            'td',
            { class: 'num', 'data-cost': String(attempt.cost_micros_usd) },
            usd(attempt.cost_micros_usd),
          ),
          h('td', { class: 'num' }, count(attempt.duration_ms)),
        ),
      ),
    ),
  );
}

function outcomeTable(outcomes: Json[]): HTMLElement {
  const superseded = new Set(outcomes.map((outcome) => outcome.supersedes_outcome_id));
  return h(
    'table',
    { 'data-testid': 'outcome-table' },
    h(
      'tr',
      {},
      ...['definition', 'value', 'revision', 'head', 'observed', 'reported by'].map((label) =>
        h('th', {}, label),
      ),
    ),
    ...outcomes.map((outcome) =>
      h(
        'tr',
        {},
        h('td', {}, outcome.definition_id),
        h(
          'td',
          {},
          String(outcome.value),
          outcome.provisional ? h('span', { class: 'badge warn' }, ' provisional') : null,
        ),
        h('td', { class: 'num' }, String(outcome.revision)),
        h('td', {}, superseded.has(outcome.id) ? 'superseded' : 'head'),
        h('td', {}, shortTime(outcome.observed_at)),
        h('td', {}, outcome.reporter_key_id),
      ),
    ),
  );
}
