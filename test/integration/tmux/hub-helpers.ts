/**
 * Builds, once per worker, one bundle with the CLI and the tmux fixture drivers (see
 * test/fixtures/tmux-cli-entry.ts) and a launcher for it, for the CLI/MCP tests.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ROOT, type TestBuild } from '../../fixtures/hub-build';

let built: Promise<TestBuild> | undefined;

/**
 * A TestBuild whose launcher and `drivers` module are the same tmux bundle. Rebuilt when the
 * files are gone (a concurrent `npm run build` empties dist/), so call it before each use.
 */
export async function buildTmuxHub(): Promise<TestBuild> {
  const current = await built;
  if (current && (!existsSync(current.launcher) || !existsSync(current.drivers))) built = undefined;
  built ??= (async () => {
    const dir = join(ROOT, 'dist', 'test-build', `tmux-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(dir, { recursive: true });
    const bundle = join(dir, 'tmux-cli.mjs');
    await build({
      entryPoints: [join(ROOT, 'test/fixtures/tmux-cli-entry.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      packages: 'external',
      external: ['electron'],
      logLevel: 'warning',
      banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
    });
    const launcher = join(dir, 'uplink.mjs');
    writeFileSync(launcher, `const { main } = await import(${JSON.stringify(pathToFileURL(bundle).href)});\nprocess.exitCode = await main(process.argv.slice(2));\n`);
    return { launcher, drivers: bundle, approver: '' };
  })();
  return built;
}

/** Writes `<data dir>/config.json`. */
export function writeConfig(dataDir: string, config: Record<string, unknown>): void {
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config, null, 2));
}

/** Standing rules that approve every tmux op (the embedded hub has no panel). */
export const APPROVE_TMUX = { approvals: { rules: [{ id: 'tmux-all', channel: 'tmux:*', op: '*' }] } };
