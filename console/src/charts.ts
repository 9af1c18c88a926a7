/** The two chart kinds of the console, on uPlot: stacked bars over time, and grouped bars per value. */
import uPlot from 'uplot';
import { usd } from './format.js';

const PALETTE = ['#2f6fd0', '#f0a020', '#2e9e6a', '#c0392b', '#8e5cc2', '#16a2b8', '#7a8797', '#d35fa0'];
export const colour = (index: number) => PALETTE[index % PALETTE.length]!;

/** The chart's width: its card's content box (the card's padding is 16 px, 12 px on a phone). */
function width(target: HTMLElement): number {
  const style = getComputedStyle(target);
  const padding = Number.parseFloat(style.paddingLeft) + Number.parseFloat(style.paddingRight);
  return Math.max(200, Math.floor(target.clientWidth - padding));
}

/** Keeps a chart as wide as its card when the window (a phone turned, a resized tab) changes. */
function fitted(chart: uPlot, target: HTMLElement): uPlot {
  let last = width(target);
  let shown = false;
  // A chart may be drawn before its card is on the page: it is sized once the card is laid out,
  // and observed until the page replaces it.
  const observer = new ResizeObserver(() => {
    if (!chart.root.isConnected) {
      if (shown) observer.disconnect();
      return;
    }
    shown = true;
    const next = width(target);
    if (next !== last) {
      last = next;
      chart.setSize({ width: next, height: chart.height });
    }
  });
  observer.observe(target);
  return chart;
}

/** Stacked bars per time bucket: `series` values are drawn on top of each other; the legend shows each series' own value. */
export function stackedChart(
  target: HTMLElement,
  times: number[],
  series: Array<{ label: string; values: number[] }>,
  money: boolean,
): uPlot {
  const stacked: number[][] = [];
  let running = times.map(() => 0);
  for (const one of series) {
    running = running.map((sum, index) => sum + (one.values[index] ?? 0));
    stacked.push(running);
  }
  const order = series.map((_, index) => index).reverse();
  const bars = uPlot.paths.bars!({ size: [0.7, 48] });
  const format = (value: number) => (money ? usd(Math.round(value)) : String(Math.round(value)));
  const chart = new uPlot(
    {
      width: width(target),
      height: 260,
      cursor: { drag: { x: false, y: false } },
      series: [
        {},
        ...order.map((index) => ({
          label: series[index]!.label,
          stroke: colour(index),
          fill: `${colour(index)}cc`,
          width: 1,
          paths: bars,
          points: { show: false },
          value: (_u: uPlot, _v: number | null, _s: number, row: number | null) =>
            row === null ? '—' : format(series[index]!.values[row] ?? 0),
        })),
      ],
      axes: [
        {},
        {
          size: 80,
          values: (_u, ticks) => ticks.map(format),
          // Counts get whole-number ticks only.
          ...(money
            ? {}
            : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000] }),
        },
      ],
    },
    [times, ...order.map((index) => stacked[index]!)],
    target,
  );
  return fitted(chart, target);
}

function clip(label: string, characters: number): string {
  return label.length <= characters ? label : `${label.slice(0, characters - 1)}…`;
}

/** Grouped bars over categories (x = 0..n-1, labelled). */
export function barChart(
  target: HTMLElement,
  categories: string[],
  series: Array<{ label: string; values: Array<number | null> }>,
): uPlot {
  const x = categories.map((_, index) => index);
  const bars = series.map((_, index) =>
    uPlot.paths.bars!({
      size: [0.8 / series.length, 80],
      align: series.length === 1 ? 0 : index === 0 ? -1 : 1,
    }),
  );
  const chart = new uPlot(
    {
      width: width(target),
      height: 260,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: false, range: [-0.6, categories.length - 0.4] } },
      series: [
        { label: 'value', value: (_u, v) => (v === null ? '—' : (categories[v] ?? '')) },
        ...series.map((one, index) => ({
          label: one.label,
          stroke: colour(index),
          fill: `${colour(index)}cc`,
          paths: bars[index],
          points: { show: false },
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : usd(v)),
        })),
      ],
      axes: [
        {
          splits: () => x,
          // Labels are clipped to their bar's width, so a phone's narrow chart never overlaps them.
          values: (u, ticks) => {
            const room = Math.max(3, Math.floor(u.bbox.width / devicePixelRatio / categories.length / 7));
            return ticks.map((tick) => clip(categories[tick] ?? '', room));
          },
        },
        { size: 80, values: (_u, ticks) => ticks.map((tick) => usd(Math.round(tick))) },
      ],
    },
    [x, ...series.map((one) => one.values)],
    target,
  );
  return fitted(chart, target);
}
