/**
 * The demo's stage: a private tmux server with two named agent panes, a display (the user's, or a
 * private Xvfb) with its own D-Bus session bus, and the demo app. Every process the stage starts
 * carries one environment marker (`UPLINK_DEMO_STAGE=<id>`), and so do their children, including
 * the ones that daemonize (the tmux server, AT-SPI's bus): `sweep` finds them all in /proc and
 * kills them. A watchdog in its own session does the same sweep when the demo process is gone,
 * however it died (kill -9 included).
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HubError, writeFileAtomic } from '../../hub';

/** The environment variable that marks every process of one stage. */
export const STAGE_MARKER = 'UPLINK_DEMO_STAGE';
/** Title of the demo app's window (demo/app.py). */
export const DEMO_WINDOW_TITLE = 'Uplink Demo - Sign-up';
/** The demo's data dir inside a data dir the user named (`UPLINK_DATA_DIR`). */
export const DEMO_STAGE_DIR = 'demo-stage';
/** The labels (`@name`) of the two agent panes. */
export const PANES = { builder: 'builder', reviewer: 'reviewer' } as const;

const INSTALL_ALL = '`scripts/install-system-deps.sh` installs everything the demo uses';

/** The checkout (or package) root: where `demo/app.py` is, from source or from dist/. */
export function demoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'demo', 'app.py'))) return dir;
    if (dirname(dir) === dir)
      throw new HubError('core', 'NotFound', 'the demo app (demo/app.py) is not in this installation', { hint: 'run `uplink demo` from an Uplink checkout' });
  }
}

/** Debian's python3 has python3-gi; a pyenv python3 on PATH may not. */
const python = (): string => (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** Whether `command` is an executable on env's PATH. */
export function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}

const missing = (what: string, pkg: string): HubError =>
  new HubError('core', 'Unavailable', `the demo needs ${what}, which is not installed`, { hint: `sudo apt-get install ${pkg} (${INSTALL_ALL})` });

/** Everything the stage needs, checked before anything starts, so a gap costs nothing to clean up. */
export function checkDependencies(privateDisplay: boolean, env: NodeJS.ProcessEnv = process.env): void {
  if (!onPath('tmux', env)) throw missing('tmux', 'tmux');
  if (privateDisplay && !onPath('Xvfb', env)) throw missing('Xvfb (a private display for --headless)', 'xvfb');
  if (!onPath('dbus-daemon', env)) throw missing('dbus-daemon (a D-Bus session for AT-SPI)', 'dbus');
  if (!['/usr/libexec/at-spi-bus-launcher', '/usr/lib/at-spi2-core/at-spi-bus-launcher'].some(existsSync))
    throw missing('AT-SPI (at-spi-bus-launcher)', 'at-spi2-core');
  try {
    execFileSync(python(), ['-c', "import gi; gi.require_version('Gtk', '3.0'); gi.require_version('Atspi', '2.0'); from gi.repository import Gtk, Atspi"], {
      stdio: 'ignore',
      env: { ...env, DISPLAY: '' },
    });
  } catch {
    throw missing('python3 with GTK 3 and AT-SPI bindings', 'python3-gi gir1.2-gtk-3.0 gir1.2-atspi-2.0');
  }
}

/** Pids of this stage's processes (everything whose environment carries the marker), but ours. */
export function stagePids(id: string): number[] {
  const needle = `${STAGE_MARKER}=${id}`;
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(needle)) pids.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM to every process of the stage (Xvfb removes its lock files then), SIGKILL to what stays. */
export async function sweep(id: string, graceMs = 2000): Promise<void> {
  const signal = (sig: NodeJS.Signals): number => {
    const pids = stagePids(id);
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
    return pids.length;
  };
  if (signal('SIGTERM') === 0) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && stagePids(id).some((pid) => !zombie(pid))) await sleep(50);
  signal('SIGKILL');
}

