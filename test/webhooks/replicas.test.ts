/**
 * Two gateway processes (replicas) on one PostgreSQL database deliver webhooks concurrently to one
 * loopback receiver; one replica is killed (SIGKILL) while its deliveries are in flight. Its
 * leases pass and the other replica delivers them again: every event arrives (at least once; after
 * dedupe on the event id, each exactly once), every delivery ends succeeded, and the per-endpoint
 * bound holds across both replicas.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call } from '../support/gateway.js';
import {
  type GatewayProcess,
  reliabilityProjects,
  startGatewayProcess,
  stopAllGatewayProcesses,
  tempFolder,
} from '../support/gateway-process.js';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { Receiver, waitFor } from './support.js';

const PER_ENDPOINT = 3;

describePostgres('webhooks: two replicas deliver, one is killed mid-delivery', () => {
  let database: TestDatabase;
  const folder = tempFolder('webhook-replicas');
  const replicas: GatewayProcess[] = [];
  const receiver = new Receiver();

  async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    await receiver.start();
    const options = (name: string) => ({
      name,
      folder: folder.path,
      environment: { SVC_RELIABILITY_DATABASE_URL: database.url },
      config: {
        store: { kind: 'postgres', postgres: { url_env: 'SVC_RELIABILITY_DATABASE_URL' } },
        data_dir: folder.path,
        projects: reliabilityProjects(),
        webhooks: {
          allow_private_networks: true,
          poll_interval_ms: 50,
          timeout_ms: 1000,
          backoff_base_ms: 50,
          backoff_cap_ms: 300,
          max_concurrent_per_endpoint: PER_ENDPOINT,
          // Below the endpoint's bound: neither replica can take every lease, so both deliver, and
          // together they could exceed the endpoint's bound if it were not kept across replicas.
          max_concurrent_deliveries: 2,
        },
      },
    });
    replicas.push(await startGatewayProcess(options('replica-a')));
    replicas.push(await startGatewayProcess(options('replica-b')));
  });

  afterAll(async () => {
    await Promise.all(replicas.map((gateway) => (gateway.alive() ? gateway.stop() : undefined)));
    await stopAllGatewayProcesses();
    await receiver.stop();
    await database?.drop();
    folder.remove();
  });

  it('delivers every event once a killed replica’s leases pass, within the per-endpoint bound', async () => {
    const [a, b] = replicas as [GatewayProcess, GatewayProcess];
    const created = await call(a.url, 'POST', '/svc/v1/webhook-endpoints', {
      key: a.key,
      body: { url: receiver.url },
      idempotencyKey: 'create-endpoint',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    receiver.answerDelayMs = 250;
    // 48 events: 8 runs x 6 events each, written straight to the outbox table in one statement.
    const ids: string[] = [];
    const runs: string[] = [];
    for (let event = 0; event < 6; event++) {
      for (let run = 0; run < 8; run++) {
        ids.push(`evt_REPLICA${String(event).padStart(2, '0')}${String(run).padStart(2, '0')}`);
        runs.push(`run_r${run}`);
      }
    }
    await sql(
      `INSERT INTO events (id, project_id, type, resource_type, resource_id, occurred_at, data)
       SELECT id, 'prj_a', 'outcome.reported', 'run', run, now(), '{}'::jsonb
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e(id, run, position) ORDER BY position`,
      [ids, runs],
    );
    // Both replicas hold leases at once at some point; then one is killed while it delivers.
    const owners = new Set<string>();
    await waitFor(
      async () => {
        const leased = await sql(
          "SELECT DISTINCT lease_owner FROM webhook_deliveries WHERE state = 'delivering' AND lease_owner IS NOT NULL",
        );
        for (const row of leased.rows) owners.add(String(row.lease_owner));
        return owners.size >= 2 && receiver.inFlight > 0;
      },
      20_000,
      'both replicas delivering',
    );
    await a.kill('SIGKILL');
    const orphaned = await sql(
      "SELECT id FROM webhook_deliveries WHERE state = 'delivering' AND lease_owner IS NOT NULL",
    );
    await waitFor(
      async () => {
        const open = await sql(
          "SELECT count(*)::int AS open FROM webhook_deliveries WHERE state <> 'succeeded'",
        );
        return open.rows[0].open === 0 && new Set(receiver.eventIds()).size === ids.length;
      },
      40_000,
      'every delivery to succeed on the surviving replica',
    );
    expect(b.alive()).toBe(true);
    expect([...new Set(receiver.eventIds())].sort()).toEqual([...ids].sort());
    expect(receiver.eventIds().length).toBeGreaterThanOrEqual(ids.length);
    expect(orphaned.rows.length).toBeGreaterThan(0);
    const rows = await sql('SELECT count(*)::int AS deliveries FROM webhook_deliveries');
    expect(rows.rows[0].deliveries).toBe(ids.length);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(PER_ENDPOINT);
    expect(receiver.maxInFlight).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
