/**
 * Builds the web console into dist/console (or the folder given as the first argument): compiles
 * console/src with its own tsconfig (DOM, ES modules), copies the page, the stylesheet and uPlot's
 * ES module and stylesheet, and points the compiled `uplot` import at the copied module.
 *
 *   node scripts/build-console.mjs [out-dir]      (part of npm run build)
 *
 * The build happens in a scratch folder beside the output, and each file then replaces its old
 * version by a rename: a gateway reading the folder while another build runs (two test files at
 * once) sees every file whole, never a compiled charts.js whose `uplot` import is not yet rewritten.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(process.argv[2] ?? join(root, 'dist', 'console'));
mkdirSync(dirname(target), { recursive: true });
const out = mkdtempSync(join(dirname(target), '.console-build-'));
const require = createRequire(import.meta.url);

execFileSync(
  process.execPath,
  [require.resolve('typescript/bin/tsc'), '-p', join(root, 'console', 'tsconfig.json'), '--outDir', out],
  {
    stdio: 'inherit',
  },
);
mkdirSync(join(out, 'vendor'), { recursive: true });
copyFileSync(join(root, 'console', 'index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'console', 'console.css'), join(out, 'console.css'));
const uplot = dirname(require.resolve('uplot/dist/uPlot.esm.js'));
copyFileSync(join(uplot, 'uPlot.esm.js'), join(out, 'vendor', 'uPlot.esm.js'));
copyFileSync(join(uplot, 'uPlot.min.css'), join(out, 'vendor', 'uPlot.min.css'));
const charts = join(out, 'charts.js');
writeFileSync(
  charts,
  readFileSync(charts, 'utf8').replace(/from ['"]uplot['"]/, "from './vendor/uPlot.esm.js'"),
);

/** Moves every file of `from` into `to`, one rename each (atomic on one file system). */
function moveInto(from, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) moveInto(join(from, entry.name), join(to, entry.name));
    else renameSync(join(from, entry.name), join(to, entry.name));
  }
}
moveInto(out, target);
rmSync(out, { recursive: true, force: true });
