/**
 * The dependency rules of STYLE.md, checked on the source tree: dependencies point down, a
 * primitive never imports another primitive or anything above it, only the composition root picks
 * a store adapter, and only main.ts reads process.env.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SOURCE = resolve('src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === '__fixtures__' ? [] : sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

interface ImportEdge {
  from: string;
  to: string;
  statement: string;
}

const edges: ImportEdge[] = sourceFiles(SOURCE).flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g),
  ].map((match) => ({
    statement: match[0],
    from: relative(SOURCE, file),
    to: relative(SOURCE, resolve(dirname(file), (match[1] ?? match[2])!)).replace(/\.js$/, '.ts'),
  }));
});

function violations(rule: (edge: ImportEdge) => boolean): string[] {
  return edges.filter(rule).map((edge) => `${edge.from} -> ${edge.to}`);
}

const top = (path: string) => path.split('/')[0]!;
const primitiveOf = (path: string) => (path.startsWith('primitives/') ? path.split('/')[1] : undefined);

describe('architecture', () => {
  it('finds the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(300);
  });

  it('keeps primitives free of vendors, governance, storage and HTTP', () => {
    const forbidden = new Set([
      'gateway',
      'experimental',
      'governance',
      'store',
      'http',
      'ledger',
      'catalogue',
      'objects',
      'jobs',
      'config',
      'startup',
      'simulator',
    ]);
    expect(violations((edge) => top(edge.from) === 'primitives' && forbidden.has(top(edge.to)))).toEqual([]);
  });

  it('never lets one primitive import another (only primitives/shared)', () => {
    expect(
      violations((edge) => {
        const from = primitiveOf(edge.from);
        const to = primitiveOf(edge.to);
        return from !== undefined && to !== undefined && from !== to && to !== 'shared';
      }),
    ).toEqual([]);
  });

  it('keeps the canonical model, the catalogue and the store below the use cases and HTTP', () => {
    const above = new Set(['gateway', 'experimental', 'governance', 'http', 'startup', 'app.ts', 'main.ts']);
    expect(
      violations(
        (edge) =>
          ['canonical', 'catalogue', 'store', 'ledger', 'objects'].includes(top(edge.from)) &&
          above.has(top(edge.to)),
      ),
    ).toEqual([]);
  });

  it('keeps use cases free of HTTP', () => {
    expect(
      violations(
        (edge) =>
          ['gateway', 'experimental', 'governance', 'jobs'].includes(top(edge.from)) &&
          top(edge.to) === 'http',
      ),
    ).toEqual([]);
  });

  it('lets only the composition root pick a store adapter', () => {
    expect(
      violations(
        (edge) =>
          /^store\/(sqlite|postgres)\//.test(edge.to) &&
          !edge.from.startsWith('store/') &&
          edge.from !== 'startup/open-store.ts',
      ),
    ).toEqual([]);
  });

  it('keeps the messages path and the shared call parts free of the experimental wing', () => {
    expect(violations((edge) => top(edge.from) === 'gateway' && top(edge.to) === 'experimental')).toEqual([]);
  });

  it('lets HTTP import no adapter and no composition (services are built in startup/compose.ts)', () => {
    expect(
      violations(
        (edge) =>
          top(edge.from) === 'http' &&
          (/^store\/(sqlite|postgres)\//.test(edge.to) ||
            /^objects\/(local-folder|open-objects|sealing|sweeper)\.ts$/.test(edge.to) ||
            top(edge.to) === 'startup' ||
            top(edge.to) === 'simulator'),
      ),
    ).toEqual([]);
  });

  it('lets app.ts only register routes on the services of the one composition module', () => {
    // observability/ registers its request hooks and the /metrics route like http/ does.
    const allowed = (to: string) =>
      ['http', 'errors', 'lib', 'observability'].includes(top(to)) || to === 'startup/compose.ts';
    expect(violations((edge) => edge.from === 'app.ts' && !allowed(edge.to))).toEqual([]);
  });

  it('builds the use-case services only in startup/compose.ts', () => {
    const builders = sourceFiles(SOURCE)
      .filter((file) =>
        /new (MessagesService|CountTokensService|FilesService|MediaService|ResponsesService|ResponseRunner|BatchService|BatchJob|GovernanceService|Authenticator|JobWorker|Ledger)\(/.test(
          readFileSync(file, 'utf8'),
        ),
      )
      .map((file) => relative(SOURCE, file));
    expect(builders).toEqual(['startup/compose.ts']);
  });

  it('lets only the attempt runner (and the ledger beneath it) reserve, settle or renew attempts', () => {
    // Calls of the store's (or the ledger's) reserve / settle / renewLease / persistSettlement,
    // anywhere outside src/ledger/ and the store itself (its adapters and contract suites).
    const callers = sourceFiles(SOURCE)
      .map((file) => relative(SOURCE, file))
      .filter((file) => !file.startsWith('ledger/') && !file.startsWith('store/'))
      .filter((file) =>
        /\.(reserve|settle|settleAndRead|renewLease|persistSettlement|persistHeldSettlement|reapExpiredAttempts|releaseInDoubt)\(/.test(
          readFileSync(join(SOURCE, file), 'utf8'),
        ),
      );
    expect(callers).toEqual([]);
    // Only the runner (and the composition module that builds it) may hold the ledger itself.
    expect(
      violations(
        (edge) =>
          edge.to === 'ledger/ledger.ts' &&
          !edge.from.startsWith('ledger/') &&
          edge.from !== 'startup/compose.ts' &&
          edge.from !== 'startup/gateway-server.ts' &&
          !/import type/.test(edge.statement),
      ),
    ).toEqual([]);
    // Inside the ledger, only the runner and the ledger reach the store's ledger operations.
    const ledgerCallers = sourceFiles(join(SOURCE, 'ledger'))
      .map((file) => relative(SOURCE, file))
      .filter((file) =>
        /store\.(reserve|settle|settleAndRead|renewLease|releaseInDoubt)\(/.test(
          readFileSync(join(SOURCE, file), 'utf8'),
        ),
      );
    expect(ledgerCallers).toEqual(['ledger/in-doubt.ts', 'ledger/ledger.ts']);
  });

  it('reads process.env only in main.ts', () => {
    const readers = sourceFiles(SOURCE)
      .filter((file) => /process\.env\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SOURCE, file));
    expect(readers.filter((file) => file !== 'main.ts' && !file.startsWith('simulator/'))).toEqual([]);
  });
});
