/**
 * Model calls attached to Runs (SPEC.md 4.1 rule 3, 5, 7; DESIGN "Cost and budgets"): scopes,
 * not-found and not-active Runs, budget admission on the worst case, fail-closed store outages, and
 * the Run view after settlement, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import type { StoreKind } from '../support/gateway.js';
import { describePostgres } from '../support/postgres.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import {
  auditOfRun,
  eventually,
  expectVendoraError,
  Governance,
  messageBody,
  PRICE,
  parseSse,
  postMessages,
  priced,
  reservationFor,
  startGateway,
} from './support.js';

const DIRECT = 'vendora.messages.2023-06-01';
const MODEL = `m:${DIRECT}`;
const UPSTREAM = `up-${DIRECT}`;

function suite(kind: StoreKind): void {
  let gateway: SimulatedGateway;
  let key: string;
  let governance: Governance;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    gateway = await startGateway({ store: kind, clock });
    key = await gateway.key();
    governance = new Governance(gateway.url, key);
  });
  afterAll(async () => {
    await gateway?.close();
  });
  beforeEach(() => {
    clock.set(Math.max(clock.now(), Date.now()));
    gateway.simulator.reset();
    gateway.simulator.clearRequests();
  });

  describe('attaching a Run', () => {
    it('needs both run:attach and inference (403 gateway_key_scope_denied otherwise), before any upstream byte', async () => {
      const run = await governance.run(1_000_000);
      for (const scopes of [['inference'], ['run:attach'], ['inference', 'governance:read']]) {
        const limited = await gateway.key('prj_a', scopes);
        const result = await postMessages(gateway.url, limited, messageBody(MODEL), {
          'x-svc-run-id': run.id,
        });
        expectVendoraError(result, 403, 'gateway_key_scope_denied', { type: 'permission_error' });
      }
      expect(gateway.simulator.requests()).toHaveLength(0);
      const both = await gateway.key('prj_a', ['inference', 'run:attach']);
      const result = await postMessages(gateway.url, both, messageBody(MODEL), { 'x-svc-run-id': run.id });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
    });

    it("an unknown Run and another Project's Run both answer 404 run_not_found with the same body", async () => {
      const other = new Governance(gateway.url, await gateway.key('prj_b'));
      const foreign = await other.run(1_000_000);
      const unknown = await postMessages(gateway.url, key, messageBody(MODEL), {
        'x-svc-run-id': 'run_00000000000000000000000000',
      });
      const crossProject = await postMessages(gateway.url, key, messageBody(MODEL), {
        'x-svc-run-id': foreign.id,
      });
      expectVendoraError(unknown, 404, 'run_not_found', { type: 'not_found_error' });
      expectVendoraError(crossProject, 404, 'run_not_found', { type: 'not_found_error' });
      expect({ ...crossProject.body, request_id: undefined }).toEqual({
        ...unknown.body,
        request_id: undefined,
      });
      expect(crossProject.body.error.message).not.toContain(foreign.id);
      expect(gateway.simulator.requests()).toHaveLength(0);
      expect((await other.getRun(foreign.id)).reserved_micros_usd).toBe(0);
    });

    it('a closed Run answers 409 run_not_active', async () => {
      const run = await governance.run(1_000_000);
      await governance.closeRun(run.id);
      const result = await postMessages(gateway.url, key, messageBody(MODEL), { 'x-svc-run-id': run.id });
      expectVendoraError(result, 409, 'run_not_active', { type: 'invalid_request_error' });
      expect(gateway.simulator.requests()).toHaveLength(0);
    });

    it('an expired Run answers 409 run_not_active', async () => {
      const run = await governance.run(1_000_000, 60);
      clock.advance(61_000);
      const result = await postMessages(gateway.url, key, messageBody(MODEL), { 'x-svc-run-id': run.id });
      expectVendoraError(result, 409, 'run_not_active', { type: 'invalid_request_error' });
      expect(gateway.simulator.requests()).toHaveLength(0);
      expect((await governance.getRun(run.id)).status).toBe('expired');
    });

    it('a reservation that does not fit: 403 run_budget_exceeded, nothing upstream; exactly fitting is admitted', async () => {
      const body = messageBody(MODEL, { max_tokens: 1000 });
      const reservation = reservationFor(body);
      const tight = await governance.run(reservation - 1);
      const refused = await postMessages(gateway.url, key, body, { 'x-svc-run-id': tight.id });
      expectVendoraError(refused, 403, 'run_budget_exceeded', { type: 'permission_error' });
      expect(refused.body.error.message).toContain(String(reservation));
      expect(gateway.simulator.requests()).toHaveLength(0);
      const tightAfter = await governance.getRun(tight.id);
      expect([tightAfter.committed_micros_usd, tightAfter.reserved_micros_usd]).toEqual([0, 0]);

      const exact = await governance.run(reservation);
      const admitted = await postMessages(gateway.url, key, body, { 'x-svc-run-id': exact.id });
      expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
      const audit = await auditOfRun(gateway.store, exact.id);
      expect(audit[0]!.reservationMicrosUsd).toBe(reservation);
    });
  });

  describe('the Run after settlement', () => {
    it('committed equals the priced usage the upstream reported; reserved 0; remaining and budget_state as DESIGN defines', async () => {
      const usage = {
        input_tokens: 1234,
        output_tokens: 567,
        cache_creation_input_tokens: 89,
        cache_read_input_tokens: 1011,
      };
      gateway.simulator.setBehaviour({ usage }, { model: UPSTREAM });
      const budget = 1_000_000;
      const run = await governance.run(budget);
      const first = await postMessages(gateway.url, key, messageBody(MODEL, { max_tokens: 1000 }), {
        'x-svc-run-id': run.id,
      });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.usage).toMatchObject(usage);
      const second = await postMessages(gateway.url, key, messageBody(MODEL, { max_tokens: 1000 }), {
        'x-svc-run-id': run.id,
      });
      expect(second.status).toBe(200);
      const each = priced(PRICE, { input: 1234, output: 567, cacheWrite: 89, cacheRead: 1011 });
      expect(each).toBe(
        Math.ceil((1234 * 3_000_000 + 567 * 15_000_000 + 89 * 3_750_000 + 1011 * 300_000) / 1e6),
      );
      const view = await governance.getRun(run.id);
      expect(view).toMatchObject({
        budget_micros_usd: budget,
        committed_micros_usd: 2 * each,
        reserved_micros_usd: 0,
        unknown_attempts: 0,
        budget_state: 'available',
        remaining_micros_usd: budget - 2 * each,
        status: 'active',
      });
      const audit = await auditOfRun(gateway.store, run.id);
      expect(audit.map((entry) => entry.costMicrosUsd)).toEqual([each, each]);
      expect(
        audit.every((entry) => entry.costMicrosUsd <= entry.reservationMicrosUsd && !entry.overran),
      ).toBe(true);
    });

    it('fully_reserved while a call holds the rest of the budget, depleted once an unknown attempt commits it all', async () => {
      gateway.simulator.setBehaviour(
        { eventDelayMs: 150, deltas: 4, dropAfterEvents: 6 },
        { model: UPSTREAM },
      );
      const body = messageBody(MODEL, { stream: true, max_tokens: 500 });
      const reservation = reservationFor(body);
      const run = await governance.run(reservation);
      const response = fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'vendora-version': '2023-06-01',
          'content-type': 'application/json',
          'x-svc-run-id': run.id,
        },
        body: JSON.stringify(body),
      });
      const during = await eventually(async () => {
        const view = await governance.getRun(run.id);
        return view.reserved_micros_usd > 0 ? view : undefined;
      });
      expect(during).toMatchObject({
        reserved_micros_usd: reservation,
        committed_micros_usd: 0,
        budget_state: 'fully_reserved',
        remaining_micros_usd: 0,
      });
      const refused = await postMessages(gateway.url, key, messageBody(MODEL), { 'x-svc-run-id': run.id });
      expectVendoraError(refused, 403, 'run_budget_exceeded');
      const events = parseSse(await (await response).text());
      expect(events.at(-1)?.event).toBe('error');
      const after = await eventually(async () => {
        const view = await governance.getRun(run.id);
        return view.reserved_micros_usd === 0 ? view : undefined;
      });
      expect(after).toMatchObject({
        committed_micros_usd: reservation,
        unknown_attempts: 1,
        budget_state: 'depleted',
        remaining_micros_usd: 0,
      });
    });
  });

  describe('store unreachable', () => {
    it('503 run_governance_unavailable, and the upstream receives nothing', async () => {
      const run = await governance.run(1_000_000);
      const warm = await postMessages(gateway.url, key, messageBody(MODEL), { 'x-svc-run-id': run.id });
      expect(warm.status).toBe(200);
      gateway.simulator.clearRequests();
      await gateway.store.close();
      for (const headers of [{ 'x-svc-run-id': run.id as string }, {} as Record<string, string>]) {
        const result = await postMessages(gateway.url, key, messageBody(MODEL), headers);
        expectVendoraError(result, 503, 'run_governance_unavailable', { type: 'api_error' });
        expect(result.headers.get('retry-after')).toBe('1');
        // The reservation failed after its attempt id was assigned: the answer names it.
        expect(result.headers.get('svc-attempt-id')).toMatch(/^att_/);
      }
      // The same in the vendorb dialect (/v1/responses).
      const responses = await fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-svc-run-id': run.id,
        },
        body: JSON.stringify({ model: MODEL, input: 'hi', max_output_tokens: 16 }),
      });
      expect(responses.status).toBe(503);
      expect(responses.headers.get('retry-after')).toBe('1');
      expect(responses.headers.get('svc-attempt-id')).toMatch(/^att_/);
      expect(await responses.json()).toMatchObject({ error: { code: 'run_governance_unavailable' } });
      const count = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(count.status).toBe(503);
      expect(gateway.simulator.requests()).toHaveLength(0);
    });
  });
}

describe('Runs and the ledger [sqlite]', () => suite('sqlite'));
describePostgres('Runs and the ledger [postgres]', () => suite('postgres'));
