/**
 * Outcomes over HTTP: report fields and response, value domains, evidence rules (SPEC 8), revision
 * chain (head, 20 revisions, conflicts), provisional. The 30-day window is in time.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  Api,
  describeEachStore,
  expectSvcError,
  newIdempotencyKey,
  OBSERVED_AT,
  resolvedOutcome,
} from './support.js';

const SHA = 'a'.repeat(64);

describeEachStore('governance: Outcomes', (kind) => {
  let gateway: TestGateway;
  let api: Api;
  let keyId: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ store: kind });
    const secret = await gateway.key('prj_a');
    keyId = (await gateway.store.findKeyByHash(hashSecret(secret)))!.id;
    api = new Api(gateway.url, secret);
  });
  afterAll(async () => gateway?.close());

  it('first report: 201 with every Outcome field', async () => {
    const unit = await api.createWorkUnit();
    const result = await api.report(unit.id, {
      ...resolvedOutcome(true),
      evidence_ref: 'TICKET-4711',
      evidence_sha256: SHA,
    });
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({
      work_unit_id: unit.id,
      definition_id: 'odef_resolved',
      definition_version: 1,
      value: true,
      reporter_key_id: keyId,
      observed_at: OBSERVED_AT,
      revision: 1,
      provisional: true,
      evidence_ref: 'TICKET-4711',
      evidence_sha256: SHA,
      supersedes_outcome_id: null,
    });
    expect(result.body.id).toMatch(/^out_[0-9A-Z]{26}$/);
    expect(Number.isInteger(result.body.governance_sequence) && result.body.governance_sequence >= 1).toBe(
      true,
    );
    expect(Date.parse(result.body.ingested_at)).not.toBeNaN();
    expect(result.body.reporter_key_id).not.toBe(api.key);
  });

  it('replay with the same key and body: 200 and the same record, no second record', async () => {
    const unit = await api.createWorkUnit();
    const key = newIdempotencyKey();
    const first = await api.report(unit.id, resolvedOutcome(true), key);
    const replay = await api.report(unit.id, resolvedOutcome(true), key);
    expect([first.status, replay.status]).toEqual([201, 200]);
    expect(replay.body).toEqual(first.body);
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toHaveLength(1);
  });

  it('observed_at with an offset is stored as UTC; a non-RFC 3339 time is 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    const ok = await api.reportOk(unit.id, {
      ...resolvedOutcome(true),
      observed_at: '2025-12-31T13:00:00+01:00',
    });
    expect(ok.observed_at).toBe('2025-12-31T12:00:00.000Z');
    for (const observed_at of [
      'yesterday',
      '2025-12-31',
      '2025-12-31 12:00:00Z',
      '2025-13-45T99:00:00Z',
      1767182400,
    ]) {
      const result = await api.report(unit.id, { ...resolvedOutcome(true), observed_at });
      expectSvcError(result, 400, 'invalid_outcome');
      expect(result.body.error.message).toContain('observed_at');
    }
  });

  it('missing required fields: 400 invalid_outcome naming the field', async () => {
    const unit = await api.createWorkUnit();
    for (const field of ['definition_id', 'value', 'observed_at']) {
      const body: Record<string, unknown> = resolvedOutcome(true);
      delete body[field];
      const result = await api.report(unit.id, body);
      expectSvcError(result, 400, 'invalid_outcome');
      expect(result.body.error.message).toContain(field);
    }
  });

  it('unknown fields on the outcome endpoint: 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    const result = await api.report(unit.id, { ...resolvedOutcome(true), comment: 'x' });
    expectSvcError(result, 400, 'invalid_outcome');
    expect(result.body.error.message).toContain('comment');
  });

  it('BOOLEAN takes only true/false; CATEGORICAL only its allowed values', async () => {
    const unit = await api.createWorkUnit();
    for (const value of ['true', 1, null, 'happy']) {
      const result = await api.report(unit.id, { ...resolvedOutcome(true), value });
      expectSvcError(result, 400, 'invalid_outcome');
    }
    for (const value of ['angry', 'Happy', true, '']) {
      const result = await api.report(unit.id, {
        definition_id: 'odef_csat',
        value,
        observed_at: OBSERVED_AT,
      });
      expectSvcError(result, 400, 'invalid_outcome');
    }
    const csat = await api.reportOk(unit.id, {
      definition_id: 'odef_csat',
      value: 'unhappy',
      observed_at: OBSERVED_AT,
    });
    expect(csat).toMatchObject({ definition_version: 2, value: 'unhappy' });
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toHaveLength(1);
  });

  it('an unknown, disabled or not-frozen Definition: 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    for (const definition_id of ['odef_unknown', 'odef_retired']) {
      const result = await api.report(unit.id, { definition_id, value: true, observed_at: OBSERVED_AT });
      expectSvcError(result, 400, 'invalid_outcome');
      expect(result.body.error.message).toContain('definition_id');
    }
  });

  it('a report on an unknown Work Unit: 404 work_unit_not_found', async () => {
    expectSvcError(
      await api.report('wku_00000000000000000000000000', resolvedOutcome(true)),
      404,
      'work_unit_not_found',
    );
  });

  it('evidence_ref: 128 characters accepted, 129 refused with 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    const ok = await api.reportOk(unit.id, { ...resolvedOutcome(true), evidence_ref: 'e'.repeat(128) });
    expect(ok.evidence_ref).toBe('e'.repeat(128));
    const unit2 = await api.createWorkUnit();
    const result = await api.report(unit2.id, { ...resolvedOutcome(true), evidence_ref: 'e'.repeat(129) });
    expectSvcError(result, 400, 'invalid_outcome');
    expect(result.body.error.message).toContain('evidence_ref');
  });

  it('evidence_ref: URLs, control characters and credential-shaped values are 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    const refused = [
      'https://tickets.example.com/4711',
      'http://x',
      'ftp://files/x',
      'www.example.com/ticket',
      'mailto:someone@example.com',
      'ticket\n4711',
      'ticket\u00004711',
      'ticket\t4711',
      'ticket\u007f',
      'gw_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345',
      'sk-abcdefghijklmnop',
      'AKIAABCDEFGHIJKLMNOP',
      'ghp_abcdefghijklmnopqrstuvwxyz',
      'password=hunter2',
      'Bearer abc.def',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc',
      'Xk9pQ2mZ7vR4tY1wL8nB3cF6hJ0sD5gAqE',
      '',
    ];
    for (const evidence_ref of refused) {
      const result = await api.report(unit.id, { ...resolvedOutcome(true), evidence_ref });
      expectSvcError(result, 400, 'invalid_outcome');
      expect(result.body.error.message, JSON.stringify(evidence_ref)).toContain('evidence_ref');
    }
    expect((await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes).toEqual([]);
    const ok = await api.reportOk(unit.id, {
      ...resolvedOutcome(true),
      evidence_ref: 'CASE-2025-000123/attachment-2',
    });
    expect(ok.evidence_ref).toBe('CASE-2025-000123/attachment-2');
  });

  it('evidence_sha256 must be 64 lowercase hex characters, else 400 invalid_outcome', async () => {
    const unit = await api.createWorkUnit();
    for (const evidence_sha256 of [
      'a'.repeat(63),
      'a'.repeat(65),
      'A'.repeat(64),
      'g'.repeat(64),
      ` ${'a'.repeat(63)}`,
      42,
    ]) {
      const result = await api.report(unit.id, { ...resolvedOutcome(true), evidence_sha256 });
      expectSvcError(result, 400, 'invalid_outcome');
      expect(result.body.error.message).toContain('evidence_sha256');
    }
    const ok = await api.reportOk(unit.id, {
      ...resolvedOutcome(true),
      evidence_sha256: '0123456789abcdef'.repeat(4),
    });
    expect(ok.evidence_sha256).toBe('0123456789abcdef'.repeat(4));
  });

  it('a revision naming the head: 201, revision+1, old record kept, head moves', async () => {
    const unit = await api.createWorkUnit();
    const first = await api.reportOk(unit.id, resolvedOutcome(false));
    const second = await api.reportOk(unit.id, resolvedOutcome(true, first.id));
    expect(second).toMatchObject({ revision: 2, value: true, supersedes_outcome_id: first.id });
    expect(second.id).not.toBe(first.id);
    expect(second.governance_sequence).toBeGreaterThan(first.governance_sequence);
    const outcomes = (await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes;
    expect(outcomes).toEqual([first, second]);
    // The old record is no longer the head.
    const stale = await api.report(unit.id, resolvedOutcome(false, first.id));
    expectSvcError(stale, 409, 'outcome_revision_conflict');
  });

  it('a second report without supersedes_outcome_id while a head exists: 409 outcome_revision_conflict', async () => {
    const unit = await api.createWorkUnit();
    const first = await api.reportOk(unit.id, resolvedOutcome(false));
    const result = await api.report(unit.id, resolvedOutcome(true));
    expectSvcError(result, 409, 'outcome_revision_conflict');
    expect(result.body.error.message).toContain(first.id);
  });

  it('supersedes_outcome_id naming an unknown id, or when there is no head: 409 outcome_revision_conflict', async () => {
    const unit = await api.createWorkUnit();
    const noHead = await api.report(unit.id, resolvedOutcome(true, 'out_00000000000000000000000000'));
    expectSvcError(noHead, 409, 'outcome_revision_conflict');
    await api.reportOk(unit.id, resolvedOutcome(false));
    const unknown = await api.report(unit.id, resolvedOutcome(true, 'out_00000000000000000000000000'));
    expectSvcError(unknown, 409, 'outcome_revision_conflict');
  });

  it('heads are per Definition: the head of another Definition is not a valid supersedes_outcome_id', async () => {
    const unit = await api.createWorkUnit();
    const resolved = await api.reportOk(unit.id, resolvedOutcome(false));
    const csat = await api.report(unit.id, {
      definition_id: 'odef_csat',
      value: 'happy',
      observed_at: OBSERVED_AT,
      supersedes_outcome_id: resolved.id,
    });
    expectSvcError(csat, 409, 'outcome_revision_conflict');
    const fresh = await api.reportOk(unit.id, {
      definition_id: 'odef_csat',
      value: 'happy',
      observed_at: OBSERVED_AT,
    });
    expect(fresh.revision).toBe(1);
  });

  it('a chain holds 20 records; revision 21 is 409 outcome_write_closed', async () => {
    const unit = await api.createWorkUnit();
    let head = await api.reportOk(unit.id, resolvedOutcome(false));
    for (let revision = 2; revision <= 20; revision++) {
      head = await api.reportOk(unit.id, resolvedOutcome(revision % 2 === 0, head.id));
      expect(head.revision).toBe(revision);
    }
    const refused = await api.report(unit.id, resolvedOutcome(true, head.id));
    expectSvcError(refused, 409, 'outcome_write_closed');
    const outcomes = (await api.get(`/svc/v1/work-units/${unit.id}`)).body.outcomes;
    expect(outcomes).toHaveLength(20);
    expect(outcomes.map((outcome: { revision: number }) => outcome.revision)).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
  });

  it('provisional: true while the Work Unit is open, false after it closed', async () => {
    const unit = await api.createWorkUnit();
    const open = await api.reportOk(unit.id, resolvedOutcome(false));
    expect(open.provisional).toBe(true);
    await api.closeWorkUnit(unit.id);
    const closed = await api.reportOk(unit.id, resolvedOutcome(true, open.id));
    expect(closed).toMatchObject({ provisional: false, revision: 2 });
  });

  it('governance_sequence strictly increases across Work Units of the Project', async () => {
    const sequences: number[] = [];
    for (let index = 0; index < 3; index++) {
      const unit = await api.createWorkUnit();
      sequences.push((await api.reportOk(unit.id, resolvedOutcome(true))).governance_sequence);
    }
    expect(sequences[1]).toBeGreaterThan(sequences[0]!);
    expect(sequences[2]).toBeGreaterThan(sequences[1]!);
  });
});
