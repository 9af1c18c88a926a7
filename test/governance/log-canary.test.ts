/**
 * Gateway Key secrets never reach the logs. Unique canary secrets (a valid key, an unknown key, a
 * malformed one) are planted in x-api-key, Authorization, body fields, the Idempotency-Key and the
 * query string, through succeeding and failing requests, at the most verbose log level; then no
 * log line may contain any of them.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SCOPES } from '../../src/config/schema.js';
import { newId } from '../../src/lib/ids.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { call, startTestGateway, type TestGateway } from '../support/gateway.js';
import { describeEachStore, newIdempotencyKey, resolvedOutcome } from './support.js';

function canary(label: string): string {
  return `gw_CANARY${label}${randomBytes(20).toString('hex')}`;
}

describeEachStore('governance: log canary', (kind) => {
  let gateway: TestGateway;
  const valid = canary('valid');
  const unknown = canary('unknown');
  const malformed = `gw_CANARYshort${randomBytes(3).toString('hex')}`;
  const canaries = [valid, unknown, malformed];

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind, config: { logging: { level: 'trace' } } });
    await gateway.store.createKey({
      id: newId('key'),
      projectId: 'prj_a',
      secretHash: hashSecret(valid),
      scopes: [...SCOPES],
      label: 'canary',
      createdAt: new Date().toISOString(),
    });
  });
  afterAll(async () => gateway?.close());

  it('no canary appears in any log line, whatever the request did', async () => {
    const statuses = new Set<number>();
    const send = async (method: string, path: string, options: Parameters<typeof call>[3]) => {
      const result = await call(gateway.url, method, path, options);
      statuses.add(result.status);
      return result;
    };
    // Succeeding requests with the valid canary in each header.
    const created = await send('POST', '/svc/v1/work-units', {
      key: valid,
      body: {},
      idempotencyKey: newIdempotencyKey(),
    });
    expect(created.status).toBe(201);
    const unitId = created.body.id as string;
    expect(
      (await send('GET', `/svc/v1/work-units/${unitId}`, { headers: { 'x-api-key': valid } })).status,
    ).toBe(200);
    expect(
      (await send('GET', `/svc/v1/work-units/${unitId}`, { key: valid, headers: { 'x-api-key': valid } }))
        .status,
    ).toBe(200);
    // Failing authentication: unknown, malformed, mismatched, wrong scheme.
    for (const secret of canaries) {
      await send('GET', `/svc/v1/work-units/${unitId}`, { key: secret === valid ? unknown : secret });
      await send('POST', '/svc/v1/work-units', {
        headers: { 'x-api-key': secret === valid ? unknown : secret },
        body: {},
        idempotencyKey: 'k',
      });
      await send('GET', `/svc/v1/work-units/${unitId}`, { headers: { authorization: `Basic ${secret}` } });
      await send('GET', `/svc/v1/work-units/${unitId}`, { headers: { authorization: secret } });
    }
    await send('GET', `/svc/v1/work-units/${unitId}`, { key: valid, headers: { 'x-api-key': unknown } });
    // Canaries in the Idempotency-Key (legal and too long), in body fields, in unknown fields, in the query.
    await send('POST', '/svc/v1/work-units', { key: valid, body: {}, idempotencyKey: valid });
    await send('POST', '/svc/v1/work-units', { key: valid, body: {}, idempotencyKey: valid });
    await send('POST', '/svc/v1/work-units', { key: valid, body: { x: 1 }, idempotencyKey: valid });
    await send('POST', '/svc/v1/work-units', {
      key: valid,
      body: { outcome_definition_ids: ['odef_csat'] },
      idempotencyKey: valid,
    });
    await send('POST', '/svc/v1/work-units', {
      key: valid,
      body: {},
      idempotencyKey: `${valid}${'x'.repeat(255)}`,
    });
    await send('POST', '/svc/v1/work-units', {
      key: valid,
      body: { outcome_definition_ids: [unknown] },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', '/svc/v1/work-units', {
      key: valid,
      body: { [valid]: unknown },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', `/svc/v1/work-units/${unitId}/outcomes`, {
      key: valid,
      body: { ...resolvedOutcome(true), evidence_ref: valid },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', `/svc/v1/work-units/${unitId}/outcomes`, {
      key: valid,
      body: { ...resolvedOutcome(true), evidence_ref: `key=${unknown}`, value: unknown },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', '/svc/v1/runs', {
      key: valid,
      body: { work_unit_id: unknown },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', '/svc/v1/runs', {
      key: valid,
      rawBody: `{"work_unit_id": "${valid}`,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', '/svc/v1/runs', {
      key: valid,
      rawBody: valid,
      headers: { 'content-type': 'text/plain' },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('POST', '/svc/v1/runs', {
      key: valid,
      rawBody: `{"p":"${valid}${' '.repeat(17_000)}"}`,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: newIdempotencyKey(),
    });
    await send('GET', `/svc/v1/runs/run_missing?api_key=${valid}&token=${unknown}`, { key: valid });
    await send('GET', `/healthz?key=${valid}`, {});
    await send('GET', `/svc/v1/nothing?key=${valid}`, { key: unknown });

    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 201, 400, 401, 404, 409]));
    const text = gateway.logs.join('');
    expect(gateway.logs.length).toBeGreaterThan(10);
    expect(text).toContain('request completed');
    for (const secret of canaries) {
      expect(text.includes(secret), `canary ${secret.slice(0, 16)}... found in the logs`).toBe(false);
      // Nor any long fragment of it (a truncated secret is still a leak).
      expect(
        text.includes(secret.slice(3, 30)),
        `fragment of ${secret.slice(0, 16)}... found in the logs`,
      ).toBe(false);
    }
  });
});
