/**
 * The crash of issue 10, made deterministic: a fake PostgreSQL server answers the start-up with
 * AuthenticationOk, ReadyForQuery and, in the same TCP write, the FATAL 57P01 that
 * pg_terminate_backend sends. The FATAL reaches the client in the same read as ReadyForQuery,
 * i.e. after pg-pool handed the client out and before the borrower could attach a listener.
 * Without a listener from the moment the pool creates the client, the process dies of an
 * unhandled 'error' event (vitest reports it as an unhandled error and fails the run).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../errors/gateway-error.js';
import { PostgresStore } from './postgres-store.js';

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

function fatalTermination(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'];
  return message('E', Buffer.from(`${fields.join('\0')}\0\0`, 'latin1'));
}

const authenticationOk = message('R', Buffer.from([0, 0, 0, 0]));
const readyForQuery = message('Z', Buffer.from('I', 'latin1'));

/**
 * A server that accepts a start-up packet and then either ends the session in the same write as
 * ReadyForQuery (`terminate`) or answers ReadyForQuery and resets the connection (TCP RST) at the
 * first query, i.e. inside a transaction (`reset`).
 */
async function terminatingServer(
  how: 'terminate' | 'reset' = 'terminate',
): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    socket.once('data', () => {
      if (how === 'terminate') {
        socket.end(Buffer.concat([authenticationOk, readyForQuery, fatalTermination()]));
        return;
      }
      socket.write(Buffer.concat([authenticationOk, readyForQuery]));
      socket.once('data', () => socket.resetAndDestroy());
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, sockets };
}

describe('PostgreSQL pool: a session ended by the server as it is handed out', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('surfaces as StoreUnavailableError in a transaction and in a single query, never as an unhandled error', async () => {
    const { server, port, sockets } = await terminatingServer();
    const store = new PostgresStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/db`,
      connectTimeoutMs: 500,
    });
    cleanups.push(async () => {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    });
    for (let round = 0; round < 5; round += 1) {
      await expect(store.renewLease('att_x', new Date().toISOString())).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await expect(store.getRun('prj_a', 'run_x')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    }
    expect(sockets.length).toBeGreaterThanOrEqual(15);
  });

  it('surfaces a connection reset in the middle of a transaction as StoreUnavailableError', async () => {
    const { server, port, sockets } = await terminatingServer('reset');
    const store = new PostgresStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/db`,
      connectTimeoutMs: 500,
    });
    cleanups.push(async () => {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    });
    for (let round = 0; round < 3; round += 1) {
      await expect(store.renewLease('att_x', new Date().toISOString())).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
    }
  });
});
