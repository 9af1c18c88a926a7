/**
 * GET /console: the web console's static files, built by `npm run build` into dist/console. Only
 * the files of that folder are served (no path from the URL reaches the file system beyond one
 * plain file name); every answer carries a Content-Security-Policy that allows this origin only.
 * The console itself signs in with a Gateway Key held in the browser tab's session storage.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** dist/console next to the compiled server (dist/src/http), or dist/console of the checkout (tsx). */
export function defaultConsoleDir(): string {
  const compiled = fileURLToPath(new URL('../../console/', import.meta.url));
  return existsSync(join(compiled, 'app.js'))
    ? compiled
    : fileURLToPath(new URL('../../dist/console/', import.meta.url));
}

function readFolder(folder: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!existsSync(join(folder, 'index.html'))) return files;
  for (const sub of ['', 'vendor']) {
    for (const name of readdirSync(join(folder, sub))) {
      if (TYPES[extname(name)] !== undefined)
        files.set(sub ? `${sub}/${name}` : name, readFileSync(join(folder, sub, name)));
    }
  }
  return files;
}

export function registerConsoleRoutes(app: FastifyInstance, folder: string = defaultConsoleDir()): void {
  // Read once at start-up: a few small files, and no file-system access per request.
  const files = readFolder(folder);
  const send = (reply: FastifyReply, name: string) => {
    const body = files.get(name);
    if (body === undefined) {
      const missing =
        files.size === 0 ? 'The console is not built: run `npm run build`.' : 'No such console file.';
      return reply.code(404).type('text/plain; charset=utf-8').send(missing);
    }
    return reply
      .type(TYPES[extname(name)]!)
      .header('content-security-policy', POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', name === 'index.html' ? 'no-cache' : 'public, max-age=300')
      .send(body);
  };
  app.get('/console', (_request, reply) => reply.redirect('/console/'));
  app.get('/console/', (_request, reply) => send(reply, 'index.html'));
  app.get<{ Params: { file: string } }>('/console/:file', (request, reply) =>
    send(reply, request.params.file),
  );
  app.get<{ Params: { file: string } }>('/console/vendor/:file', (request, reply) =>
    send(reply, `vendor/${request.params.file}`),
  );
}
