import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROFILES } from '../src/catalogue/profiles.js';
import { renderProfilesDoc } from '../src/catalogue/profiles-doc.js';
import { ERROR_CATALOGUE } from '../src/errors/catalogue.js';
import { renderErrorsDoc } from '../src/errors/errors-doc.js';
import { METRIC_DEFINITIONS } from '../src/observability/metric-definitions.js';
import { createObservability } from '../src/observability/observability.js';
import { renderObservabilityDoc } from '../src/observability/observability-doc.js';

describe('generated documentation', () => {
  it('docs/profiles.md matches the catalogue (run npm run docs)', () => {
    const text = readFileSync('docs/profiles.md', 'utf8');
    expect(text).toBe(renderProfilesDoc());
    for (const row of PROFILES) expect(text).toContain(`\`${row.id}\``);
    expect(PROFILES).toHaveLength(19);
  });

  it('docs/errors.md matches the error catalogue (run npm run docs)', () => {
    const text = readFileSync('docs/errors.md', 'utf8');
    expect(text).toBe(renderErrorsDoc());
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(text).toContain(`\`${code}\``);
  });

  it('docs/observability.md lists every metric the registry exports (run npm run docs)', async () => {
    const text = readFileSync('docs/observability.md', 'utf8');
    expect(text).toBe(renderObservabilityDoc());
    const exported = await createObservability({
      metrics: true,
      tracing: false,
    }).metrics!.registry.getMetricsAsJSON();
    expect(exported.map((metric) => metric.name).sort()).toEqual(
      METRIC_DEFINITIONS.map((metric) => metric.name).sort(),
    );
    for (const metric of exported) expect(text).toContain(`| \`${metric.name}\` |`);
  });
});
