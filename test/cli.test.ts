/**
 * The svc-gateway command line, run as a real process: check-config, migrate, keys create/list/
 * revoke, audit. A created key's secret is printed once and never shown again.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../src/lib/secrets.js';
import { completedSettlement, plainReservation } from '../src/store/contract/harness.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const run = promisify(execFile);

async function cli(args: string[], environment: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      env: { ...process.env, ...environment },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('svc-gateway CLI', () => {
  let folder: string;
  let config: string;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    config = join(folder, 'svc.yaml');
    writeFileSync(
      config,
      `store: { kind: sqlite, sqlite: { path: ${join(folder, 'svc.db')} } }
projects:
  - id: prj_cli
    runs: { default_budget_micros_usd: 1000, max_budget_micros_usd: 2000, default_ttl_seconds: 60, max_ttl_seconds: 120 }
    rate_limit: { requests_per_second: 10, burst: 10 }
`,
    );
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('check-config accepts a good file and names file, path and problem in a bad one', async () => {
    const good = await cli(['check-config', '--config', config]);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('OK (1 projects');
    const bad = join(folder, 'bad.yaml');
    writeFileSync(bad, 'projects:\n  - id: prj_x\n    runs: { default_budget_micros_usd: -1 }\n');
    const refused = await cli(['check-config', '--config', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${bad}: /projects/0/runs`);
  });

  it('migrates, creates a key printed once, lists it without its secret and revokes it', async () => {
    expect((await cli(['migrate', '--config', config])).code).toBe(0);
    const created = await cli([
      'keys',
      'create',
      '--project',
      'prj_cli',
      '--scopes',
      'inference,run:attach',
      '--rpm',
      '30',
      '--tpm',
      '90000',
      '--config',
      config,
    ]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as {
      id: string;
      secret: string;
      scopes: string[];
      inference_limits: unknown;
    };
    expect(key.secret).toMatch(/^gw_[0-9A-Z]{40}$/);
    expect(key.scopes).toEqual(['inference', 'run:attach']);
    expect(key.inference_limits).toEqual({ requests_per_minute: 30, tokens_per_minute: 90000 });

    const listed = await cli(['keys', 'list', '--config', config]);
    expect(listed.stdout).toContain(key.id);
    expect(listed.stdout).not.toContain(key.secret);

    const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal', exclusive: false });
    expect((await store.findKeyByHash(hashSecret(key.secret)))?.id).toBe(key.id);
    expect((await cli(['keys', 'revoke', key.id, '--config', config])).code).toBe(0);
    expect((await store.findKeyByHash(hashSecret(key.secret)))?.revokedAt).not.toBeNull();
    await store.close();

    const unknownScope = await cli([
      'keys',
      'create',
      '--project',
      'prj_cli',
      '--scopes',
      'root',
      '--config',
      config,
    ]);
    expect(unknownScope.code).toBe(2);
    expect(unknownScope.stderr).toContain('unknown scopes: root');
  });

  it('prints audit entries as JSON lines', async () => {
    const store = new SqliteStore({ path: join(folder, 'svc.db'), synchronous: 'normal', exclusive: false });
    await store.migrate();
    await store.reserve(
      plainReservation('att_CLI', {
        projectId: 'prj_cli',
        keyId: 'key_cli',
        reservationMicrosUsd: 50,
        owner: 'cli-test',
        upstreamModel: 'm',
      }),
    );
    await store.settle(
      completedSettlement('att_CLI', {
        costMicrosUsd: 12,
        usage: { inputTokens: 3, outputTokens: 4, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      }),
    );
    await store.close();
    const audit = await cli(['audit', '--project', 'prj_cli', '--config', config]);
    expect(audit.code).toBe(0);
    const entries = audit.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { attemptId: string; costMicrosUsd: number });
    expect(entries).toEqual([expect.objectContaining({ attemptId: 'att_CLI', costMicrosUsd: 12 })]);
  });
});
