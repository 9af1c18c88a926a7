/**
 * RFC 4180 CSV of report rows: a header line, CRLF line ends, fields quoted when they need it.
 *
 * Formula injection (OWASP "CSV Injection"): a text cell starting with `=`, `+`, `-`, `@`, a tab or
 * a carriage return is one a spreadsheet may run as a formula, so it is written with a single quote
 * in front and quoted (`=1+1` -> `"'=1+1"`). Numbers the gateway computes (JavaScript numbers: every
 * figure column) are written as they are, a negative one included: they cannot be formulas, and a
 * finance sheet needs them as numbers. Text that only looks numeric (`-5` as an Outcome value) is
 * still text and still escaped (docs/decisions.md).
 */
export type CsvValue = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;

function field(value: CsvValue): string {
  if (typeof value === 'number') return String(value);
  if (value === null || value === undefined) return '';
  const text = String(value);
  if (FORMULA_START.test(text)) return `"'${text.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, CsvValue>>): string {
  const lines = [columns.map(field).join(',')];
  for (const row of rows) lines.push(columns.map((column) => field(row[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
