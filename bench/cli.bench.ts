/**
 * `uplink channels` as a whole process with a hub running (`uplink serve` on a private tmux server),
 * beside `tmux -S <socket> list-panes -a` measured in the same run, alternating — the floor any
 * command-line tool asking tmux pays. Target: ≤ 150 ms per `uplink channels`. Plus the same command
 * with no hub running (an embedded hub per process), for the difference forwarding makes.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { TmuxTestServer } from '../test/fixtures/tmux-server';
import { median, type BenchReport, type BenchRow } from './types';

const RUNS = 30;
const EMBEDDED_RUNS = 5;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const UPLINK = join(ROOT, 'bin', 'uplink');

/** Wall time of one whole process, spawn to exit. */
function timed(command: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(command, args, { env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function rows(name: string, samples: number[], note?: string): BenchRow[] {
  const sorted = [...samples].sort((a, b) => a - b);
  return [
    { name: `${name} min`, value: sorted[0]!, unit: 'ms' },
    { name: `${name} median`, value: median([...samples]), unit: 'ms', ...(note ? { note } : {}) },
    { name: `${name} max`, value: sorted[sorted.length - 1]!, unit: 'ms' },
  ];
}

/** Runs the CLI benchmark. */
export async function run(): Promise<BenchReport> {
  const server = TmuxTestServer.start('sh');
  for (let i = 0; i < 9; i++) server.tmux('new-window', '-d', '-t', 'it', 'cat');
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-bench-cli-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ hub: { drivers: ['tmux'] }, tmux: { socket: server.socket } }));
  const env = TmuxTestServer.cleanEnv({ UPLINK_DATA_DIR: dataDir });
  const uplink = (): number => timed(process.execPath, [UPLINK, 'channels'], env);
  const tmux = (): number => timed('tmux', ['-S', server.socket, 'list-panes', '-a'], env);
  const node = (): number => timed(process.execPath, ['-e', '0'], env);
  let serve: ReturnType<typeof spawn> | undefined;
  try {
    const embedded: number[] = [];
    for (let i = 0; i < EMBEDDED_RUNS; i++) embedded.push(uplink());

    serve = spawn(process.execPath, [UPLINK, 'serve', '--port', '0', '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      serve!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve();
      });
      serve!.once('exit', (code) => reject(new Error(`uplink serve exited ${code}`)));
    });
    // Warm both (page cache, the hub's channel listing).
    for (let i = 0; i < 3; i++) {
      uplink();
      tmux();
      node();
    }
    const forwarded: number[] = [];
    const raw: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      forwarded.push(uplink());
      raw.push(tmux());
      bare.push(node());
    }
    const f = median([...forwarded]);
    const t = median([...raw]);
    const n = median([...bare]);
    return {
      title: `uplink channels as a whole process, hub running (${RUNS} runs each, alternating; 10 panes)`,
      rows: [
        ...rows('tmux list-panes -a', raw, 'baseline: one tmux client process'),
        ...rows('uplink channels (hub running)', forwarded, 'target ≤ 150 ms'),
        { name: 'uplink channels / tmux list-panes (median)', value: f / t, unit: '×' },
        ...rows('node -e 0', bare, 'baseline: starting Node itself'),
        { name: 'uplink channels / node -e 0 (median)', value: f / n, unit: '×', note: 'what the CLI adds to starting Node' },
        ...rows(`uplink channels (no hub, embedded; ${EMBEDDED_RUNS} runs)`, embedded),
        { name: 'embedded / forwarded (median)', value: median([...embedded]) / f, unit: '×' },
      ],
    };
  } finally {
    serve?.kill('SIGTERM');
    server.stop();
  }
}
