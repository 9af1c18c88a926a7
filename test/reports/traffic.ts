/**
 * Known traffic for the report tests, the browser test and the demo: Work Units with Runs, model
 * calls on two aliases (one of them made unknown by a dropped connection), Outcomes with a revision,
 * a closed Work Unit and a Work Unit without Outcome.
 */
import { expect } from 'vitest';
import { Api, type Json } from '../governance/support.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';

export const VENDORA = 'm:vendora.messages.2023-06-01';
export const CHAT = 'm:compat.chat-embeddings.v1';

export async function modelCall(gateway: SimulatedGateway, key: string, runId: string, model: string) {
  return fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      'x-svc-run-id': runId,
    },
    body: JSON.stringify({
      model,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Summarise the ticket.' }],
    }),
  });
}

export interface Traffic {
  api: Api;
  workUnits: Json[];
  runs: Json[];
}

export async function driveTraffic(gateway: SimulatedGateway, key: string): Promise<Traffic> {
  const api = new Api(gateway.url, key);
  const workUnits: Json[] = [];
  const runs: Json[] = [];
  for (let unit = 0; unit < 5; unit++) {
    const workUnit = await api.createWorkUnit();
    workUnits.push(workUnit);
    const run = await api.createRun(workUnit.id, { budget_micros_usd: 2_000_000 });
    runs.push(run);
    for (let call = 0; call <= unit; call++) {
      gateway.simulator.setBehaviour(
        {
          usage: {
            input_tokens: 100 + 37 * unit + call,
            output_tokens: 11 * (call + 1),
            cache_read_input_tokens: unit,
          },
        },
        { times: 1 },
      );
      const response = await modelCall(gateway, key, run.id, call % 2 === 0 ? VENDORA : CHAT);
      expect(response.status, await response.text()).toBe(200);
    }
  }
  // One attempt whose cost cannot be known: the upstream drops the connection after receiving it.
  gateway.simulator.setBehaviour({ dropBeforeResponse: true }, { times: 1 });
  const dropped = await modelCall(gateway, key, runs[1]!.id, VENDORA);
  await dropped.text();
  expect(dropped.status).toBeGreaterThanOrEqual(500);

  // Two reservations refused by the budget: a Run too small for any call.
  const tiny = await api.createRun(workUnits[4]!.id, { budget_micros_usd: 10 });
  for (let attempt = 0; attempt < 2; attempt++) {
    const refused = await modelCall(gateway, key, tiny.id, VENDORA);
    expect(refused.status, await refused.text()).toBe(403);
  }

  const outcome = (definition: string, value: unknown, supersedes?: string) => ({
    definition_id: definition,
    value,
    observed_at: new Date().toISOString(),
    ...(supersedes ? { supersedes_outcome_id: supersedes } : {}),
  });
  await api.reportOk(workUnits[0]!.id, outcome('odef_resolved', true));
  await api.closeWorkUnit(workUnits[1]!.id);
  await api.reportOk(workUnits[1]!.id, outcome('odef_resolved', true));
  await api.reportOk(workUnits[2]!.id, outcome('odef_resolved', false));
  const first = await api.reportOk(workUnits[3]!.id, outcome('odef_resolved', false));
  await api.reportOk(workUnits[3]!.id, outcome('odef_resolved', true, first.id));
  await api.reportOk(workUnits[0]!.id, outcome('odef_csat', 'happy'));
  await api.reportOk(workUnits[2]!.id, outcome('odef_csat', 'unhappy'));
  await api.reportOk(workUnits[3]!.id, outcome('odef_csat', 'happy'));
  return { api, workUnits, runs };
}
