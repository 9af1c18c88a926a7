/** The report period: the last N days up to the end of the current UTC hour (reports take whole hours). */
import { h } from './dom.js';

export type Period = 7 | 30 | 90;
const HOUR = 3_600_000;

export function rangeOf(days: Period): { from: string; to: string } {
  const to = Math.ceil((Date.now() + 1) / HOUR) * HOUR;
  return { from: new Date(to - days * 24 * HOUR).toISOString(), to: new Date(to).toISOString() };
}

export function periodPicker(current: Period, change: (period: Period) => void): HTMLElement {
  return h(
    'span',
    { class: 'segmented' },
    'Last ',
    ...([7, 30, 90] as const).map((days) =>
      h(
        'button',
        { class: days === current ? 'on' : '', 'data-period': String(days), onclick: () => change(days) },
        `${days} days`,
      ),
    ),
  );
}
