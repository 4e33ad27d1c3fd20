#!/usr/bin/env node
// Builds what runs outside the test runner: the CLI/hub bundle for Node, the Electron main and
// preload bundles, and the renderer (Vite). Entries that do not exist yet are skipped, so the
// build stays green while the project grows.
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const only = process.argv.slice(2);
const want = (name) => only.length === 0 || only.includes(name);

const targets = [
  // Split: `uplink channels` with a hub running loads dist/cli.mjs and a small chunk; the hub,
  // drivers, SQLite and the MCP SDK are chunks imported only by the commands that need them.
  { name: 'cli', entry: 'src/main/edges/cli/main.ts', out: 'dist/cli.mjs', format: 'esm', split: true, banner: "import { createRequire as __uplinkCreateRequire } from 'node:module'; const require = __uplinkCreateRequire(import.meta.url);" },
  { name: 'electron', entry: 'src/main/electron/main.ts', out: 'dist/electron/main.cjs', format: 'cjs' },
  { name: 'preload', entry: 'src/preload/index.ts', out: 'dist/electron/preload.cjs', format: 'cjs' },
];

if (only.length === 0) rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

for (const t of targets) {
  if (!want(t.name) || !existsSync(join(root, t.entry))) continue;
  await build({
    entryPoints: { [t.out.replace(/^dist\/|\.[cm]?js$/g, '')]: join(root, t.entry) },
    outdir: dist,
    ...(t.split ? { splitting: true, chunkNames: 'chunks/[name]-[hash]', outExtension: { '.js': '.mjs' } } : { outExtension: { '.js': t.out.slice(t.out.lastIndexOf('.')) } }),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: t.format,
    packages: 'external',
    external: ['electron'],
    sourcemap: 'linked',
    logLevel: 'warning',
    banner: t.banner ? { js: t.banner } : undefined,
  });
}

// The desktop driver's native helper (Python) travels beside the bundles, so `dist/` alone runs.
if (want('cli') || want('electron')) {
  cpSync(join(root, 'src/main/drivers/desktop/helper'), join(dist, 'desktop-helper'), {
    recursive: true,
    filter: (src) => !src.includes('__pycache__'),
  });
}

if (want('renderer') && existsSync(join(root, 'src/renderer/index.html'))) {
  const vite = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (vite.status !== 0) process.exit(vite.status ?? 1);
}
