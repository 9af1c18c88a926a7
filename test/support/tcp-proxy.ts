/**
 * A TCP fault proxy for the store-outage tests (a small Toxiproxy), put between a gateway process
 * and PostgreSQL. Modes:
 *   pass       forward both ways (the default)
 *   paused     stop accepting (connections are refused) and destroy every live socket: the
 *              database "went away"
 *   blackhole  accept new connections but never forward a byte, and stop forwarding on the live
 *              ones without closing them: the database "stopped answering" (tests the timeouts)
 *   mute       forward what the clients send but drop every byte the server answers, on the live
 *              connections and new ones: requests arrive and run, their replies are lost. A new
 *              connection still gets the server's startup answers (up to its first ReadyForQuery),
 *              so a pool that opens one then sends its statement into the silence, as on a live one
 * resume() returns to pass: listens again on the same port after a pause; after a blackhole or a
 * mute the frozen or muted connections are destroyed (their protocol state is lost), new ones
 * forward again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'paused' | 'blackhole' | 'mute';

export interface TcpProxy {
  readonly port: number;
  readonly mode: ProxyMode;
  /** Connections accepted so far (all modes). */
  readonly accepted: number;
  /** Connections accepted while blackholed (held open, never forwarded). */
  readonly held: number;
  pause(): Promise<void>;
  blackhole(): void;
  mute(): void;
  resume(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket | undefined;
  frozen: boolean;
  muted: boolean;
  /** Accepted while muted: the server's startup answers still pass (startupBytes). */
  startup: StartupScan | undefined;
}

/**
 * Where the server's startup answers end in what it sends: each message is a type byte and a
 * 4-byte big-endian length that counts itself; the first ReadyForQuery ('Z') ends the startup.
 */
interface StartupScan {
  header: number[];
  bodyLeft: number;
  ready: boolean;
}

/** How many bytes of `chunk` still belong to the startup (all of them until its 'Z' has ended). */
function startupBytes(scan: StartupScan, chunk: Buffer): number {
  let at = 0;
  while (at < chunk.length && !scan.ready) {
    if (scan.header.length < 5) {
      scan.header.push(chunk[at]!);
      at += 1;
      if (scan.header.length === 5) scan.bodyLeft = Buffer.from(scan.header.slice(1)).readUInt32BE(0) - 4;
    } else {
      const take = Math.min(scan.bodyLeft, chunk.length - at);
      scan.bodyLeft -= take;
      at += take;
    }
    if (scan.header.length === 5 && scan.bodyLeft === 0) {
      scan.ready = scan.header[0] === 0x5a;
      scan.header = [];
    }
  }
  return at;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  let accepted = 0;
  let held = 0;
  const pairs = new Set<Pair>();

  const destroy = (pair: Pair) => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };

  const onConnection = (client: Socket) => {
    accepted++;
    const pair: Pair = {
      client,
      upstream: undefined,
      frozen: mode === 'blackhole',
      muted: mode === 'mute',
      startup: mode === 'mute' ? { header: [], bodyLeft: 0, ready: false } : undefined,
    };
    pairs.add(pair);
    client.on('error', () => destroy(pair));
    client.on('close', () => destroy(pair));
    if (pair.frozen) {
      held++;
      client.resume(); // read and drop: the peer sees an open connection that never answers
      return;
    }
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => destroy(pair));
    upstream.on('close', () => destroy(pair));
    client.on('data', (chunk) => {
      if (!pair.frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (pair.frozen) return;
      if (!pair.muted) client.write(chunk);
      else if (pair.startup && !pair.startup.ready) {
        const passing = startupBytes(pair.startup, chunk);
        if (passing > 0) client.write(chunk.subarray(0, passing));
      }
    });
  };

  let server: Server = createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((done, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', fail);
        const address = server.address();
        if (address === null || typeof address === 'string') return fail(new Error('no address'));
        done(address.port);
      });
    });
  const port = await listen(0);

  const stopListening = () =>
    new Promise<void>((done) => {
      server.close(() => done());
      for (const pair of [...pairs]) destroy(pair);
    });

  return {
    port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    get held() {
      return held;
    },
    async pause() {
      if (mode === 'paused') return;
      mode = 'paused';
      await stopListening();
    },
    blackhole() {
      if (mode === 'paused') throw new Error('resume before blackholing');
      mode = 'blackhole';
      for (const pair of pairs) pair.frozen = true;
    },
    mute() {
      if (mode === 'paused') throw new Error('resume before muting');
      mode = 'mute';
      for (const pair of pairs) pair.muted = true;
    },
    async resume() {
      if (mode === 'paused') {
        server = createServer(onConnection);
        await listen(port);
      } else if (mode === 'blackhole' || mode === 'mute') {
        for (const pair of [...pairs]) if (pair.frozen || pair.muted) destroy(pair);
      }
      mode = 'pass';
    },
    async close() {
      mode = 'paused';
      await stopListening();
    },
  };
}
