/**
 * `uplink demo` never touches the operator's data dir: with a hub serving `UPLINK_DATA_DIR` it
 * refuses in one line before it starts or writes anything, and otherwise its hub runs in
 * `<data dir>/demo-stage`, leaving the operator's config, audit and agents byte for byte as they were.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForTests, cliEnv, runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';
import { eventually } from '../../fixtures/tmux-server';

let b: TestBuild;
const serves: Served[] = [];

beforeAll(async () => {
  b = await buildForTests();
}, 60_000);

afterAll(async () => {
  await Promise.all(serves.map((s) => s.stop()));
});

/** Every file under `dir` (but `skip`), by path, with the SHA-256 of its bytes. */
function snapshot(dir: string, skip?: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (path === skip) continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Pids of processes whose environment carries a demo stage's marker. */
function stageMarkers(): Set<string> {
  const found = new Set<string>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const marker = readFileSync(`/proc/${name}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith('UPLINK_DEMO_STAGE='));
      if (marker) found.add(marker);
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

const OPERATOR_CONFIG = `${JSON.stringify({ approvals: { timeout_ms: 60_000 }, hub: { driver_timeout_ms: 20_000 } }, null, 2)}\n`;

describe('uplink demo and the data dir it is given', () => {
  it('refuses in one line while a hub serves that data dir, and leaves every file of it as it was', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), OPERATOR_CONFIG);
    const served = await startServe(b, dir);
    serves.push(served);
    // The hub has settled: two snapshots a checkpoint interval apart agree.
    let before = snapshot(dir);
    await eventually(
      async () => {
        await new Promise((r) => setTimeout(r, 2500));
        const now = snapshot(dir);
        const same = JSON.stringify(now) === JSON.stringify(before);
        before = now;
        return same;
      },
      20_000,
      'the hub to stop writing',
    );
    expect(Object.keys(before)).toContain('config.json');
    const markers = stageMarkers();

    const r = await runCli(b, dir, ['demo', '--headless', '--port', '0', '--exit-when-done']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `uplink error [core:Unavailable]: a hub (pid ${served.pid}) already serves ${dir} at ${served.url}; the demo changed nothing — hint: the demo runs a hub of its own: stop that hub first, or unset UPLINK_DATA_DIR to run the demo on a temporary data directory`,
    ]);
    expect(snapshot(dir)).toEqual(before);
    expect(existsSync(join(dir, 'demo-stage'))).toBe(false);
    expect([...stageMarkers()].filter((m) => !markers.has(m))).toEqual([]);
  });

  it("runs its hub in <data dir>/demo-stage: the operator's own files stay as they were", async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), OPERATOR_CONFIG);
    writeFileSync(join(dir, 'agents.json'), '{"agents":[]}\n');
    const before = snapshot(dir);
    const child = spawn(process.execPath, [b.launcher, 'demo', '--headless', '--port', '0'], { env: cliEnv(b, dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    let exitCode: number | null | undefined;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r((exitCode = code))));
    try {
      await eventually(() => out.includes('panel: ') || exitCode !== undefined, 45_000, 'the demo to serve');
      expect(out).toContain('panel: ');
      const stage = join(dir, 'demo-stage');
      expect(out).toContain(`UPLINK_DATA_DIR=${stage}`);
      const config = JSON.parse(readFileSync(join(stage, 'config.json'), 'utf8')) as { tmux: { socket: string }; approvals: { timeout_ms: number } };
      expect(config.approvals.timeout_ms).toBe(86_400_000);
      expect(existsSync(config.tmux.socket)).toBe(true);
      expect(snapshot(dir, stage)).toEqual(before);
      expect(statSync(stage).mode & 0o777).toBe(0o700);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(exitCode).toBe(143);
    expect(snapshot(dir, join(dir, 'demo-stage'))).toEqual(before);
  });
});
