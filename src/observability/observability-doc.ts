/**
 * Renders docs/observability.md: the prose is observability-doc.md.tmpl, its placeholders filled
 * from the code. The metric table comes from METRIC_DEFINITIONS, so the page lists exactly what
 * the code exports (test/generated-docs.test.ts compares the file with this output).
 */
import { SKIP_CODES } from '../catalogue/eligibility.js';
import { fillDocTemplate } from '../lib/doc-template.js';
import { RATE_LIMITS } from '../limits/rate-limit-scope.js';
import { SETTLEMENT_OUTCOMES } from '../money/settlement.js';
import { ERROR_TYPES } from './error-types.js';
import { METRIC_DEFINITIONS, type MetricDefinition } from './metric-definitions.js';
import { MAX_VALUES_PER_LABEL } from './metrics.js';
import { WELL_FORMED_REQUEST_ID } from './request-id.js';

function metricRows(): string {
  return (METRIC_DEFINITIONS as readonly MetricDefinition[])
    .map((metric) => {
      const labels =
        metric.labels.length > 0 ? metric.labels.map((label) => `\`${label}\``).join(', ') : '(none)';
      const semconv = metric.semconv ? `\`${metric.semconv}\`` : 'ours';
      return `| \`${metric.name}\` | ${metric.type} | ${labels} | ${semconv} | ${metric.help} |`;
    })
    .join('\n');
}

function errorTypeRows(): string {
  return Object.entries(ERROR_TYPES)
    .map(([name, meaning]) => `- \`${name}\`: ${meaning};`)
    .join('\n')
    .replace(/;$/, '.');
}

export function renderObservabilityDoc(): string {
  return fillDocTemplate(new URL('./observability-doc.md.tmpl', import.meta.url), {
    settlementOutcomes: SETTLEMENT_OUTCOMES.map((outcome) => `\`${outcome}\``).join(', '),
    metricRows: metricRows(),
    errorTypeRows: errorTypeRows(),
    skipCodes: SKIP_CODES.map((code) => `\`${code}\``).join(', '),
    rateLimits: Object.entries(RATE_LIMITS)
      .map(([limit, surface]) => `\`${limit}\` (surface \`${surface}\`)`)
      .join(', '),
    maxValuesPerLabel: String(MAX_VALUES_PER_LABEL),
    requestIdPattern: WELL_FORMED_REQUEST_ID.source,
  });
}
