/**
 * Shared by the interop tests: the Node 22 tools of test/interop/node_modules, a child process
 * run to completion without blocking the event loop (the bearer proxy lives in this process), and
 * a real `uplink serve` on a private data dir with the fixture drivers.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildForTests, ROOT, startServe, tmpDataDir } from '../fixtures/hub-build';
import type { Served, TestBuild } from '../fixtures/hub-build';

export const INTEROP = join(ROOT, 'test/interop');
/** Node 22 from the `node` package: the conformance suite and the Inspector need it, Uplink runs on 20. */
export const NODE22 = join(INTEROP, 'node_modules/.bin/node');
export const CONFORMANCE = join(INTEROP, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** The newest 0.2.x line of the suite, installed beside it as `conformance-next` (package.json). */
export const CONFORMANCE_NEXT = join(INTEROP, 'node_modules/conformance-next/dist/index.js');
export const INSPECTOR_CLI = join(INTEROP, 'node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Hub {
  build: TestBuild;
  served: Served;
  dataDir: string;
  /** The default agent's bearer token. */
  token: string;
}

export async function startHub(): Promise<Hub> {
  const build = await buildForTests();
  const dataDir = tmpDataDir('uplink-interop-');
  const served = await startServe(build, dataDir);
  return { build, served, dataDir, token: readFileSync(join(dataDir, 'token'), 'utf8').trim() };
}
