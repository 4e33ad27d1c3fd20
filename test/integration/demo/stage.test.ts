/**
 * `uplink demo`'s stage leaves nothing behind: whether the demo is killed -9 mid-story or stopped
 * with Ctrl-C, every process it started (tmux server and panes, Xvfb, D-Bus, AT-SPI, the app) is
 * gone and its directory removed — and a "user" tmux server the demo was started inside is
 * untouched. A missing dependency is one line with the install hint, and nothing starts.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import { ROOT } from '../../fixtures/hub-build';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';

const MARKER = 'UPLINK_DEMO_STAGE=';

/** Every live process whose environment carries a stage marker, by marker. */
function stageProcesses(): Map<string, Array<{ pid: number; cmd: string }>> {
  const found = new Map<string, Array<{ pid: number; cmd: string }>>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      const marker = readFileSync(`/proc/${name}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith(MARKER));
      if (!marker) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim();
      found.set(marker, [...(found.get(marker) ?? []), { pid: Number(name), cmd }]);
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

/** The watchdog of a stage: `sh -c … uplink-demo-watchdog <pid> <marker> <dir>`. */
function watchdogOf(marker: string): { pid: number; dir: string } | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0');
      const at = argv.indexOf('uplink-demo-watchdog');
      if (at >= 0 && argv[at + 2] === marker) return { pid: Number(name), dir: argv[at + 3]! };
    } catch {
      // gone
    }
  }
  return undefined;
}

// The built CLI (`npm run build`): the demo finds its app (demo/app.py) from where the bundle is.
const launcher = join(ROOT, 'bin/uplink');
let user: TmuxTestServer;
const dirs: string[] = [];
const started: Array<{ child: ChildProcess; marker: string }> = [];

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli.mjs'))) throw new Error('uplink is not built — hint: run `npm run build` first');
  user = TmuxTestServer.start('sh');
});

afterAll(() => {
  // A failed test must not leave its stage behind either.
  for (const { child, marker } of started) {
    child.kill('SIGKILL');
    for (const { pid } of stageProcesses().get(marker) ?? []) process.kill(pid, 'SIGKILL');
  }
  user?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Starts `uplink demo --headless` from inside the "user" tmux pane's environment; resolves once it serves. */
async function startDemo(): Promise<{ child: ChildProcess; marker: string; output: () => string; exited: Promise<number | null> }> {
  const before = new Set(stageProcesses().keys());
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-demo-test-'));
  dirs.push(dataDir);
  const child = spawn(process.execPath, [launcher, 'demo', '--headless', '--port', '0'], {
    env: { ...user.ownEnv(), UPLINK_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  let exitedAt: number | null | undefined;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r((exitedAt = code))));
  await eventually(() => out.includes('panel: ') || exitedAt !== undefined, 45_000, 'the demo to serve');
  if (!out.includes('panel: ')) throw new Error(`the demo exited (${exitedAt}) before it served: ${out}`);
  const marker = [...stageProcesses().keys()].find((m) => !before.has(m));
  if (!marker) throw new Error('no process of the new stage carries the marker');
  started.push({ child, marker });
  return { child, marker, output: () => out, exited };
}

/** Signs in with the demo's one-time panel URL and keeps an operator panel attached, as a browser would. */
async function attachPanel(panelUrl: string): Promise<WebSocket> {
  const url = new URL(panelUrl);
  const res = await fetch(`${url.origin}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url.origin },
    body: JSON.stringify({ code: url.hash.replace(/^#code=/, '') }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { key } = (await res.json()) as { key: string };
  const ws = new WebSocket(`${url.origin.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin: url.origin, headers: { cookie } });
  ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', key })));
  ws.on('error', () => undefined);
  return ws;
}

function expectWholeStage(marker: string): void {
  const cmds = (stageProcesses().get(marker) ?? []).map((p) => p.cmd);
  for (const part of ['Xvfb', 'dbus-daemon', 'tmux', 'demo/app.py', 'reviewer.sh'])
    expect(
      cmds.some((c) => c.includes(part)),
      `${part} in ${cmds.join(' | ')}`,
    ).toBe(true);
}

describe('uplink demo cleans up after itself', () => {
  it('killed -9 mid-story: its watchdog removes every process it started and its directory; the user tmux server is untouched', async () => {
    const panesBefore = user.tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_pid}');
    const { child, marker, exited, output } = await startDemo();
    expectWholeStage(marker);
    // Mid-story: a panel is attached and the agent's first prompt is waiting for the operator.
    const panel = await attachPanel(/panel: (\S+)/.exec(output())![1]!);
    await eventually(() => output().includes('step 3/8'), 30_000, 'the story to reach its first prompt');
    expect((stageProcesses().get(marker) ?? []).some((p) => p.cmd.includes('uplink_desktop_helper'))).toBe(true);
    const watchdog = watchdogOf(marker);
    expect(watchdog && existsSync(watchdog.dir)).toBe(true);
    child.kill('SIGKILL');
    await exited;
    await eventually(() => !stageProcesses().has(marker), 10_000, 'every stage process to be gone');
    await eventually(() => !existsSync(watchdog!.dir), 5000, 'the stage directory to be removed');
    await eventually(() => watchdogOf(marker) === undefined, 5000, 'the watchdog to exit');
    expect(user.tmux('list-panes', '-a', '-F', '#{pane_id} #{pane_pid}')).toBe(panesBefore);
    panel.terminate();
  });

  it('Ctrl-C (SIGINT) and SIGTERM: the demo stops its stage itself and exits', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const { child, marker, exited } = await startDemo();
      const watchdog = watchdogOf(marker)!;
      child.kill(signal);
      expect(await exited).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(stageProcesses().has(marker)).toBe(false);
      expect(existsSync(watchdog.dir)).toBe(false);
      await eventually(() => watchdogOf(marker) === undefined, 5000, 'the watchdog to exit');
    }
  });

  it('--list prints the numbered steps and starts nothing', async () => {
    const before = new Set(stageProcesses().keys());
    const child = spawn(process.execPath, [launcher, 'demo', '--list'], { env: TmuxTestServer.cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    expect(await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))).toBe(0);
    const lines = out.trimEnd().split('\n');
    expect(lines.map((l) => /^(\d+)\. /.exec(l)?.[1])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(out).toContain('semantic_ui');
    expect(out).toContain('visual_ui');
    expect([...stageProcesses().keys()].filter((m) => !before.has(m))).toEqual([]);
  });

  it('without tmux it says what is missing in one line with the install hint, exits non-zero and starts nothing', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'uplink-demo-path-'));
    dirs.push(bin);
    mkdirSync(join(bin, 'bin'));
    symlinkSync(process.execPath, join(bin, 'bin', 'node'));
    const before = new Set(stageProcesses().keys());
    const child = spawn(process.execPath, [launcher, 'demo', '--headless', '--port', '0'], {
      env: { ...TmuxTestServer.cleanEnv(), PATH: join(bin, 'bin') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += String(d)));
    child.stderr!.on('data', (d) => (err += String(d)));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).not.toBe(0);
    expect(out).toBe('');
    expect(err.trimEnd().split('\n')).toEqual([
      'uplink error [core:Unavailable]: the demo needs tmux, which is not installed — hint: sudo apt-get install tmux (`scripts/install-system-deps.sh` installs everything the demo uses)',
    ]);
    expect([...stageProcesses().keys()].filter((m) => !before.has(m))).toEqual([]);
  });
});