function zombie(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

// The watchdog: a shell in its own session (Ctrl-C's signal to the terminal's process group does
// not reach it) that waits for the demo process to go, then sweeps the stage and removes its
// directory. It does not carry the marker, so it never kills itself.
const WATCHDOG = `
parent=$1 needle=$2 dir=$3
alive() { [ -r /proc/$parent/stat ] && ! grep -q ') Z' /proc/$parent/stat; }
while alive; do sleep 0.5; done
sweep() {
  for e in /proc/[0-9]*/environ; do
    p=\${e#/proc/}; p=\${p%/environ}
    if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qxF "$needle"; then kill -$1 "$p" 2>/dev/null; fi
  done
}
sweep TERM; sleep 1; sweep KILL
rm -rf "$dir"
`;

/** A running stage. */
export interface Stage {
  id: string;
  /** Private temp directory: sockets, the panes' working directory, the data dir unless given. */
  dir: string;
  dataDir: string;
  /** The data dir is the stage's own (removed with it), not one the user named. */
  ownDataDir: boolean;
  tmuxSocket: string;
  /** DISPLAY and DBUS_SESSION_BUS_ADDRESS of the demo app (and of the hub's desktop driver). */
  display: { DISPLAY: string; DBUS_SESSION_BUS_ADDRESS: string; private: boolean };
  /** The demo app's pid and the JSON lines it printed so far. */
  app: { pid: number; events(): Array<Record<string, unknown>> };
  watchdogPid: number;
  stop(): Promise<void>;
}

export interface StageOptions {
  /** A private Xvfb even when a display exists. */
  headless: boolean;
  /** The demo's own data dir (`<UPLINK_DATA_DIR>/demo-stage`), never the user's; else a fresh one inside the stage. */
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** The env of every stage process: marked, never the user's tmux, accessibility on. */
function stageEnv(base: NodeJS.ProcessEnv, id: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...extra, [STAGE_MARKER]: id };
  delete env.TMUX;
  delete env.TMUX_PANE;
  delete env.NO_AT_BRIDGE;
  return env;
}

/** Reads lines from a child's stdout until `match` returns a value, or fails after `ms`. */
function firstLine<T>(child: ChildProcess, what: string, ms: number, match: (line: string) => T | undefined): Promise<T> {
  return new Promise<T>((resolvePromise, reject) => {
    let buf = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    const timer = setTimeout(
      () => reject(new HubError('core', 'Unavailable', `${what} did not start within ${ms / 1000} s`, { hint: err.trim().split('\n').pop() || INSTALL_ALL })),
      ms,
    );
    const onData = (d: Buffer): void => {
      buf += d.toString();
      for (const line of buf.split('\n')) {
        const value = match(line);
        if (value !== undefined) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolvePromise(value);
          return;
        }
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new HubError('core', 'Unavailable', `${what} exited (${code}) before it was ready`, { hint: err.trim().split('\n').pop() || INSTALL_ALL }));
    });
  });
}

/**
 * Starts the stage. On any failure everything started so far is swept before the error is thrown.
 * The caller's process gets the marker too (the hub's helpers inherit it).
 */
