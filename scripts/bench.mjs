#!/usr/bin/env node
// Runs the benchmarks: bundles each bench/<area>.bench.ts with esbuild, runs it in its own Node
// process (with --expose-gc, so heap figures are honest) and prints its table. Pass area names
// to run a subset: `node scripts/bench.mjs kernel tmux`.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'bench');
mkdirSync(out, { recursive: true });

const wanted = process.argv.slice(2);
const areas = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.slice(0, -'.bench.ts'.length))
  .filter((a) => wanted.length === 0 || wanted.includes(a))
  .sort();

if (areas.length === 0) {
  console.error(`uplink error [core:NotFound]: no benchmark matches ${wanted.join(', ')} — hint: see bench/*.bench.ts`);
  process.exit(2);
}

let failed = 0;
for (const area of areas) {
  const bundle = join(out, `${area}.mjs`);
  await build({
    entryPoints: [join(root, 'bench', `${area}.bench.ts`)],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  const runner = join(out, `${area}.run.mjs`);
  writeFileSync(
    runner,
    `const m = await import(${JSON.stringify(pathToFileURL(bundle).href)});\nconst r = await m.run();\nprocess.stdout.write('\\n@@REPORT@@' + JSON.stringify(r) + '\\n');\nprocess.exit(0);\n`,
  );
  const child = spawnSync(process.execPath, ['--expose-gc', runner], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const marker = child.stdout.lastIndexOf('@@REPORT@@');
  if (child.status !== 0 || marker < 0) {
    failed++;
    console.error(`bench ${area}: failed (exit ${child.status})\n${child.stdout}`);
    continue;
  }
  const report = JSON.parse(child.stdout.slice(marker + '@@REPORT@@'.length));
  console.log(`\n## ${report.title}`);
  const width = Math.max(...report.rows.map((r) => r.name.length));
  for (const r of report.rows) {
    const v = Number.isInteger(r.value) ? String(r.value) : r.value.toPrecision(4);
    console.log(`  ${r.name.padEnd(width)}  ${v.padStart(12)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
  }
}
process.exit(failed ? 1 : 0);
