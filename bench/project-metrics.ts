/**
 * The cost of one scrape of GET /metrics, in process: a Project's view (its own series only)
 * against the whole process's view, with 200 Projects x 10 aliases x 3 connections of series.
 * Usage: node --import tsx bench/project-metrics.ts
 */
import { GatewayMetrics } from '../src/observability/metrics.js';

const metrics = new GatewayMetrics();
for (let project = 0; project < 200; project++)
  for (let alias = 0; alias < 10; alias++)
    for (let connection = 0; connection < 3; connection++) {
      const labels = { project: `prj_${project}`, alias: `alias-${alias}`, connection: `conn-${connection}` };
      metrics.counterCell('svc_cost_micros_usd_total', labels).inc(5);
      metrics.counterCell('svc_settlements_total', { ...labels, outcome: 'completed' }).inc(1);
      metrics.counterCell('svc_reservations_admitted_total', { ...labels, endpoint: '/v1/messages' }).inc(1);
    }

async function time(label: string, scrape: () => Promise<string>): Promise<void> {
  for (let index = 0; index < 20; index++) await scrape();
  const started = performance.now();
  let bytes = 0;
  for (let index = 0; index < 100; index++) bytes = (await scrape()).length;
  const each = (performance.now() - started) / 100;
  console.log(`${label}: ${each.toFixed(2)} ms per scrape, ${bytes} bytes`);
}

await time('whole process (18,000 Project series)', () => metrics.exposition());
await time('one Project', () => metrics.projectExposition('prj_7'));
