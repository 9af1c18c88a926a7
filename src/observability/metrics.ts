/**
 * The Prometheus registry of one gateway process (prom-client), built from METRIC_DEFINITIONS.
 * A private Registry, not prom-client's global one, so two gateways in one process (tests) never
 * share figures. Label values that are not fixed by the code pass through `bounded()`: past
 * MAX_VALUES_PER_LABEL distinct values a label reads `other`, so a misconfiguration or an
 * unexpected upstream string can never grow the series count without limit.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRIC_DEFINITIONS, type MetricDefinition, type MetricName } from './metric-definitions.js';

export const MAX_VALUES_PER_LABEL = 256;

type Instrument = Counter<string> | Gauge<string> | Histogram<string>;

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly instruments = new Map<MetricName, Instrument>();
  private readonly seen = new Map<string, Set<string>>();
  private readonly refreshers: Array<() => void> = [];

  constructor() {
    for (const definition of METRIC_DEFINITIONS as readonly MetricDefinition[])
      this.instruments.set(definition.name as MetricName, build(definition, this.registry));
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

  get contentType(): string {
    return this.registry.contentType;
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
      return new Counter(common);
    case 'gauge':
      return new Gauge(common);
    case 'histogram':
      return new Histogram({ ...common, buckets: [...(definition.buckets ?? [])] });
    default: {
      const never: never = definition.type;
      throw new Error(`unknown metric type ${String(never)}`);
    }
  }
}
