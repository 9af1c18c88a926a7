import { describe, expect, it } from 'vitest';
import { readSse } from '../primitives/shared/sse.js';
import { connectSimulator } from './control.js';
import { startSimulator } from './server.js';
import { useSimulator } from './test-support.js';
import type { SimWire } from './types.js';

/** A tiny wire that echoes its behaviour, so the framework is tested without any real wire. */
const echoWire: SimWire = {
  name: 'echo',
  routes: [
    {
      method: 'POST',
      pattern: /^\/echo\/(?<name>[a-z]+)$/,
      handle(call) {
        call.response.writeHead(200, { 'content-type': 'application/json' });
        call.response.end(
          JSON.stringify({ behaviour: call.behaviour, params: call.params, query: call.query.get('q') }),
        );
      },
    },
    {
      method: 'GET',
      pattern: /^\/models\/(?<model>[^/]+)$/,
      handle(call) {
        call.response.writeHead(200, { 'content-type': 'application/json' });
        call.response.end(JSON.stringify({ behaviour: call.behaviour }));
      },
    },
  ],
  modelOf(call) {
    if (call.params.model !== undefined) return call.params.model;
    const body = call.body as { model?: unknown } | undefined;
    return typeof body?.model === 'string' ? body.model : undefined;
  },
};
const otherWire: SimWire = {
  ...echoWire,
  name: 'other',
  routes: [{ ...echoWire.routes[0]!, pattern: /^\/other$/ }],
};

const sim = useSimulator({ wires: [echoWire, otherWire], recordLimit: 5 });

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function behaviourOf(path: string, model?: string): Promise<unknown> {
  return (await post(path, model === undefined ? {} : { model })).json.behaviour;
}

