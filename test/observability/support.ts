/** Helpers for the observability tests: scrape and parse /metrics, and sample lookups. */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { expect } from 'vitest';
import { startMetricsListener } from '../../src/http/metrics-routes.js';
import type { GatewayMetrics } from '../../src/observability/metrics.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A strict reading of the Prometheus text exposition format (0.0.4): every family announced by
 * HELP then TYPE before its samples, every sample line `name{label="value",...} number` with a
 * name that belongs to the announced family, label names and values well formed, no duplicates.
 */
export function strictSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const seen = new Set<string>();
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
  let family: string | undefined;
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue; // empty lines are ignored by the format
    const help = /^# HELP ([^ ]+) (.*)$/.exec(line);
    if (help) {
      expect(help[1]).toMatch(name);
      expect(types.has(help[1]!)).toBe(false);
      family = help[1];
      continue;
    }
    const type = /^# TYPE ([^ ]+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      expect(type[1]).toBe(family);
      types.set(type[1]!, type[2]!);
      continue;
    }
    expect(line.startsWith('#'), line).toBe(false);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/.exec(line);
    expect(sample, `not a sample line: ${line}`).not.toBeNull();
    const [, sampleName, labelText, value] = sample!;
    const kind = types.get(family!);
    const allowed =
      kind === 'histogram' ? [`${family}_bucket`, `${family}_sum`, `${family}_count`] : [family];
    expect(allowed, line).toContain(sampleName);
    const labels: Record<string, string> = {};
    if (labelText) {
      const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/y;
      let at = 0;
      while (at < labelText.length) {
        pair.lastIndex = at;
        const match = pair.exec(labelText);
        expect(match, `bad labels in ${line}`).not.toBeNull();
        labels[match![1]!] = match![2]!;
        at = pair.lastIndex;
      }
    }
    const key = `${sampleName}${JSON.stringify(Object.entries(labels).sort())}`;
    expect(seen.has(key), `duplicate ${line}`).toBe(false);
    seen.add(key);
    samples.push({ name: sampleName!, labels, value: Number(value) });
  }
  // The same text read by a third-party parser of the format.
  const families = parsePrometheusTextFormat(text) as Array<{ name: string; type: string }>;
  expect(new Set(families.map((entry) => entry.name))).toEqual(new Set(types.keys()));
  return samples;
}

/** Sum of the samples named `name` whose labels include `match`. */
export function total(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

/**
 * The whole process's view (every Project and the process-wide families), read as Prometheus reads
 * it: over HTTP from a metrics listener (`metrics.listen`) on a free loopback port.
 */
export async function scrapeListener(metrics: GatewayMetrics): Promise<Sample[]> {
  const listener = await startMetricsListener(metrics, { host: '127.0.0.1', port: 0 });
  try {
    const response = await fetch(`${listener.url}/metrics`);
    expect(response.status).toBe(200);
    return strictSamples(await response.text());
  } finally {
    await listener.close();
  }
}
