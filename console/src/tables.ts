/**
 * Tables that reflow on a phone: a wide table (header row, one row per record) which, under 640 px,
 * shows each row as a card of "label: value" lines (console.css, table.reflow; each cell carries its
 * label in data-label). Above that width it is an ordinary table in a box that scrolls sideways.
 */
import { type Child, h, scrollBox } from './dom.js';

export interface ReflowRow {
  attributes: Record<string, string | boolean | ((event: Event) => void)>;
  cells: HTMLTableCellElement[];
}

export function reflowTable(
  attributes: Record<string, string>,
  headers: Array<string | { label: string; numeric: boolean }>,
  rows: ReflowRow[],
  ...after: Child[]
): HTMLElement {
  const headerCells = headers.map((header) =>
    typeof header === 'string'
      ? h('th', {}, header)
      : h('th', { class: header.numeric ? 'num' : '' }, header.label),
  );
  for (const row of rows) {
    for (const cell of row.cells) {
      // One box for the value, so a cell holding several lines stays one column beside its label.
      const value = h('div', { class: 'cell' });
      value.append(...cell.childNodes);
      cell.append(value);
    }
  }
  return scrollBox(
    h(
      'table',
      { class: 'reflow', ...attributes },
      h('thead', {}, h('tr', {}, ...headerCells)),
      h('tbody', {}, ...rows.map((row) => h('tr', row.attributes, ...row.cells))),
    ),
    ...after,
  );
}
