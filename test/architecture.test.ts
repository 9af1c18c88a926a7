/**
 * The dependency rules of STYLE.md, checked on the source tree: dependencies point down, a
 * primitive never imports another primitive or anything above it, only the composition root picks
 * a store adapter, and only main.ts reads process.env. Between top-level folders (and the top-level
 * files, each its own node) the imports form no cycle of any length, type-only imports included;
 * money/ stands on lib/ and errors/ alone, and store/ and limits/ never reach up into ledger/ or
 * observability/.
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

/** The folder graph: top-level folder (or top-level file) -> the ones it imports. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const edge of edges) {
    const from = top(edge.from);
    const to = top(edge.to);
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** Every strongly connected group of two or more nodes (Tarjan): each holds at least one cycle. */
function folderCycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups;
}
const primitiveOf = (path: string) => (path.startsWith('primitives/') ? path.split('/')[1] : undefined);

describe('architecture', () => {
  it('finds the imports it checks', () => {
    expect(edges.length).toBeGreaterThan(300);
  });

  it('has no import cycle between top-level folders, of any length', () => {
    const cycles = folderCycles(folderGraph());
    // Name the imports inside each cyclic group, so a failure says which lines to move.
    const inside = cycles.map((group) => ({
      folders: group,
      imports: violations((edge) => {
        const from = top(edge.from);
        const to = top(edge.to);
        return from !== to && group.includes(from) && group.includes(to);
      }),
    }));
    expect(inside).toEqual([]);
  });

  it('has no import cycle between files either, of any length', () => {
    const graph = new Map<string, Set<string>>();
    for (const edge of edges) {
      if (!graph.has(edge.from)) graph.set(edge.from, new Set());
      graph.get(edge.from)!.add(edge.to);
    }
    expect(folderCycles(graph)).toEqual([]);
  });

  it('keeps money/ on lib/ and errors/ alone', () => {
    const allowed = new Set(['money', 'lib', 'errors']);
    expect(violations((edge) => top(edge.from) === 'money' && !allowed.has(top(edge.to)))).toEqual([]);
  });

  it('keeps store/ and limits/ below the ledger and the observers', () => {
    expect(
      violations(
        (edge) =>
          ['store', 'limits'].includes(top(edge.from)) && ['ledger', 'observability'].includes(top(edge.to)),
      ),
    ).toEqual([]);
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
    const above = new Set([
      'gateway',
      'experimental',
      'governance',
      'http',
      'startup',
      'app.ts',
      'gateway-server.ts',
      'main.ts',
    ]);
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
          edge.from !== 'gateway-server.ts' &&
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
