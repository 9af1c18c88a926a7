/**
 * The Prometheus registry of one gateway process (prom-client), built from METRIC_DEFINITIONS.
 * A private Registry, not prom-client's global one, so two gateways in one process (tests) never
 * share figures. Label values that are not fixed by the code pass through `bounded()`: past
 * MAX_VALUES_PER_LABEL distinct values a label reads `other`, so a misconfiguration or an
 * unexpected upstream string can never grow the series count without limit.
 *
 * Hot path: prom-client's label children re-hash their labels, validate them and allocate on every
 * inc() and observe(). The per-call series (attempts, store operations, HTTP requests) use cells
 * instead (`counterCell`, `histogramCell`): resolved once per label set, an increment is a number
 * addition and an observation a bucket search; prom-client reads them when it renders a scrape.
 */
import {
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  type MetricValueWithName,
  Registry,
} from 'prom-client';
import { METRIC_DEFINITIONS, type MetricDefinition, type MetricName } from './metric-definitions.js';

export const MAX_VALUES_PER_LABEL = 256;

type Instrument = Counter<string> | Gauge<string> | Histogram<string>;

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly instruments = new Map<MetricName, Instrument>();
  private readonly seen = new Map<string, Set<string>>();
  private readonly refreshers: Array<() => void> = [];
  /** The families labelled by `project`, which a Project's view shows (projectExposition). */
  private readonly projectFamilies: CellCounter[] = [];

  constructor() {
    for (const definition of METRIC_DEFINITIONS as readonly MetricDefinition[]) {
      const instrument = build(definition, this.registry);
      this.instruments.set(definition.name as MetricName, instrument);
      if (!definition.labels.includes('project')) continue;
      // A Project's view renders counters only; a per-Project gauge or histogram needs its renderer first.
      if (!(instrument instanceof CellCounter))
        throw new Error(`${definition.name}: a project label needs a counter`);
      this.projectFamilies.push(instrument);
    }
  }

  counter(name: MetricName): Counter<string> {
    return this.instruments.get(name) as Counter<string>;
  }

  gauge(name: MetricName): Gauge<string> {
    return this.instruments.get(name) as Gauge<string>;
  }

  histogram(name: MetricName): Histogram<string> {
    return this.instruments.get(name) as Histogram<string>;
  }

  /** The cell of one counter series: resolve it once per label set, then inc() per call. */
  counterCell(name: MetricName, labels: Labels): CounterCell {
    return (this.instruments.get(name) as CellCounter).cell(labels);
  }

  /** The cell of one histogram series (every histogram is observed through cells). */
  histogramCell(name: MetricName, labels: Labels): HistogramCell {
    return (this.instruments.get(name) as CellHistogram).cell(labels);
  }

  /** `value`, or `other` once `label` has seen MAX_VALUES_PER_LABEL distinct values. */
  bounded(label: string, value: string): string {
    let values = this.seen.get(label);
    if (!values) {
      values = new Set();
      this.seen.set(label, values);
    }
    if (values.has(value)) return value;
    if (values.size >= MAX_VALUES_PER_LABEL) return 'other';
    values.add(value);
    return value;
  }

  /** Runs `refresh` before every scrape (gauges read from elsewhere, such as pool figures). */
  beforeScrape(refresh: () => void): void {
    this.refreshers.push(refresh);
  }

  /** The exposition text (Prometheus text format 0.0.4). */
  exposition(): Promise<string> {
    for (const refresh of this.refreshers) refresh();
    return this.registry.metrics();
  }

  /**
   * One Project's view (GET /metrics with a Project's key): the families labelled by `project`, with
   * only the series of `projectId`. Every other family (upstream errors, fallbacks, store, pools,
   * jobs, HTTP, the GenAI histograms) sums every Project's traffic and is left out: it is the
   * operator's view, served whole on `metrics.listen`. Cost: one pass over these counters' cells,
   * copying only the Project's series (docs/observability.md has the figures).
   */
  async projectExposition(projectId: string): Promise<string> {
    const lines: string[] = [];
    for (const family of this.projectFamilies) {
      const { name, help, type, values } = await family.series('project', projectId);
      lines.push(`# HELP ${name} ${escapeText(help)}`, `# TYPE ${name} ${type}`);
      for (const { labels, value } of values) {
        const pairs = Object.entries(labels).map(
          ([label, text]) => `${label}="${escapeText(String(text)).replace(/"/g, '\\"')}"`,
        );
        lines.push(`${name}{${pairs.join(',')}} ${value}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** One counter series, incremented without prom-client's per-call label hashing. */
export interface CounterCell {
  inc(value?: number): void;
}

/** One histogram series, observed without prom-client's per-call label hashing. */
export interface HistogramCell {
  observe(value: number): void;
}

type Labels = Record<string, string>;

/** The exposition format's escapes (HELP text and label values; label values also escape `"`). */
function escapeText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function seriesKey(names: readonly string[], labels: Record<string, unknown>): string {
  return names.map((name) => String(labels[name] ?? '')).join('\u0000');
}

class CountingCell implements CounterCell {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(value = 1): void {
    this.value += value;
  }
}

/** A prom-client Counter whose per-call series are cells, merged with its other series at scrape time. */
class CellCounter extends Counter<string> {
  private readonly cells = new Map<string, CountingCell>();

  constructor(
    configuration: ConstructorParameters<typeof Counter<string>>[0],
    private readonly names: readonly string[],
  ) {
    super(configuration);
  }

  cell(labels: Labels): CountingCell {
    const key = seriesKey(this.names, labels);
    let cell = this.cells.get(key);
    if (!cell) {
      cell = new CountingCell({ ...labels });
      this.cells.set(key, cell);
    }
    return cell;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    return this.series();
  }

  /** The series (prom-client's and the cells', merged), only those whose `label` is `value` when given. */
  async series(label?: string, value?: string): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const base = await super.get();
    if (this.cells.size === 0 && label === undefined) return base;
    const merged = new Map<string, MetricValue<string>>();
    for (const series of base.values) {
      if (label !== undefined && series.labels[label] !== value) continue;
      merged.set(seriesKey(this.names, series.labels), { ...series, labels: { ...series.labels } });
    }
    for (const [key, cell] of this.cells) {
      if (cell.value === 0 || (label !== undefined && cell.labels[label] !== value)) continue;
      const known = merged.get(key);
      if (known) known.value += cell.value;
      else merged.set(key, { labels: cell.labels, value: cell.value });
    }
    return { ...base, values: [...merged.values()] };
  }
}

class BucketCell implements HistogramCell {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let index = 0; index < bounds.length; index++) {
      if (value <= bounds[index]!) {
        this.counts[index]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

type RenderedValue = MetricValueWithName<string> & { sharedLabels: Labels };

interface Rendered {
  name: string;
  help: string;
  type: 'histogram';
  values: RenderedValue[];
  aggregator: 'sum';
}

/** A prom-client Histogram whose series are all cells (observed through histogramCell only). */
class CellHistogram extends Histogram<string> {
  private readonly cells = new Map<string, BucketCell>();

  private readonly metricName: string;
  private readonly metricHelp: string;

  constructor(
    configuration: ConstructorParameters<typeof Histogram<string>>[0],
    private readonly names: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(configuration);
    this.metricName = configuration.name;
    this.metricHelp = configuration.help;
  }

  cell(labels: Labels): BucketCell {
    const key = seriesKey(this.names, labels);
    let cell = this.cells.get(key);
    if (!cell) {
      cell = new BucketCell({ ...labels }, this.bounds);
      this.cells.set(key, cell);
    }
    return cell;
  }

  /** What the registry renders: each value's `labels` (only `le`) apart from its series' `sharedLabels`. */
  async getForPromString(): Promise<Rendered> {
    const values: RenderedValue[] = [];
    const name = this.metricName;
    const bucket = `${name}_bucket`;
    for (const cell of this.cells.values()) {
      if (cell.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += cell.counts[index]!;
        values.push({
          labels: { le: bound },
          sharedLabels: cell.labels,
          value: cumulative,
          metricName: bucket,
        });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.count, metricName: bucket },
        { labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: cell.labels, value: cell.count, metricName: `${name}_count` },
      );
    }
    return { name, help: this.metricHelp, type: 'histogram', values, aggregator: 'sum' };
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const rendered = await this.getForPromString();
    return {
      ...rendered,
      values: rendered.values.map(({ sharedLabels, ...value }) => ({
        ...value,
        labels: { ...value.labels, ...sharedLabels },
      })),
    } as unknown as MetricObjectWithValues<MetricValueWithName<string>>;
  }
}

function build(definition: MetricDefinition, registry: Registry): Instrument {
  const common = {
    name: definition.name,
    help: definition.help,
    labelNames: [...definition.labels],
    registers: [registry],
  };
  switch (definition.type) {
    case 'counter':
      return new CellCounter(common, definition.labels);
    case 'gauge':
      return new Gauge(common);
    case 'histogram': {
      const buckets = [...(definition.buckets ?? [])];
      return new CellHistogram({ ...common, buckets }, definition.labels, buckets);
    }
    default: {
      const never: never = definition.type;
      throw new Error(`unknown metric type ${String(never)}`);
    }
  }
}
