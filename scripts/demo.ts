/**
 * Real traffic for the console against a running quick start (npm start): a few Work Units, each
 * with a Run, model calls attached to it on the `demo` alias, some Work Units closed, and Outcomes
 * (odef_resolved, odef_csat) reported, one of them revised. Nothing is written to the store directly:
 * every step is an ordinary API call, so the console shows exactly what the gateway recorded.
 *
 *   npm run demo            (SVC_URL, default http://127.0.0.1:8080; SVC_GATEWAY_KEY, default the
 *                            quick-start key file data/quickstart-key.txt)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

const url = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const key = process.env.SVC_GATEWAY_KEY ?? readFileSync('data/quickstart-key.txt', 'utf8').trim();
const QUESTIONS = [
  'My invoice shows a duplicate charge for March.',
  'How do I reset the password of a shared account?',
  'The export to CSV stops at 10,000 rows.',
  'Can I move my subscription to another region?',
  'The mobile app logs me out every hour.',
  'Where do I find the audit log of my team?',
];

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function ask(runId: string, question: string, maxTokens: number): Promise<number> {
  const response = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      'x-svc-run-id': runId,
    },
    body: JSON.stringify({
      model: 'demo',
      max_tokens: maxTokens,
      messages: [{ role: 'user', content: question }],
    }),
  });
  await response.text();
  return response.status;
}

async function main() {
  const now = () => new Date().toISOString();
  for (const [index, question] of QUESTIONS.entries()) {
    const unit = await post('/svc/v1/work-units', {});
    const run = await post('/svc/v1/runs', { work_unit_id: unit.id, budget_micros_usd: 200_000 });
    const calls = 1 + (index % 4);
    const statuses: number[] = [];
    for (let call = 0; call < calls; call++)
      statuses.push(await ask(String(run.id), question, 256 * (call + 1)));
    if (index % 3 !== 2) await post(`/svc/v1/work-units/${unit.id}/close`, {});
    if (index < 5) {
      const resolved = index % 4 !== 3;
      const first = await post(`/svc/v1/work-units/${unit.id}/outcomes`, {
        definition_id: 'odef_resolved',
        value: index === 1 ? false : resolved,
        observed_at: now(),
      });
      if (index === 1) {
        // A revision: the ticket was reopened and then solved.
        await post(`/svc/v1/work-units/${unit.id}/outcomes`, {
          definition_id: 'odef_resolved',
          value: true,
          observed_at: now(),
          supersedes_outcome_id: first.id,
        });
      }
      await post(`/svc/v1/work-units/${unit.id}/outcomes`, {
        definition_id: 'odef_csat',
        value: ['happy', 'neutral', 'unhappy'][index % 3],
        observed_at: now(),
      });
    }
    console.log(`${unit.id}  run ${run.id}  calls ${statuses.join(',')}`);
  }
  console.log(`\nOpen ${url}/console and sign in with the Gateway Key (cat data/quickstart-key.txt).`);
}

main().catch((error: unknown) => {
  console.error(`demo: ${(error as Error).message}`);
  console.error(`Is the quick start running (npm start) at ${url}?`);
  process.exit(1);
});
