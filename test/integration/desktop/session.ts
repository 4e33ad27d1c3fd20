/**
 * A private X display (Xvfb with XTEST and X-Resource) and D-Bus session bus per test file, so
 * desktop test files running in parallel never fight over keyboard focus. With
 * `UPLINK_TEST_SHARED_DISPLAY=1` the tests use the DISPLAY/DBUS_SESSION_BUS_ADDRESS already
 * exported (by `.ci/run` / `scripts/desktop-session.sh`) instead.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A running display + bus and the environment that reaches them. */
export interface DesktopSession {
  display: string;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/** The environment of a test app or helper: this session's display and bus, accessibility on. */
function sessionEnv(display: string, bus: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DISPLAY: display, DBUS_SESSION_BUS_ADDRESS: bus };
  delete env.NO_AT_BRIDGE;
  delete env.WAYLAND_DISPLAY;
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

/** Starts Xvfb on a display number it picks itself (-displayfd) and a dbus-launch bus. */
export async function startSession(): Promise<DesktopSession> {
  if (process.env.UPLINK_TEST_SHARED_DISPLAY === '1' && process.env.DISPLAY && process.env.DBUS_SESSION_BUS_ADDRESS) {
    return { display: process.env.DISPLAY, env: sessionEnv(process.env.DISPLAY, process.env.DBUS_SESSION_BUS_ADDRESS), stop: async () => undefined };
  }
  const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp', '+extension', 'XTEST', '+extension', 'X-Resource'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const display = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('Xvfb did not report a display within 15 s')), 15_000);
    xvfb.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`:${m[1]}`);
      }
    });
    xvfb.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb exited (${code}) — is the xvfb package installed?`));
    });
  });
  const { stdout } = await run('dbus-launch', ['--sh-syntax'], { env: { ...process.env, DISPLAY: display } });
  const bus = /DBUS_SESSION_BUS_ADDRESS='([^']+)'/.exec(stdout)?.[1];
  const busPid = Number(/DBUS_SESSION_BUS_PID=(\d+)/.exec(stdout)?.[1]);
  if (!bus || !busPid) throw new Error(`dbus-launch printed no address: ${stdout}`);
  return {
    display,
    env: sessionEnv(display, bus),
    async stop() {
      try {
        process.kill(busPid, 'SIGTERM');
      } catch {
        // already gone
      }
      await stopChild(xvfb);
    },
  };
}

/** SIGTERM, then SIGKILL after 3 s; resolves when the process has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Polls `probe` until it returns a value other than undefined/false, or throws at the deadline. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether Debian's weston (the Wayland compositor the Wayland tests run headless) is installed. */
export function hasWeston(): boolean {
  return existsSync('/usr/bin/weston');
}

/**
 * A headless Wayland session: weston on a private socket in a private XDG_RUNTIME_DIR and its own
 * D-Bus session bus. The environment has WAYLAND_DISPLAY and no DISPLAY, as a pure Wayland desktop.
 */
export async function startWaylandSession(): Promise<DesktopSession> {
  const runtimeDir = mkdtempSync(join(tmpdir(), 'uplink-wl-'));
  chmodSync(runtimeDir, 0o700);
  const socket = 'wayland-uplink';
  const base: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: runtimeDir };
  delete base.DISPLAY;
  const weston = spawn('weston', ['--backend=headless-backend.so', `--socket=${socket}`, '--idle-time=0'], { env: base, stdio: 'ignore' });
  await waitFor('weston to listen', () => existsSync(join(runtimeDir, socket)), 15_000);
  const { stdout } = await run('dbus-launch', ['--sh-syntax'], { env: base });
  const bus = /DBUS_SESSION_BUS_ADDRESS='([^']+)'/.exec(stdout)?.[1];
  const busPid = Number(/DBUS_SESSION_BUS_PID=(\d+)/.exec(stdout)?.[1]);
  if (!bus || !busPid) throw new Error(`dbus-launch printed no address: ${stdout}`);
  const env: NodeJS.ProcessEnv = { ...base, WAYLAND_DISPLAY: socket, GDK_BACKEND: 'wayland', DBUS_SESSION_BUS_ADDRESS: bus };
  delete env.NO_AT_BRIDGE;
  delete env.TMUX;
  delete env.TMUX_PANE;
  return {
    display: socket,
    env,
    async stop() {
      try {
        process.kill(busPid, 'SIGTERM');
      } catch {
        // already gone
      }
      await stopChild(weston);
      rmSync(runtimeDir, { recursive: true, force: true });
    },
  };
}
