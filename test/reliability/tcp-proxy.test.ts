/**
 * The fault proxy's mute mode, which the in-doubt tests rely on: a connection opened while muted
 * still completes its startup, then its statements reach the server and run while their replies
 * are lost; a connection that was live when the mute began loses every reply.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describePostgres, type TestDatabase } from '../support/postgres.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

describePostgres('the TCP fault proxy, muted', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;

  function clientVia(port: number): pg.Client {
    const url = new URL(database.url);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return new pg.Client({
      connectionString: url.toString(),
      query_timeout: 500,
      connectionTimeoutMillis: 2000,
    });
  }

  async function direct(text: string): Promise<pg.QueryResultRow[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await direct('CREATE TABLE landed (id int PRIMARY KEY)');
  });

  afterEach(async () => {
    await proxy.resume();
  });

  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });

  it('opens a new connection, runs its statement, loses the reply', async () => {
    proxy.mute();
    const client = clientVia(proxy.port);
    client.on('error', () => {});
    await client.connect();
    await expect(client.query('INSERT INTO landed VALUES (1)')).rejects.toThrow(/timeout/i);
    expect(await direct('SELECT id FROM landed')).toEqual([{ id: 1 }]);
    await client.end().catch(() => {});
  });

  it('loses every reply on a connection that was live when the mute began', async () => {
    const client = clientVia(proxy.port);
    client.on('error', () => {});
    await client.connect();
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    proxy.mute();
    await expect(client.query('INSERT INTO landed VALUES (2)')).rejects.toThrow(/timeout/i);
    expect(await direct('SELECT id FROM landed ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    await client.end().catch(() => {});
  });
});
