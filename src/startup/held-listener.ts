/**
 * The gateway's listening socket kept across a SIGHUP reload, so no connection is refused while the
 * gateway restarts (issue 38). A reload cannot start the new gateway beside the old one (the SQLite
 * store is opened by one gateway at a time, and a new one would take the old one's open
 * reservations for a crash's), so between the old gateway's drain and the new one's start there
 * is a moment with no server. During it the socket stays open and listening: `take` moves it from
 * the old server to a holder that accepts connections without reading them; the new server listens
 * on the same socket (`listen({ handle })`, Node's way to share a listening handle) and is handed
 * the connections that waited. The old server keeps its own connections: their in-flight calls
 * finish on the old configuration (the drain), and closing it no longer closes the socket.
 *
 * Node's listening handle is reached through the servers' `_handle` (what `listen(handle)` reads);
 * a handed-over connection is booked on the new server as its own accept would book it
 * (`_connections`, `_server`), so the new server's close waits for it too.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

interface HandleOwner {
  _handle: unknown;
  _connections: number;
}

interface Booked {
  _server: unknown;
  server: unknown;
}

export class HeldListener {
  private readonly waiting: Socket[] = [];
  private readonly holder: Server;

  private constructor() {
    this.holder = createServer({ pauseOnConnect: true }, (socket) => {
      this.waiting.push(socket);
      socket.once('close', () => {
        const index = this.waiting.indexOf(socket);
        if (index !== -1) this.waiting.splice(index, 1);
      });
    });
  }

  /** Takes `server`'s listening socket: new connections wait here from now on. */
  static async take(server: HttpServer): Promise<HeldListener> {
    const held = new HeldListener();
    await new Promise<void>((resolve, reject) => {
      held.holder.once('error', reject);
      held.holder.listen(server, () => resolve());
    });
    (server as unknown as HandleOwner)._handle = null;
    return held;
  }

  /** The listening socket, for the next server's `listen({ handle })`. */
  get handle(): unknown {
    return (this.holder as unknown as HandleOwner)._handle;
  }

  /** `server` now listens on the socket: it gets the connections that waited. */
  deliver(server: HttpServer): void {
    (this.holder as unknown as HandleOwner)._handle = null;
    const owner = server as unknown as HandleOwner;
    for (const socket of this.waiting.splice(0)) {
      const booked = socket as unknown as Booked;
      booked._server = server;
      booked.server = server;
      owner._connections += 1;
      server.emit('connection', socket);
      socket.resume();
    }
  }
}