export async function startStage(options: StageOptions): Promise<Stage> {
  const base = options.env ?? process.env;
  const privateDisplay = options.headless || !base.DISPLAY;
  checkDependencies(privateDisplay, base);
  const root = demoRoot();
  const id = randomBytes(8).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'uplink-demo-'));
  const watchdogEnv = { ...base };
  delete watchdogEnv[STAGE_MARKER];
  const watchdog = spawn('sh', ['-c', WATCHDOG, 'uplink-demo-watchdog', String(process.pid), `${STAGE_MARKER}=${id}`, dir], {
    detached: true,
    stdio: 'ignore',
    env: watchdogEnv,
  });
  watchdog.unref();
  process.env[STAGE_MARKER] = id;
  delete process.env.TMUX;
  delete process.env.TMUX_PANE;
  const stop = async (): Promise<void> => {
    await sweep(id);
    rmSync(dir, { recursive: true, force: true });
    try {
      process.kill(watchdog.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  try {
    const work = join(dir, 'work');
    mkdirSync(work);
    const dataDir = options.dataDir ?? join(dir, 'data');
    // An `uplink` run in a pane (or the app) talks to the demo's hub, not the user's.
    const env = stageEnv(base, id, { PS1: '$ ', ENV: '', HOME: base.HOME ?? work, GIT_CEILING_DIRECTORIES: dir, UPLINK_DATA_DIR: dataDir });

    // The display and its session bus.
    let display = base.DISPLAY ?? '';
    if (privateDisplay) {
      const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp', '+extension', 'XTEST', '+extension', 'X-Resource'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      display = `:${await firstLine(xvfb, 'Xvfb', 15_000, (l) => /^\d+$/.exec(l.trim())?.[0])}`;
    }
    let bus = privateDisplay ? '' : (base.DBUS_SESSION_BUS_ADDRESS ?? '');
    if (!bus) {
      // XDG_RUNTIME_DIR: AT-SPI's own bus (started by this one) puts its socket in the stage too.
      const daemon = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1', `--address=unix:tmpdir=${dir}`], {
        env: { ...env, DISPLAY: display, XDG_RUNTIME_DIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      bus = await firstLine(daemon, 'dbus-daemon', 10_000, (l) => (l.startsWith('unix:') ? l.trim() : undefined));
    }
    const displayEnv = { DISPLAY: display, DBUS_SESSION_BUS_ADDRESS: bus };
    const appEnv = stageEnv(env, id, displayEnv);
    delete appEnv.WAYLAND_DISPLAY;
    // The hub's desktop driver runs in this process: it must see the stage's display and bus.
    Object.assign(process.env, displayEnv);
    delete process.env.WAYLAND_DISPLAY;
    delete process.env.NO_AT_BRIDGE;

    // tmux: a private server with the two agent panes, named so rules and the agent find them.
    const socket = join(dir, 'tmux.sock');
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-S', socket, ...args], { env, encoding: 'utf8', cwd: work });
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'demo', '-x', '160', '-y', '40', '-c', work, 'sh');
    const builder = tmux('list-panes', '-t', 'demo', '-F', '#{pane_id}').trim();
    const reviewer = tmux('split-window', '-d', '-h', '-t', 'demo', '-c', work, '-P', '-F', '#{pane_id}', 'sh', join(root, 'demo', 'reviewer.sh')).trim();
    tmux('set-option', '-p', '-t', builder, '@name', PANES.builder);
    tmux('set-option', '-p', '-t', reviewer, '@name', PANES.reviewer);

    // The demo app.
    const app = spawn(python(), [join(root, 'demo', 'app.py')], { env: appEnv, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    app.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const events = (): Array<Record<string, unknown>> =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await firstLine(app, 'the demo app (demo/app.py)', 20_000, (l) => (l.includes('"ready"') ? true : undefined));

    writeDemoConfig(dataDir, socket);
    return {
      id,
      dir,
      dataDir,
      ownDataDir: options.dataDir === undefined,
      tmuxSocket: socket,
      display: { ...displayEnv, private: privateDisplay },
      app: { pid: app.pid!, events },
      watchdogPid: watchdog.pid!,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The demo's config, in the demo's own data dir: the stage's tmux server, the two agent panes
 * granted the operator tier (panes start as observers), and prompts that wait as long as the
 * presenter takes. Other settings of an earlier demo's config.json are kept.
 */
export function writeDemoConfig(dataDir: string, socket: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = resolve(dataDir, 'config.json');
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    // none yet (or unreadable: the demo's own replaces it)
  }
  const approvals = (config.approvals && typeof config.approvals === 'object' ? config.approvals : {}) as Record<string, unknown>;
  config.tmux = {
    socket,
    write_allow: [
      { pattern: PANES.builder, tier: 'operator' },
      { pattern: PANES.reviewer, tier: 'operator' },
    ],
  };
  config.approvals = { ...approvals, timeout_ms: 86_400_000 };
  writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`, 0o600);
}
