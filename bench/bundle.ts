/** Bench helpers that run a piece of the checkout in its own process: bundled once, packages left to node_modules. */
import { basename, join } from 'node:path';
import { build } from 'esbuild';

export const ROOT = process.cwd();
/** Where the benches put what they bundle and run. */
export const OUT = join(ROOT, 'dist', 'bench');

/** `entry` (a path under the checkout) bundled for Node as `dist/bench/<name>.mjs`, its packages left to node_modules; returns that path. */
export async function bundled(entry: string): Promise<string> {
  const outfile = join(OUT, `${basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
  });
  return outfile;
}
