/**
 * The Dockerfile's steps without Docker (no engine on the project's machines), read from the
 * Dockerfile itself, so they cannot rot. Runs by default (`npm test`, CI).
 *
 *   stages        every FROM starts a stage, pinned by digest; WORKDIR must be /app, which is the
 *                 stage's own temporary folder here
 *   COPY          exactly the Dockerfile's COPY lines, in order, with Docker's rules (a folder source
 *                 copies its contents, several sources or a trailing `/` make the destination a
 *                 folder, .dockerignore applies); `COPY --from=<stage>` copies from that stage's
 *                 folder. Nothing else of the repository reaches a stage, so a source `npm run build`
 *                 or the running gateway needs but no COPY names fails this test
 *   RUN           only the steps listed in RUN_STEPS below are known; any other RUN fails the test
 *                 (teach it the new step rather than let it pass unseen)
 *   start         the last stage's ENV, then ENTRYPOINT + CMD (host and port moved to loopback and
 *                 a free port), on the quick start's SQLite file in data/
 *   checks        the HEALTHCHECK command exits 0 (/readyz), a model call with the quick-start key
 *                 answers 200, /console/ serves the built console, `--version` prints package.json's
 *
 * Stand-ins that keep it short (about a minute on a loaded 2-core machine, most of it tsc and npm ci):
 * - The build stage's `npm ci` links the worktree's node_modules instead of installing all
 *   dependencies a second time. It cannot hide a missing COPY: node_modules is no COPY source of any
 *   stage (.dockerignore excludes it), the dependencies are what package-lock.json pins either way,
 *   and every file `npm run build` reads from the project (tsconfig*.json, src/, scripts/,
 *   console/) is resolved from the stage's folder, where only the COPYed paths exist.
 * - The production-dependencies stage runs its real `npm ci --omit=dev` (the lockfile, so nothing
 *   but production dependencies), with --ignore-scripts, and takes better-sqlite3's compiled addon
 *   from the worktree (same Node ABI) instead of compiling it again (minutes with node-gyp). Set
 *   SVC_INSTALL_TEST_FULL=1 to run the install scripts too (the image's exact step).
 * - apt-get steps (compilers for node-gyp) and chown are skipped: this machine has the compilers,
 *   and the test runs as one user.
 * SVC_INSTALL_TEST_DOCKERFILE=<path> reads another Dockerfile (to show a broken one fails).
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { freePort, tempFolder } from '../support/gateway-process.js';

const run = promisify(execFile);
const ROOT = resolve('.');
const DOCKERFILE = resolve(process.env.SVC_INSTALL_TEST_DOCKERFILE ?? join(ROOT, 'Dockerfile'));
const FULL = process.env.SVC_INSTALL_TEST_FULL === '1';
const WORKDIR = '/app';
const folder = tempFolder('install');
afterAll(() => folder.remove());

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  image: string;
  name: string;
  folder: string;
  instructions: Instruction[];
}

/** Instructions (continuations joined, comments dropped), split into stages at each FROM. */
function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    if (/^\s*#/.test(line)) continue; // a comment inside a continuation
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  if (pending) logical.push(pending);
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^\s*(\w+)\s+(.*)$/s.exec(line);
    if (!match) throw new Error(`unreadable Dockerfile line: ${line}`);
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (keyword === 'FROM') {
      const [image, as, name] = args.split(/\s+/);
      const index = stages.length;
      stages.push({
        image: image!,
        name: as?.toUpperCase() === 'AS' ? name! : String(index),
        folder: join(folder.path, `stage-${index}`),
        instructions: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${keyword} before FROM`);
    stage.instructions.push({ keyword, args });
  }
  return stages;
}

function jsonArray(args: string, keyword: string): string[] {
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
    throw new Error(`${keyword} must be a JSON array of strings (exec form)`);
  return parsed;
}

/** ENV in the `KEY=value KEY2=value2` form. */
function envPairs(args: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const part of args.split(/\s+/).filter(Boolean)) {
    const equals = part.indexOf('=');
    if (equals < 1) throw new Error(`ENV must use KEY=value: ${args}`);
    pairs[part.slice(0, equals)] = part.slice(equals + 1);
  }
  return pairs;
}

/** .dockerignore patterns (anchored at the context's root; `*` within one path segment). */
function ignoreMatcher(): (path: string) => boolean {
  const file = join(ROOT, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#'))
        .map(
          (pattern) =>
            new RegExp(
              `^${pattern
                .replace(/^\/+|\/+$/g, '')
                .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
                .replaceAll('*', '[^/]*')}(/|$)`,
            ),
        )
    : [];
  return (path) => patterns.some((pattern) => pattern.test(path));
}

/** The stage folder path of an absolute path inside the image (only under WORKDIR). */
function inStage(stage: Stage, imagePath: string): string {
  const normal = posix.normalize(imagePath);
  if (normal !== WORKDIR && !normal.startsWith(`${WORKDIR}/`))
    throw new Error(`path outside ${WORKDIR}: ${imagePath}`);
  return join(stage.folder, normal.slice(WORKDIR.length));
}

/**
 * COPY [--from=stage] src... dest, with Docker's rules for folders and destinations. A folder of an
 * earlier stage that no later COPY reads (`lastRead`) is moved instead of copied: the result is the
 * same, without copying and deleting node_modules twice.
 */
function copy(
  stage: Stage,
  args: string,
  stages: Map<string, Stage>,
  ignored: (path: string) => boolean,
  lastRead: (path: string) => boolean,
): string[] {
  const words = args.split(/\s+/);
  let from: Stage | undefined;
  while (words[0]?.startsWith('--')) {
    const flag = words.shift()!;
    const fromMatch = /^--from=(.+)$/.exec(flag);
    if (!fromMatch) throw new Error(`COPY flag the test does not know: ${flag}`);
    from = stages.get(fromMatch[1]!);
    if (!from) throw new Error(`COPY --from an unknown stage: ${fromMatch[1]}`);
  }
  const destination = words.pop()!;
  if (words.length === 0) throw new Error(`COPY without a source: ${args}`);
  const target = inStage(
    stage,
    posix.isAbsolute(destination) ? destination : posix.join(WORKDIR, destination),
  );
  const intoFolder = destination.endsWith('/') || words.length > 1;
  const copied: string[] = [];
  for (const source of words) {
    const path = from ? inStage(from, source) : join(ROOT, posix.normalize(source).replace(/^(\.\/)+/, ''));
    if (!from && relative(ROOT, path).startsWith('..'))
      throw new Error(`COPY outside the context: ${source}`);
    if (!existsSync(path)) throw new Error(`COPY source not found: ${source}`);
    const isFolder = statSync(path).isDirectory();
    const to = intoFolder && !isFolder ? join(target, posix.basename(source)) : target;
    if (from && isFolder && !existsSync(to) && lastRead(path)) {
      mkdirSync(dirname(to), { recursive: true });
      renameSync(path, to);
      copied.push(`--from=${from.name} ${source}`);
      continue;
    }
    mkdirSync(isFolder ? to : dirname(to), { recursive: true });
    cpSync(path, to, {
      recursive: true,
      dereference: true,
      filter: (file) => from !== undefined || !ignored(relative(ROOT, file).split('\\').join('/')),
    });
    copied.push(from ? `--from=${from.name} ${source}` : source);
  }
  return copied;
}

/**
 * The RUN steps this test knows and what it does for each (see the header for the stand-ins).
 * Matched on the whole command, so a changed step is a failure here, not a silent skip.
 */
const RUN_STEPS: Array<{ pattern: RegExp; step(stage: Stage): Promise<void> }> = [
  {
    pattern:
      /^apt-get update && apt-get install -y --no-install-recommends [\w+ .-]+&& rm -rf \/var\/lib\/apt\/lists\/\*$/,
    step: async () => {},
  },
  {
    pattern: /^npm ci --no-audit --no-fund$/,
    step: async (stage) => {
      expect(existsSync(join(stage.folder, 'package-lock.json')), 'npm ci needs package-lock.json').toBe(
        true,
      );
      symlinkSync(join(ROOT, 'node_modules'), join(stage.folder, 'node_modules'), 'dir');
    },
  },
  {
    pattern: /^npm ci --omit=dev --no-audit --no-fund$/,
    step: async (stage) => {
      await run(
        'npm',
        ['ci', '--omit=dev', '--no-audit', '--no-fund', ...(FULL ? [] : ['--ignore-scripts'])],
        {
          cwd: stage.folder,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      if (!FULL)
        cpSync(
          join(ROOT, 'node_modules/better-sqlite3/build'),
          join(stage.folder, 'node_modules/better-sqlite3/build'),
          { recursive: true },
        );
    },
  },
  {
    pattern: /^npm run build$/,
    step: async (stage) => {
      await run('npm', ['run', 'build', '--silent'], {
        cwd: stage.folder,
        maxBuffer: 16 * 1024 * 1024,
      }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(
          `npm run build failed in the build stage:\n${error.stderr ?? ''}${error.stdout ?? ''}`,
        );
      });
    },
  },
  {
    pattern: /^mkdir -p \/app\/data && chown node:node \/app\/data$/,
    step: async (stage) => {
      mkdirSync(inStage(stage, '/app/data'), { recursive: true });
    },
  },
];

/** Runs every stage in order; returns the last stage and what its image runs. */
async function buildStages(dockerfile: string) {
  const stages = parseDockerfile(dockerfile);
  const byName = new Map<string, Stage>();
  const ignored = ignoreMatcher();
  // How many COPY --from lines read each stage path (a path read for the last time may be moved).
  const reads = new Map<string, number>();
  const fromPaths = (stage: Stage) =>
    stage.instructions.flatMap(({ keyword, args }) => {
      const match = keyword === 'COPY' ? /^--from=(\S+)\s+(.*)\s+\S+$/.exec(args) : null;
      const source = match ? stages.find((candidate) => candidate.name === match[1]) : undefined;
      return source ? match![2]!.split(/\s+/).map((path) => inStage(source, path)) : [];
    });
  for (const path of stages.flatMap(fromPaths)) reads.set(path, (reads.get(path) ?? 0) + 1);
  const lastRead = (path: string) => {
    const left = (reads.get(path) ?? 0) - 1;
    reads.set(path, left);
    return left === 0;
  };
  let environment: Record<string, string> = {};
  let entrypoint: string[] = [];
  let command: string[] = [];
  let healthcheck: string[] = [];
  let user = 'root';
  const copied: string[] = [];
  for (const stage of stages) {
    mkdirSync(stage.folder, { recursive: true });
    environment = {};
    for (const { keyword, args } of stage.instructions) {
      switch (keyword) {
        case 'WORKDIR':
          expect(args, 'every stage works in /app').toBe(WORKDIR);
          break;
        case 'COPY':
          copied.push(...copy(stage, args, byName, ignored, lastRead));
          break;
        case 'RUN': {
          const known = RUN_STEPS.find((entry) => entry.pattern.test(args));
          if (!known) throw new Error(`RUN step this test does not know (add it to RUN_STEPS): ${args}`);
          await known.step(stage);
          break;
        }
        case 'ENV':
          Object.assign(environment, envPairs(args));
          break;
        case 'USER':
          user = args;
          break;
        case 'ENTRYPOINT':
          entrypoint = jsonArray(args, keyword);
          break;
        case 'CMD':
          command = jsonArray(args, keyword);
          break;
        case 'HEALTHCHECK': {
          const match = /\bCMD\s+(\[.*\])\s*$/.exec(args);
          if (!match) throw new Error('HEALTHCHECK must be CMD [...] (exec form)');
          healthcheck = jsonArray(match[1]!, keyword);
          break;
        }
        case 'EXPOSE':
        case 'LABEL':
          break;
        default:
          throw new Error(`Dockerfile instruction this test does not know: ${keyword}`);
      }
    }
    byName.set(stage.name, stage);
  }
  return { stages, last: stages.at(-1)!, environment, entrypoint, command, healthcheck, user, copied };
}

it('pins every base image by digest', () => {
  const stages = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
  expect(stages.length).toBeGreaterThan(0);
  for (const stage of stages) expect(stage.image).toMatch(/^[\w./:-]+@sha256:[0-9a-f]{64}$/);
});

it('builds from exactly the COPYed files, starts as the image does and passes its healthcheck', async () => {
  const dockerfile = readFileSync(DOCKERFILE, 'utf8');
  const started = performance.now();
  const image = await buildStages(dockerfile);
  const buildMs = performance.now() - started;
  expect(image.user).toBe('node');
  const app = image.last.folder;
  // No development dependency made it into the image.
  await expect(run(process.execPath, ['-e', "import('vitest')"], { cwd: app })).rejects.toThrow();

  // Start: ENTRYPOINT + CMD with the image's environment (host and port on loopback here).
  const port = await freePort();
  const environment = {
    ...image.environment,
    PATH: process.env.PATH ?? '',
    NODE_NO_WARNINGS: '1',
    SVC_LISTEN__HOST: '127.0.0.1',
    SVC_LISTEN__PORT: String(port),
    SVC_SIMULATOR__PORT: '0',
  };
  expect(image.environment.NODE_ENV).toBe('production');
  const [executable, ...args] = [...image.entrypoint, ...image.command];
  expect(executable).toBe('node');
  const child = spawn(process.execPath, args, {
    cwd: app,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    const [probe, ...probeArgs] = image.healthcheck;
    expect(probe).toBe('node');
    const deadline = Date.now() + 30_000;
    let healthy = false;
    while (!healthy && Date.now() < deadline && child.exitCode === null) {
      healthy = await run(process.execPath, probeArgs, { cwd: app, env: environment }).then(
        () => true,
        () => false,
      );
      if (!healthy) await new Promise((done) => setTimeout(done, 200));
    }
    expect(healthy, output).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    const key = readFileSync(join(app, 'data/quickstart-key.txt'), 'utf8').trim();
    const answer = await fetch(`http://127.0.0.1:${port}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(((await answer.json()) as { type: string }).type).toBe('message');
    // The web console is built into the image (console/ and scripts/ reached the build stage).
    const page = await fetch(`http://127.0.0.1:${port}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script');
    expect((await fetch(`http://127.0.0.1:${port}/console/app.js`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/console/vendor/uPlot.esm.js`)).status).toBe(200);
    const { stdout: version } = await run(process.execPath, [...image.entrypoint.slice(1), '--version'], {
      cwd: app,
    });
    expect(version.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => (child.exitCode !== null ? done(undefined) : child.once('exit', done)));
  }
  expect(child.exitCode, output).toBe(0);
  console.log(
    `install steps: ${image.stages.length} stages, COPY ${image.copied.join(', ')}; stages ${Math.round(buildMs / 1000)} s, total ${Math.round((performance.now() - started) / 1000)} s`,
  );
}, 300_000);
