/**
 * /v1/files end to end with the official vendorb SDK (npm `openai`) against a gateway backed by
 * the simulator: upload (streamed to the object store, uploaded upstream on a chat connection,
 * stored only on a vendora-wire one), retrieve, content, delete, idempotency, size limit,
 * Project isolation, and deletion that fails upstream.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { objectsFolder } from '../../src/objects/open-objects.js';
import { call } from '../support/gateway.js';
import { type ResourceGateway, startResourceGateway } from '../support/resource-gateway.js';
import { sdkFailure as failure } from '../support/sdk-failure.js';

let world: ResourceGateway;
let keyA: string;
let keyB: string;
let counter = 0;
const idem = () => `files-test-${Date.now()}-${++counter}`;

function upstreamFiles() {
  return world.sim.requests({ wire: 'chat-side' });
}

function projectFolder(project: string): string {
  return join(objectsFolder(world.gateway.config), project);
}

beforeAll(async () => {
  world = await startResourceGateway({ config: { objects: { max_upload_bytes: 64 * 1024 } } });
  keyA = await world.gateway.key('prj_a', ['inference']);
  keyB = await world.gateway.key('prj_b', ['inference']);
});
afterAll(async () => world?.close());
beforeEach(() => world.sim.clearRequests());

describe('files through the official vendorb SDK', () => {
  it('uploads, retrieves, downloads byte-exact and deletes (upstream copy included)', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const content = Buffer.concat([
      randomBytes(40_000),
      Buffer.from('\r\n--boundary-lookalike--\r\n'),
      Buffer.from([0, 255, 13, 10]),
    ]);
    // (A double quote would arrive as %22: WHATWG multipart encoding in the client, not the gateway.)
    const filename = "réport 'q3'; (données)\u00a0100% 東京.jsonl";
    const created = await client.files.create(
      { file: await toFile(content, filename), purpose: 'batch' },
      { headers: { 'Idempotency-Key': idem() } },
    );
    expect(created).toMatchObject({
      object: 'file',
      bytes: content.length,
      filename,
      purpose: 'batch',
      status: 'processed',
      status_details: null,
    });
    expect(created.id).toMatch(/^file_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.expires_at! - created.created_at).toBe(30 * 86_400);
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(5);

    const uploads = upstreamFiles();
    expect(uploads.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /v1/files']);
    expect(uploads[0]!.headers.authorization).toBe('Bearer sk-simulated-upstream');

    expect(await client.files.retrieve(created.id)).toEqual(created);
    const download = await client.files.content(created.id);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);

    world.sim.clearRequests();
    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    expect(upstreamFiles().map((request) => request.method)).toEqual(['DELETE']);
    expect(upstreamFiles()[0]!.path).toMatch(/^\/v1\/files\/file-/);
    expect(existsSync(join(projectFolder('prj_a'), created.id))).toBe(false);
    expect((await failure(client.files.retrieve(created.id))).status).toBe(404);
  });

  it('only stores the file on a vendora-wire connection (no upstream call)', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-vendora' });
    const created = await client.files.create(
      { file: await toFile(Buffer.from('{"custom_id":"a"}\n'), 'batch.jsonl'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': idem() } },
    );
    expect(created.bytes).toBe(18);
    expect(world.sim.requests()).toEqual([]);
    expect(await (await client.files.content(created.id)).text()).toBe('{"custom_id":"a"}\n');
    await client.files.delete(created.id);
    expect(world.sim.requests()).toEqual([]);
  });

  it('replays an Idempotency-Key with 200 and the stored record, and refuses it for another request', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const key = idem();
    const file = () => toFile(Buffer.from('same bytes'), 'same.txt');
    const first = await client.files.create(
      { file: await file(), purpose: 'user_data' },
      { headers: { 'Idempotency-Key': key } },
    );
    const replay = await client.files
      .create({ file: await file(), purpose: 'user_data' }, { headers: { 'Idempotency-Key': key } })
      .withResponse();
    expect(replay.response.status).toBe(200);
    expect(replay.data).toEqual(first);
    expect(upstreamFiles().filter((request) => request.method === 'POST')).toHaveLength(1);
    const conflict = await failure(
      client.files.create(
        { file: await toFile(Buffer.from('other bytes'), 'same.txt'), purpose: 'user_data' },
        { headers: { 'Idempotency-Key': key } },
      ),
    );
    expect(conflict).toMatchObject({
      status: 409,
      error: { code: 'idempotency_conflict', type: 'invalid_request_error' },
    });
    expect(readdirSync(projectFolder('prj_a'))).toContain(first.id);
    expect(
      readdirSync(projectFolder('prj_a')).filter((name) => name.startsWith('file_') && name !== first.id)
        .length,
    ).toBeLessThan(5);
  });

  it('refuses an illegal Idempotency-Key (it is optional) and needs a resolvable Svc-Route', async () => {
    const client = world.client(keyA);
    const upload = (headers: Record<string, string>) =>
      toFile(Buffer.from('x'), 'x.txt').then((file) =>
        client.files.create({ file, purpose: 'batch' }, { headers }),
      );
    expect(await failure(upload({ 'Svc-Route': 'sim-chat', 'Idempotency-Key': 'has space' }))).toMatchObject({
      status: 400,
      error: { code: 'invalid_idempotency_key' },
    });
    const missing = await failure(upload({ 'Idempotency-Key': idem() }));
    expect(missing).toMatchObject({ status: 400, error: { code: 'invalid_request', param: 'svc-route' } });
    expect(String(missing.error.message)).toMatch(/Svc-Route/);
    expect(await failure(upload({ 'Idempotency-Key': idem(), 'Svc-Route': 'nope' }))).toMatchObject({
      status: 400,
      error: { code: 'invalid_request', param: 'svc-route' },
    });
    expect(world.sim.requests()).toEqual([]);
  });

  it('refuses unknown form fields and bad purposes before any upstream call, keeping nothing', async () => {
    const before = readdirSync(projectFolder('prj_a')).length;
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('abc')]), 'a.txt');
    form.append('purpose', 'batch');
    form.append('colour', 'blue');
    const response = await fetch(`${world.gateway.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'idempotency-key': idem(), 'svc-route': 'sim-chat' },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'invalid_request', param: 'colour', message: 'colour: unknown field' },
    });
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const badPurpose = await failure(
      client.files.create(
        { file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'nonsense' as 'batch' },
        { headers: { 'Idempotency-Key': idem() } },
      ),
    );
    expect(badPurpose).toMatchObject({ status: 400, error: { param: 'purpose' } });
    expect(world.sim.requests()).toEqual([]);
    expect(readdirSync(projectFolder('prj_a')).length).toBe(before);
    expect(readdirSync(join(objectsFolder(world.gateway.config), '.tmp'))).toEqual([]);
  });

  it('answers 413 request_too_large above the upload limit and keeps nothing', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const before = readdirSync(projectFolder('prj_a')).length;
    const tooBig = await failure(
      client.files.create(
        { file: await toFile(randomBytes(64 * 1024 + 1), 'big.bin'), purpose: 'batch' },
        { headers: { 'Idempotency-Key': idem() } },
      ),
    );
    expect(tooBig).toMatchObject({ status: 413, error: { code: 'request_too_large', param: 'file' } });
    // Refused mid-stream (well past the socket buffers) and refused from Content-Length alone:
    // either way the client reads the 413 rather than a reset connection.
    for (const size of [600 * 1024, 3 * 1024 * 1024]) {
      const refused = await failure(
        client.files.create(
          { file: await toFile(randomBytes(size), 'big.bin'), purpose: 'batch' },
          { headers: { 'Idempotency-Key': idem() } },
        ),
      );
      expect(refused).toMatchObject({ status: 413, error: { code: 'request_too_large' } });
    }
    const exact = await client.files.create(
      { file: await toFile(randomBytes(64 * 1024), 'exact.bin'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': idem() } },
    );
    expect(exact.bytes).toBe(64 * 1024);
    expect(readdirSync(projectFolder('prj_a')).length).toBe(before + 1);
    expect(upstreamFiles().filter((request) => request.method === 'POST')).toHaveLength(1);
  });

  it('answers another Project exactly as for an unknown id, on every file route', async () => {
    const owner = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const created = await owner.files.create(
      { file: await toFile(Buffer.from('private'), 'p.txt'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': idem() } },
    );
    const unknown = 'file_0000000000000000000000000Z';
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/content'],
      ['DELETE', ''],
    ] as const) {
      const other = await call(world.gateway.url, method, `/v1/files/${created.id}${suffix}`, { key: keyB });
      const missing = await call(world.gateway.url, method, `/v1/files/${unknown}${suffix}`, { key: keyB });
      expect(other.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(JSON.stringify(other.body).replaceAll(created.id, 'ID')).toBe(
        JSON.stringify(missing.body).replaceAll(unknown, 'ID'),
      );
      expect([...other.headers.keys()].sort()).toEqual([...missing.headers.keys()].sort());
    }
    expect(await owner.files.retrieve(created.id)).toEqual(created);
  });

  it('keeps a record that says so when the upstream copy cannot be deleted, and deletes on retry', async () => {
    const client = world.client(keyA, { 'Svc-Route': 'sim-chat' });
    const created = await client.files.create(
      { file: await toFile(Buffer.from('sticky'), 's.txt'), purpose: 'batch' },
      { headers: { 'Idempotency-Key': idem() } },
    );
    world.sim.setBehaviour(
      { status: 500, errorMessage: 'storage backend down' },
      { wire: 'chat-side', times: 1 },
    );
    const failed = await failure(client.files.delete(created.id));
    expect(failed.status).toBe(500);
    expect(String(failed.error.message)).toMatch(/storage backend down/);
    const record = await client.files.retrieve(created.id);
    expect(record.status).toBe('error');
    expect(record.status_details).toMatch(
      /upstream copy on sim-chat could not be deleted.*DELETE the file again/,
    );
    expect(await (await client.files.content(created.id)).text()).toBe('sticky');
    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    expect((await failure(client.files.retrieve(created.id))).status).toBe(404);
  });

  it('uses the configured default connection when Svc-Route is absent', async () => {
    const other = await startResourceGateway({
      config: { endpoints: { default_connections: { files: 'sim-chat' } } },
    });
    try {
      const key = await other.gateway.key('prj_a', ['inference']);
      const created = await other
        .client(key)
        .files.create(
          { file: await toFile(Buffer.from('d'), 'd.txt'), purpose: 'batch' },
          { headers: { 'Idempotency-Key': idem() } },
        );
      expect(created.bytes).toBe(1);
      expect(other.sim.requests({ wire: 'chat-side' })).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('needs the inference scope', async () => {
    const governanceOnly = await world.gateway.key('prj_a', ['governance:read']);
    const denied = await failure(
      world.client(governanceOnly, { 'Svc-Route': 'sim-chat' }).files.retrieve('file_x'),
    );
    expect(denied).toMatchObject({
      status: 403,
      error: { code: 'gateway_key_scope_denied', type: 'permission_error' },
    });
  });
});
