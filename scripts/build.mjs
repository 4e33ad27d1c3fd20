#!/usr/bin/env node
// Builds what runs outside the test runner: the CLI/hub bundle for Node, the Electron main and
// preload bundles, and the renderer (Vite). Entries that do not exist yet are skipped, so the
// build stays green while the project grows.
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { externalPackages } from './esbuild-externals.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const only = process.argv.slice(2);
const want = (name) => only.length === 0 || only.includes(name);

/** Libraries the Win32 desktop helper links (all part of Windows itself). */
const WIN32_LIBS = ['-loleacc', '-lole32', '-loleaut32', '-luuid', '-lgdi32', '-luser32'];

const targets = [
  // Split: `uplink channels` with a hub running loads dist/cli.mjs and a small chunk; the hub,
  // drivers, SQLite and the MCP SDK are chunks imported only by the commands that need them.
  {
    name: 'cli',
    entry: 'src/main/edges/cli/main.ts',
    out: 'dist/cli.mjs',
    format: 'esm',
    split: true,
    banner: "import { createRequire as __uplinkCreateRequire } from 'node:module'; const require = __uplinkCreateRequire(import.meta.url);",
  },
  { name: 'electron', entry: 'src/main/electron/main.ts', out: 'dist/electron/main.cjs', format: 'cjs' },
  // Sandboxed: it can require nothing but electron, so everything else it uses must be bundled.
  { name: 'preload', entry: 'src/preload/index.ts', out: 'dist/electron/preload.cjs', format: 'cjs', sandboxed: true },
  // `uplink/driver-sdk` (package.json `exports`): self-contained, for drivers outside this repo.
  { name: 'driver-sdk', entry: 'src/main/drivers/external/sdk.ts', out: 'dist/driver-sdk.mjs', format: 'esm' },
];

if (only.length === 0) rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

for (const t of targets) {
  if (!want(t.name) || !existsSync(join(root, t.entry))) continue;
  await build({
    entryPoints: { [t.out.replace(/^dist\/|\.[cm]?js$/g, '')]: join(root, t.entry) },
    outdir: dist,
    ...(t.split
      ? { splitting: true, chunkNames: 'chunks/[name]-[hash]', outExtension: { '.js': '.mjs' } }
      : { outExtension: { '.js': t.out.slice(t.out.lastIndexOf('.')) } }),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: t.format,
    plugins: [externalPackages],
    sourcemap: 'linked',
    logLevel: 'warning',
    banner: t.banner ? { js: t.banner } : undefined,
  });
  if (t.sandboxed) {
    const required = [...readFileSync(join(root, t.out), 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]).filter((m) => m !== 'electron');
    if (required.length) {
      console.error(
        `uplink error [build:Invalid]: ${t.out} requires ${[...new Set(required)].join(', ')}, which a sandboxed preload cannot load — hint: bundle it (see BUNDLED in scripts/esbuild-externals.mjs)`,
      );
      process.exit(1);
    }
  }
}

// The SDK's declarations come from the very contract types the hub compiles against. Relative
// specifiers get their `.js`, so the package's ESM declarations resolve under node16 too; the
// drivers take only types from the kernel, all in its types.ts, so the declarations point there
// and never reach the kernel's runtime (ajv, semver), which a driver's project need not have.
if (want('driver-sdk')) {
  const types = join(dist, 'driver-sdk-types');
  const tsc = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      'src/main/drivers/external/sdk.ts',
      '--declaration',
      '--emitDeclarationOnly',
      '--outDir',
      types,
      '--rootDir',
      'src',
      '--target',
      'ES2022',
      '--module',
      'ESNext',
      '--moduleResolution',
      'Bundler',
      '--strict',
      '--skipLibCheck',
      '--types',
      'node',
    ],
    { cwd: root, stdio: 'inherit' },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  for (const file of readdirSync(types, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts'))) {
    const path = join(types, file);
    if (/^main[\\/]kernel[\\/](?!types\.d\.ts$)/.test(file)) {
      rmSync(path);
      continue;
    }
    const text = readFileSync(path, 'utf8').replace(/('(?:\.\.\/)+kernel)'/g, "$1/types'");
    writeFileSync(path, text.replace(/((?:from|import)\s*\(?\s*')(\.{1,2}\/[^']+?)(?<!\.js)'/g, "$1$2.js'"));
  }
}

// The desktop driver's native helper (Python) travels beside the bundles, so `dist/` alone runs.
if (want('cli') || want('electron')) {
  cpSync(join(root, 'src/main/drivers/desktop/helper'), join(dist, 'desktop-helper'), {
    recursive: true,
    filter: (src) => !src.includes('__pycache__'),
  });
}

// The Win32 desktop helper (native, static: nothing to install on Windows) when mingw-w64 is here.
// CI installs mingw-w64, so a CI build without it is a broken runner, not a reason to ship less.
if (want('cli') || want('electron')) {
  const gcc = 'x86_64-w64-mingw32-gcc';
  const srcDir = join(root, 'src/main/drivers/desktop/win32');
  const probe = spawnSync(gcc, ['--version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    const message = `${gcc} not found: dist/desktop-helper/uplink-desktop-helper.exe not built — hint: apt-get install gcc-mingw-w64-x86-64`;
    if (process.env.CI === 'true') {
      console.error(`uplink error [build:Unavailable]: ${message}`);
      process.exit(1);
    }
    console.warn(`build: skipped the Win32 desktop helper: ${message}`);
    // A helper left from an earlier build would ship stale: without a compiler there is none.
    rmSync(join(dist, 'desktop-helper', 'uplink-desktop-helper.exe'), { force: true });
  } else {
    mkdirSync(join(dist, 'desktop-helper'), { recursive: true });
    const sources = readdirSync(srcDir)
      .filter((f) => f.endsWith('.c'))
      .sort()
      .map((f) => join(srcDir, f));
    const cc = spawnSync(gcc, ['-O2', '-static', '-Wall', '-o', join(dist, 'desktop-helper', 'uplink-desktop-helper.exe'), ...sources, ...WIN32_LIBS], {
      stdio: 'inherit',
    });
    if (cc.status !== 0) process.exit(cc.status ?? 1);
  }
}

if (want('renderer') && existsSync(join(root, 'src/renderer/index.html'))) {
  const vite = spawnSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (vite.status !== 0) process.exit(vite.status ?? 1);
}
