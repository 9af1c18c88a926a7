/**
 * The quick-start key is created once per store (issue 10 / 14): replicas started at the same time
 * on one PostgreSQL database with one key file end with one working key, and later starts (a
 * restart, a replica whose key file is elsewhere) never replace it. The file is written only by
 * the process that created the key.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { type RunningGateway, startGateway } from '../../src/gateway-server.js';
import { createLogger } from '../../src/lib/logger.js';
import { reliabilityProjects, tempFolder } from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { call } from './support.js';

describePostgres('quick start on several replicas of one PostgreSQL store', () => {
  const folder = tempFolder('quickstart-replicas');
  const running: RunningGateway[] = [];
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await Promise.all(running.map((gateway) => gateway.close()));
    await database?.drop();
    folder.remove();
  });

  async function start(keyFile: string): Promise<RunningGateway> {
    const config = parseConfig(
      {
        listen: { host: '127.0.0.1', port: 0 },
        logging: { level: 'silent' },
        store: { kind: 'postgres', postgres: { url_env: 'SVC_QUICKSTART_DATABASE_URL' } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        quickstart: { key_file: keyFile, project: 'prj_a' },
      },
      'quickstart-replicas.yaml',
      { SVC_QUICKSTART_DATABASE_URL: database.url },
    );
    const gateway = await startGateway({
      config,
      environment: { SVC_QUICKSTART_DATABASE_URL: database.url },
      logger: createLogger('silent'),
    });
    running.push(gateway);
    return gateway;
  }

  async function works(gateway: RunningGateway, secret: string): Promise<number> {
    return (await call(gateway.url, 'GET', '/svc/v1/runs/run_missing', { key: secret })).status;
  }

  it('keeps one working key across concurrent starts, restarts and a replica without the file', async () => {
    const keyFile = join(folder.path, 'shared', 'quickstart-key.txt');
    expect(existsSync(keyFile)).toBe(false);
    const replicas = await Promise.all([start(keyFile), start(keyFile), start(keyFile)]);
    const secret = readFileSync(keyFile, 'utf8').trim();
    expect(replicas.map((replica) => replica.quickstartSecret)).toEqual([secret, secret, secret]);
    for (const replica of replicas) expect(await works(replica, secret)).toBe(404);

    // A restart of one replica, and a replica whose key file is elsewhere (another machine).
    await replicas[0]!.close();
    const restarted = await start(keyFile);
    expect(restarted.quickstartSecret).toBe(secret);
    const elsewhere = join(folder.path, 'other-machine', 'quickstart-key.txt');
    const stranger = await start(elsewhere);
    expect(stranger.quickstartSecret).toBeUndefined();
    expect(existsSync(elsewhere)).toBe(false);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(secret);
    for (const replica of [restarted, stranger, replicas[1]!]) expect(await works(replica, secret)).toBe(404);
  }, 60_000);
});
