/** RFC 4180 CSV of report rows: a header line, CRLF line ends, fields quoted when they need it. */
export type CsvValue = string | number | boolean | null | undefined;

function field(value: CsvValue): string {
  if (typeof value === 'number') return String(value);
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: readonly string[], rows: ReadonlyArray<Record<string, CsvValue>>): string {
  const lines = [columns.map(field).join(',')];
  for (const row of rows) lines.push(columns.map((column) => field(row[column])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
