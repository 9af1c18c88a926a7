/**
 * The request log across two PostgreSQL replicas (two gateways, two pools, one database): model
 * calls spread over both, with and without a Run, tagged and not, streamed and not, and a fallback;
 * the log read from either replica holds every call's svc-attempt-id exactly once (the fallback's
 * failed attempt once more, sharing its call_id), and its filters select exactly those calls.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import type { Json } from '../governance/support.js';
import { Governance, messageBody, postMessages } from '../messages/support.js';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { simulatedUpstreamConfig } from '../support/simulated-gateway.js';

const DIRECT = 'vendora.messages.2023-06-01';

describePostgres('request log across two PostgreSQL replicas', () => {
  let database: TestDatabase;
  let sim: Simulator;
  const replicas: TestGateway[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    sim = await startSimulator();
    const options = {
      store: 'postgres' as const,
      databaseUrl: database.url,
      config: simulatedUpstreamConfig(sim.url),
    };
    replicas.push(await startTestGateway(options));
    replicas.push(await startTestGateway(options));
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await sim?.close();
    await database?.drop();
  });

  /** Every attempt of the key's Project, paged through one replica. */
  async function wholeLog(url: string, key: string, query = ''): Promise<Json[]> {
    const attempts: Json[] = [];
    let cursor: string | null = null;
    do {
      const after: string = cursor ? `&after=${encodeURIComponent(cursor)}` : '';
      const page = await call(url, 'GET', `/svc/v1/attempts?limit=3${query}${after}`, { key });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      attempts.push(...(page.body.data as Json[]));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    return attempts;
  }

  it('holds every call of both replicas once, with and without a Run, and filters them', async () => {
    const [first, second] = replicas as [TestGateway, TestGateway];
    const key = await first.key('prj_a');
    const governance = new Governance(first.url, key);
    const unit = (await governance.post('/svc/v1/work-units', { metadata: { team: 'search' } })).body;
    const run = (
      await governance.post('/svc/v1/runs', {
        work_unit_id: unit.id,
        budget_micros_usd: 50_000_000,
        metadata: { customer: 'acme' },
      })
    ).body;
    const plan = Array.from({ length: 16 }, (_, index) => ({
      replica: replicas[index % 2]!,
      withRun: index % 3 === 0,
      tagged: index % 4 === 0,
      stream: index % 5 === 0,
    }));
    const answers = await Promise.all(
      plan.map(async (item) => {
        const headers: Record<string, string> = {};
        if (item.withRun) headers['x-svc-run-id'] = run.id;
        if (item.tagged) headers['svc-tags'] = 'feature=replicas';
        const answer = await postMessages(
          item.replica.url,
          key,
          messageBody(`m:${DIRECT}`, item.stream ? { stream: true } : {}),
          headers,
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        return { ...item, attemptId: answer.headers.get('svc-attempt-id')! };
      }),
    );
    sim.setBehaviour({ status: 503 }, { model: 'up-first', times: 1 });
    const fellBack = await postMessages(second.url, key, messageBody('fallback'), { 'x-svc-run-id': run.id });
    expect(fellBack.status, JSON.stringify(fellBack.body)).toBe(200);
    const fallbackId = fellBack.headers.get('svc-attempt-id')!;

    for (const replica of replicas) {
      const log = await wholeLog(replica.url, key);
      expect(log).toHaveLength(answers.length + 2);
      const ids = log.map((attempt) => attempt.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const answer of answers) expect(ids).toContain(answer.attemptId);
      expect(ids).toContain(fallbackId);
      const answered = log.find((attempt) => attempt.id === fallbackId)!;
      const tried = log.filter((attempt) => attempt.call_id === answered.call_id);
      expect(tried.map((attempt) => attempt.outcome).sort()).toEqual(['completed', 'refused_upstream']);
      expect(answered.route.tried).toHaveLength(1);
      for (const attempt of log) expect(attempt.state).toBe('settled');
      const streamed = log.find(
        (attempt) => attempt.id === answers.find((answer) => answer.stream)!.attemptId,
      )!;
      expect(streamed.timings.first_byte_ms).toBeGreaterThanOrEqual(0);
      expect(streamed.upstream_request_id).toMatch(/^req_/);
    }
    const ofRun = (await wholeLog(second.url, key, `&run_id=${run.id}`)).map((attempt) => attempt.id).sort();
    const expectedRun = answers.filter((answer) => answer.withRun).map((answer) => answer.attemptId);
    expect(ofRun).toHaveLength(expectedRun.length + 2);
    for (const id of [...expectedRun, fallbackId]) expect(ofRun).toContain(id);
    expect((await wholeLog(first.url, key, `&metadata.customer=acme&metadata.team=search`)).length).toBe(
      ofRun.length,
    );
    const tagged = (await wholeLog(first.url, key, '&tag.feature=replicas'))
      .map((attempt) => attempt.id)
      .sort();
    expect(tagged).toEqual(
      answers
        .filter((answer) => answer.tagged)
        .map((answer) => answer.attemptId)
        .sort(),
    );
    const withoutRun = (await wholeLog(second.url, key)).filter((attempt) => attempt.run_id === null);
    expect(withoutRun.map((attempt) => attempt.id).sort()).toEqual(
      answers
        .filter((answer) => !answer.withRun)
        .map((answer) => answer.attemptId)
        .sort(),
    );
    for (const attempt of withoutRun) expect(attempt.metadata).toBeNull();
  }, 60_000);
});
