/**
 * The compose deployment's configuration, deploy/gateway.yaml, as compose runs it: the file itself
 * with the variables of deploy/compose.yaml (store URL, sealing key, S3 credentials, the
 * administrator key's secret), on a real PostgreSQL database and a real S3 server (s3rver), in a
 * real gateway process. The administrator key (SVC_ADMIN_KEY) manages Gateway Keys over the API
 * (create, list, read, revoke) and makes model calls; a key it created works, and stops working
 * once revoked.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SCOPES } from '../../src/config/schema.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import { Api, type Json } from '../governance/support.js';
import { SEALING_KEY } from '../support/deferred-gateway.js';
import {
  type GatewayProcess,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { startTestS3, type TestS3 } from '../support/s3-server.js';

const ROOT = resolve('.');

it('pins every compose image to a release, never latest', () => {
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8')) as {
    services: Record<string, { image?: string; build?: unknown }>;
  };
  const images = Object.values(compose.services).flatMap((service) => (service.image ? [service.image] : []));
  expect(images.length).toBeGreaterThan(0);
  for (const image of images) {
    const tag = /:([^/:@]+)$/.exec(image)?.[1];
    expect(tag, image).toBeDefined();
    expect(tag, image).not.toBe('latest');
    // A full release (16.6, v2.55.1, RELEASE.<date>), not a moving major or minor tag (16, 1.27).
    expect(tag, image).toMatch(/^(v?\d+\.\d+(\.\d+)?|RELEASE\.[\dTZ-]+)$/);
    // PostgreSQL's releases are major.minor (16.6); other numbered images need major.minor.patch.
    if (/^v?\d/.test(tag!) && !image.startsWith('postgres:')) expect(tag, image).toMatch(/^v?\d+\.\d+\.\d+$/);
  }
});

describePostgres('deploy/gateway.yaml (the compose configuration)', () => {
  const folder = tempFolder('compose-config');
  const adminSecret = newKeySecret();
  let database: TestDatabase;
  let s3: TestS3;
  let gateway: GatewayProcess;
  let admin: Api;

  beforeAll(async () => {
    const config = parse(readFileSync(join(ROOT, 'deploy/gateway.yaml'), 'utf8')) as Record<string, unknown>;
    database = await createTestDatabase();
    // The bucket deploy/compose.yaml's minio-bucket service creates.
    s3 = await startTestS3('svc-objects');
    gateway = await startGatewayProcess({
      config,
      folder: folder.path,
      project: 'prj_demo',
      environment: {
        // What deploy/compose.yaml sets (x-gateway.environment), pointed at this machine.
        SVC_DATABASE_URL: database.url,
        SVC_SEALING_KEY: SEALING_KEY,
        SVC_S3_ACCESS_KEY_ID: s3.accessKeyId,
        SVC_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        SVC_ADMIN_KEY: adminSecret,
        SVC_OBJECTS__S3__ENDPOINT: s3.endpoint,
        SVC_SIMULATOR__PORT: '0',
      },
      readyTimeoutMs: 60_000,
    });
    admin = new Api(gateway.url, adminSecret);
  }, 120_000);

  afterAll(async () => {
    await stopAllGatewayProcesses();
    await s3?.stop();
    await database?.drop();
    folder.remove();
  });

  it('the administrator key creates, lists, reads and revokes Gateway Keys', async () => {
    const created = await admin.post('/svc/v1/keys', {
      label: 'ci',
      scopes: ['inference'],
      models: ['demo'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body as Json;
    expect(key).toMatchObject({ project_id: 'prj_demo', scopes: ['inference'], status: 'active' });

    const listed = await admin.get('/svc/v1/keys');
    expect(listed.status).toBe(200);
    const ids = (listed.body.data as Json[]).map((entry) => entry.id);
    expect(ids).toContain(key.id);
    expect(ids).toContain('key_admin');
    expect((await admin.get(`/svc/v1/keys/${key.id}`)).body).toMatchObject({ id: key.id, label: 'ci' });

    // The new key makes model calls on the compose configuration's alias; the admin key does too.
    const messages = (secret: string) =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': secret, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
      });
    expect((await messages(key.secret as string)).status).toBe(200);
    expect((await messages(adminSecret)).status).toBe(200);

    const revoked = await admin.post(`/svc/v1/keys/${key.id}/revoke`, {});
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(201);
    expect(revoked.body).toMatchObject({ id: key.id, status: 'revoked' });
    expect((await messages(key.secret as string)).status).toBe(401);

    // The administrator grants any scope, keys:admin included.
    const second = await admin.post('/svc/v1/keys', { scopes: ['keys:admin'] });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect((await new Api(gateway.url, second.body.secret as string).get('/svc/v1/keys')).status).toBe(200);
  });

  it("holds every scope (the Project's administrator)", () => {
    const config = parse(readFileSync(join(ROOT, 'deploy/gateway.yaml'), 'utf8')) as {
      keys: Array<{ scopes: string[]; secret_env: string }>;
    };
    const adminKey = config.keys.find((entry) => entry.secret_env === 'SVC_ADMIN_KEY');
    expect(adminKey?.scopes.toSorted()).toEqual([...SCOPES].toSorted());
  });
});
