/**
 * Revocation is final (issue 10): a key revoked with `svc-gateway keys revoke` stays revoked across
 * any later CLI command and across a restart of the gateway, whether it was declared in the
 * configuration file, is the quick-start key, or was created with `keys create`. Start-up names a
 * revoked configured key in a warning (its id, never its secret). Real gateway processes, the real
 * CLI, one SQLite store.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/config/schema.js';
import { newKeySecret } from '../../src/lib/secrets.js';
import { call } from '../reliability/support.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';

const run = promisify(execFile);
const CONFIGURED_SECRET = newKeySecret();
const ENVIRONMENT = { SVC_REVOKE_CONFIGURED_KEY: CONFIGURED_SECRET };
/** The gateway caches a key lookup for up to 2 s. */
const CACHE_MS = 2100;

describe('revoked keys stay revoked across CLI commands and restarts', () => {
  const folder = tempFolder('revoke');
  let gateway: GatewayProcess;
  let cliKey: { id: string; secret: string };

  async function cli(...args: string[]): Promise<string> {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args, '--config', gateway.configFile],
      { env: { ...process.env, ...ENVIRONMENT, NODE_NO_WARNINGS: '1' } },
    );
    return stdout;
  }

  function start(): Promise<GatewayProcess> {
    return startGatewayProcess({
      name: 'revoke',
      folder: folder.path,
      environment: ENVIRONMENT,
      config: {
        store: { kind: 'sqlite', sqlite: { path: join(folder.path, 'svc.db') } },
        data_dir: folder.path,
        logging: { level: 'info' },
        projects: reliabilityProjects(),
        keys: [
          {
            id: 'key_configured',
            project: 'prj_a',
            scopes: [...SCOPES],
            secret_env: 'SVC_REVOKE_CONFIGURED_KEY',
          },
        ],
      },
    });
  }

  async function statusWith(secret: string): Promise<number> {
    return (await call(gateway.url, 'GET', '/svc/v1/runs/run_missing', { key: secret })).status;
  }

  async function statuses(): Promise<Record<string, number>> {
    return {
      configured: await statusWith(CONFIGURED_SECRET),
      quickstart: await statusWith(gateway.key),
      created: await statusWith(cliKey.secret),
    };
  }

  beforeAll(async () => {
    gateway = await start();
    cliKey = JSON.parse(await cli('keys', 'create', '--project', 'prj_a', '--scopes', SCOPES.join(',')));
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await stopAllGatewayProcesses();
    folder.remove();
  });

  it('answer 401 after revocation, after another CLI command and after a restart', async () => {
    const live = { configured: 404, quickstart: 404, created: 404 };
    expect(await statuses()).toEqual(live);

    for (const id of ['key_configured', 'key_quickstart', cliKey.id])
      expect(await cli('keys', 'revoke', id)).toContain(id);
    await new Promise((done) => setTimeout(done, CACHE_MS));
    const revoked = { configured: 401, quickstart: 401, created: 401 };
    expect(await statuses()).toEqual(revoked);

    // Any CLI command syncs the configuration into the store: it must not undo the revocations.
    const listed = (await cli('keys', 'list'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(listed.filter((key) => key.revokedAt === null).map((key) => key.id)).toEqual([]);
    await new Promise((done) => setTimeout(done, CACHE_MS));
    expect(await statuses()).toEqual(revoked);

    await gateway.stop();
    gateway = await start();
    expect(await statuses()).toEqual(revoked);
    const output = gateway.output();
    expect(output).toMatch(/"key":"key_configured".*stays revoked/);
    expect(output).toMatch(/"key":"key_quickstart".*revoked/);
    expect(output).not.toContain(CONFIGURED_SECRET);
    expect(output).not.toContain(gateway.key);
  }, 240_000); // six CLI processes and two gateway starts: minutes on a loaded runner
});