describe('simulator framework', () => {
  it('routes by pattern with named groups and splits the query string off', async () => {
    const { status, json } = await post('/echo/abc?q=1', {});
    expect(status).toBe(200);
    expect(json).toEqual({ behaviour: {}, params: { name: 'abc' }, query: '1' });
  });

  it('answers 404 JSON for an unknown route or method', async () => {
    const unknown = await post('/nope', {});
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const wrongMethod = await fetch(`${sim.url}/echo/abc`);
    expect(wrongMethod.status).toBe(404);
    await wrongMethod.arrayBuffer();
  });

  it('resolves counted, then per-model, then global behaviours', async () => {
    sim.setBehaviour({ text: 'global' });
    sim.setBehaviour({ text: 'model-a' }, { model: 'a' });
    sim.setBehaviour({ text: 'wire-other' }, { wire: 'other' });
    sim.setBehaviour({ text: 'twice-a' }, { model: 'a', times: 2 });
    sim.setBehaviour({ text: 'once-any' }, { times: 1 });
    expect(await behaviourOf('/echo/x', 'b')).toEqual({ text: 'once-any' });
    expect(await behaviourOf('/echo/x', 'b')).toEqual({ text: 'global' });
    expect(await behaviourOf('/echo/x', 'a')).toEqual({ text: 'twice-a' });
    expect(await behaviourOf('/echo/x', 'a')).toEqual({ text: 'twice-a' });
    expect(await behaviourOf('/echo/x', 'a')).toEqual({ text: 'model-a' });
    expect(await behaviourOf('/other', 'b')).toEqual({ text: 'wire-other' });
    expect(await behaviourOf('/other', 'a')).toEqual({ text: 'model-a' });
  });

  it('matches counted behaviours by wire and takes the model from modelOf (path)', async () => {
    sim.setBehaviour({ status: 500 }, { wire: 'other', times: 1 });
    sim.setBehaviour({ status: 429 }, { model: 'm1', times: 1 });
    expect(await behaviourOf('/echo/x')).toEqual({});
    const viaPath = await fetch(`${sim.url}/models/m1`);
    expect(await viaPath.json()).toEqual({ behaviour: { status: 429 } });
    expect(await behaviourOf('/other')).toEqual({ status: 500 });
    expect(await behaviourOf('/other')).toEqual({});
  });

  it('reset clears every behaviour', async () => {
    sim.setBehaviour({ text: 'g' });
    sim.setBehaviour({ text: 'c' }, { times: 3 });
    sim.reset();
    expect(await behaviourOf('/echo/x')).toEqual({});
  });

  it('records requests before the handler, filters them, and keeps only the last recordLimit', async () => {
    await post('/echo/a', { model: 'm1', n: 1 });
    await post('/other', { model: 'm2', n: 2 });
    const all = sim.requests();
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({
      wire: 'echo',
      method: 'POST',
      path: '/echo/a',
      body: { model: 'm1', n: 1 },
    });
    expect(all[0]!.headers['content-type']).toBe('application/json');
    expect(typeof all[0]!.at).toBe('number');
    expect(sim.requests({ wire: 'other' }).map((r) => r.body)).toEqual([{ model: 'm2', n: 2 }]);
    expect(sim.requests({ model: 'm1' })).toHaveLength(1);
    for (let n = 3; n <= 8; n++) await post('/echo/a', { n });
    expect(sim.requests().map((r) => (r.body as { n: number }).n)).toEqual([4, 5, 6, 7, 8]);
    sim.clearRequests();
    expect(sim.requests()).toEqual([]);
  });

  it('records non-JSON bodies as text and multipart bodies as their byte length', async () => {
    await fetch(`${sim.url}/echo/a`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hi',
    });
    const form = new FormData();
    form.set('purpose', 'batch');
    await fetch(`${sim.url}/echo/a`, { method: 'POST', body: form });
    const [text, multipart] = sim.requests();
    expect(text!.body).toBe('hi');
    expect(typeof multipart!.body).toBe('number');
    expect(multipart!.body).toBeGreaterThan(0);
  });

  it('applies latencyMs before the handler', async () => {
    sim.setBehaviour({ latencyMs: 120 }, { times: 1 });
    const started = performance.now();
    await post('/echo/a', {});
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('drops the connection before any response byte with dropBeforeResponse', async () => {
    sim.setBehaviour({ dropBeforeResponse: true }, { times: 1 });
    await expect(post('/echo/a', {})).rejects.toThrow();
    expect(sim.requests()).toHaveLength(1);
    expect((await post('/echo/a', {})).status).toBe(200);
  });
});

describe('control API over HTTP', () => {
  it('sets behaviours, lists and clears requests through connectSimulator', async () => {
    const remote = connectSimulator(sim.url);
    await remote.setBehaviour({ text: 'remote' }, { model: 'r', times: 1 });
    await remote.setBehaviour({ text: 'remote-global' });
    expect(await behaviourOf('/echo/x', 'r')).toEqual({ text: 'remote' });
    expect(await behaviourOf('/echo/x', 'r')).toEqual({ text: 'remote-global' });
    expect(await remote.requests({ model: 'r', wire: 'echo' })).toHaveLength(2);
    expect(await remote.requests({ wire: 'other' })).toHaveLength(0);
    await remote.reset();
    expect(await behaviourOf('/echo/x')).toEqual({});
    await remote.clearRequests();
    expect(await remote.requests()).toEqual([]);
  });

  it('rejects a malformed control body and unknown control routes', async () => {
    const bad = await post('/_sim/behaviour', { nope: 1 });
    expect(bad.status).toBe(400);
    const badTimes = await post('/_sim/behaviour', { behaviour: {}, times: 0 });
    expect(badTimes.status).toBe(400);
    const unknown = await post('/_sim/whatever', {});
    expect(unknown.status).toBe(404);
    expect(sim.requests()).toEqual([]);
  });
});

describe('simulator lifecycle', () => {
  it('close() ends even with a stalled stream open', async () => {
    const own = await startSimulator();
    own.setBehaviour({ stallAfterEvents: 2 });
    const response = await fetch(`${own.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    const events: string[] = [];
    const reading = (async () => {
      for await (const event of readSse(response.body!)) events.push(event.event ?? '');
    })().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual(['message_start', 'ping']);
    await own.close();
    await reading;
  });
});
