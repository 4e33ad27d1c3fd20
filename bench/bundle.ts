/** Bench helpers that run a piece of the checkout in its own process: bundled once, packages left to node_modules. */
import type { ChildProcess } from 'node:child_process';
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

/** The first line a child prints, as JSON (a server's address once it listens); rejects if the child exits first. */
export function firstLine(child: ChildProcess): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as Record<string, string>);
    });
    child.once('exit', (code) => reject(new Error(`${child.spawnfile} exited ${code} before it printed a line`)));
  });
}
