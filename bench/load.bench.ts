/**
 * Many agents at once: `uplink serve` (a driver answering screen reads, `load-drivers.ts`) with 50 agents over Streamable HTTP,
 * each its own MCP session calling `channel_observe` back to back for 60 s
 * (`UPLINK_BENCH_LOAD_SECONDS` to change it). The load generator runs in a process of its own
 * (`load-generator.ts`), so the hub's figures are the hub's. Reports calls/s, latency p50/p99,
 * and the hub's RSS before the load (idle for 15 s after a 2 s warm-up run), at its peak, and
 * after 15 s idle once the agents have gone (each ends its session, as a well-behaved client does).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundled, firstLine, OUT, ROOT } from './bundle';
import { writeLauncherFile } from '../test/fixtures/launcher';
import { MiB } from './payload';
import type { BenchReport } from './types';

const AGENTS = 50;
const SECONDS = Number(process.env.UPLINK_BENCH_LOAD_SECONDS) || 60;
const IDLE_AFTER_MS = 15_000;

/** A process's resident set, from /proc. */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

interface LoadResult {
  calls: number;
  errors: number;
  elapsed: number;
  p50: number;
  p99: number;
}

function generate(script: string, url: string, token: string, agents: number, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [script, url, token, String(agents), String(seconds)],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`load generator failed: ${stderr || error.message}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult),
    );
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<BenchReport> {
  mkdirSync(OUT, { recursive: true });
  const uplink = writeLauncherFile(join(OUT, 'uplink-load.mjs'), join(ROOT, 'dist/cli.mjs'), await bundled('bench/load-drivers.ts'));
  const generator = await bundled('bench/load-generator.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-bench-load-'));
  const serve = spawn(process.execPath, [uplink, 'serve', '--port', '0', '--json'], { env: { ...process.env, UPLINK_DATA_DIR: dataDir }, cwd: ROOT });
  try {
    const served = await firstLine(serve);
    const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const pid = serve.pid!;
    // Warm the hub (one short run), then let it settle as long as after the load: that is the idle figure.
    await generate(generator, served.mcp_url!, token, AGENTS, 2);
    await sleep(IDLE_AFTER_MS);
    const before = rss(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 200);
    const load = await generate(generator, served.mcp_url!, token, AGENTS, SECONDS);
    clearInterval(sampler);
    peak = Math.max(peak, rss(pid));
    await sleep(IDLE_AFTER_MS);
    const after = rss(pid);
    const mib = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;
    return {
      title: `Load: ${AGENTS} HTTP agents calling channel_observe for ${SECONDS} s (load generator in its own process)`,
      rows: [
        { name: 'calls/s', value: Math.round(load.calls / load.elapsed), unit: 'calls/s', note: `${load.calls} calls, ${load.errors} errors` },
        { name: 'latency p50', value: load.p50, unit: 'ms' },
        { name: 'latency p99', value: load.p99, unit: 'ms', note: 'goal ≤ 100' },
        { name: 'hub RSS before (idle, warmed)', value: mib(before), unit: 'MiB' },
        { name: 'hub RSS peak', value: mib(peak), unit: 'MiB' },
        { name: `hub RSS ${IDLE_AFTER_MS / 1000} s after`, value: mib(after), unit: 'MiB', note: `${mib(after - before)} MiB above before; goal ≤ 32` },
      ],
    };
  } finally {
    serve.kill('SIGTERM');
  }
}
