/**
 * Client input the stores cannot hold, or values no upstream can take, answer 400 in the endpoint's
 * own dialect, never 5xx, and identically on SQLite and PostgreSQL (issue 10):
 * - a NUL character (U+0000) or an unpaired UTF-16 surrogate in a path parameter, a JSON string
 *   (values and keys) or a multipart field or file name;
 * - a multipart upload cut before its closing boundary;
 * - out-of-range numbers on /v1/messages (top_k 1e300, a non-integer top_k, a huge max_tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreKind } from '../support/gateway.js';
import {
  type InputWorld,
  type Probe,
  type ProbeResult,
  probe,
  startInputWorld,
} from '../support/input-world.js';
import { postgresAvailable } from '../support/postgres.js';

const NUL = '\u0000';
const LONE = '\ud800';

function multipart(
  filename: string,
  options: { cut?: boolean; purpose?: string } = {},
): NonNullable<Probe['multipart']> {
  return { filename, purpose: options.purpose ?? 'batch', cut: options.cut ?? false };
}

type Case = Probe & { dialect: 'svc' | 'vendora' | 'vendorb'; code?: string };

function cases(world: InputWorld): Record<string, Case> {
  const messages = (extra: Record<string, unknown>) => ({
    model: 'sim',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'Hi' }],
    ...extra,
  });
  return {
    'GET run %00': { dialect: 'svc', method: 'GET', path: '/svc/v1/runs/%00' },
    'GET work unit with NUL': { dialect: 'svc', method: 'GET', path: '/svc/v1/work-units/wku_a%00b' },
    'close run %00': { dialect: 'svc', method: 'POST', path: '/svc/v1/runs/%00/close', body: {} },
    'run on a NUL work_unit_id': {
      dialect: 'svc',
      method: 'POST',
      path: '/svc/v1/runs',
      body: { work_unit_id: `wku_${NUL}` },
    },
    'close reason with NUL': {
      dialect: 'svc',
      method: 'POST',
      path: `/svc/v1/work-units/${world.workUnitId}/close`,
      body: { reason: `done${NUL}` },
    },
    'close reason with a lone surrogate': {
      dialect: 'svc',
      method: 'POST',
      path: `/svc/v1/runs/${world.runId}/close`,
      body: { reason: `done${LONE}` },
    },
    'work unit metadata key with NUL': {
      dialect: 'svc',
      method: 'POST',
      path: '/svc/v1/work-units',
      body: { metadata: { [`k${NUL}`]: 'v' } },
    },
    'outcome value with a lone surrogate': {
      dialect: 'svc',
      method: 'POST',
      path: `/svc/v1/work-units/${world.workUnitId}/outcomes`,
      body: { definition_id: 'odef_csat', value: `happy${LONE}`, observed_at: '2025-12-31T12:00:00.000Z' },
      code: 'invalid_outcome',
    },
    'GET file %00': { dialect: 'vendorb', method: 'GET', path: '/v1/files/%00' },
    'GET batch with NUL': { dialect: 'vendorb', method: 'GET', path: '/v1/batches/batch_%00' },
    'cancel response %00': { dialect: 'vendorb', method: 'POST', path: '/v1/responses/%00/cancel', body: {} },
    'file name with NUL': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/files',
      multipart: multipart(`a${NUL}b.jsonl`),
    },
    'purpose with NUL': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/files',
      multipart: multipart('a.jsonl', { purpose: `batch${NUL}` }),
    },
    'upload cut before its closing boundary': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/files',
      multipart: multipart('a.jsonl', { cut: true }),
    },
    'upload cut in a field the endpoint refuses before reading it': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/files',
      multipart: { ...multipart('a.jsonl', { cut: true }), fileField: 'x' },
    },
    'transcription upload cut before its closing boundary': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/audio/transcriptions',
      multipart: multipart('a.wav', { cut: true }),
    },
    'batch input_file_id with NUL': {
      dialect: 'vendorb',
      method: 'POST',
      path: '/v1/batches',
      body: { input_file_id: `file_${NUL}`, endpoint: '/v1/messages', completion_window: '24h' },
    },
    'messages content with NUL': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages',
      body: messages({ messages: [{ role: 'user', content: `Hi${NUL}` }] }),
    },
    'messages metadata with a lone surrogate': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages',
      body: messages({ metadata: { user_id: `u${LONE}` } }),
    },
    'top_k 1e300': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages',
      body: messages({ top_k: 1e300 }),
      param: 'top_k',
    },
    'top_k 1.5': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages',
      body: messages({ top_k: 1.5 }),
      param: 'top_k',
    },
    'max_tokens 1e300': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages',
      body: messages({ max_tokens: 1e300 }),
      param: 'max_tokens',
    },
    'count_tokens top_k 1e300': {
      dialect: 'vendora',
      method: 'POST',
      path: '/v1/messages/count_tokens',
      body: { model: 'sim', messages: [{ role: 'user', content: 'Hi' }], top_k: 1e300 },
      param: 'top_k',
    },
  };
}

function errorShape(dialect: 'svc' | 'vendora' | 'vendorb', result: ProbeResult): Record<string, unknown> {
  const body = result.body as Record<string, any>;
  switch (dialect) {
    case 'svc':
      return { status: result.status, code: body?.error?.code };
    case 'vendora':
      return { status: result.status, type: body?.type, errorType: body?.error?.type };
    case 'vendorb':
      return { status: result.status, type: body?.error?.type };
    default:
      return dialect satisfies never;
  }
}

const EXPECTED = {
  svc: { status: 400, code: 'invalid_request' },
  vendora: { status: 400, type: 'error', errorType: 'invalid_request_error' },
  vendorb: { status: 400, type: 'invalid_request_error' },
};

describe('unstorable and out-of-range input answers 400, identically on both stores', () => {
  const stores: StoreKind[] =
    postgresAvailable || process.env.CI === 'true' ? ['sqlite', 'postgres'] : ['sqlite'];
  const worlds = new Map<StoreKind, InputWorld>();

  beforeAll(async () => {
    for (const store of stores) worlds.set(store, await startInputWorld(store));
  }, 60_000);

  afterAll(async () => {
    for (const world of worlds.values()) await world.close();
  });

  it('answers every case with a 400 in its dialect naming the field, the same on every store', async () => {
    const seen: Record<string, Record<string, unknown>> = {};
    const problems: string[] = [];
    for (const [store, world] of worlds) {
      for (const [name, entry] of Object.entries(cases(world))) {
        const result = await probe(world, entry);
        const shape = errorShape(entry.dialect, result);
        const label = `${store}: ${name}`;
        const expected =
          entry.code === undefined
            ? EXPECTED[entry.dialect]
            : { ...EXPECTED[entry.dialect], code: entry.code };
        if (JSON.stringify(shape) !== JSON.stringify(expected))
          problems.push(`${label}: ${result.status} ${JSON.stringify(result.body).slice(0, 200)}`);
        const message = JSON.stringify(result.body);
        if (entry.param !== undefined && !message.includes(entry.param))
          problems.push(`${label}: does not name ${entry.param}`);
        const key = `${name} ${JSON.stringify(shape)} ${message.replace(/req_[0-9A-Z]+/g, 'req')}`;
        seen[name] ??= {};
        seen[name]![store] = key;
      }
    }
    expect(problems).toEqual([]);
    for (const [name, byStore] of Object.entries(seen)) {
      expect(new Set(Object.values(byStore)).size, `${name}: ${JSON.stringify(byStore)}`).toBe(1);
    }
  }, 60_000);
});
