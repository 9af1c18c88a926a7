/** Exact display of micro-USD (integers): no float arithmetic on amounts. */
export function usd(micros: number): string {
  const negative = micros < 0;
  const digits = String(Math.abs(micros)).padStart(7, '0');
  const dollars = digits.slice(0, -6);
  const fraction = digits.slice(-6).replace(/0{1,4}$/, '');
  return `${negative ? '-' : ''}$${Number(dollars).toLocaleString('en-US')}.${fraction.padEnd(2, '0')}`;
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function shortTime(iso: string | null): string {
  return iso === null ? '—' : iso.replace('T', ' ').slice(0, 19);
}

export function day(iso: string): string {
  return iso.slice(0, 10);
}
