/**
 * Test applications on a desktop session: Uplink's GTK fixture (which prints its state as JSON
 * lines) and Debian's zenity. Their own output is the proof that an action took effect.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChannelEntry, Driver } from '../../../src/main/drivers/contract';
import type { DesktopSession } from './session';
import { stopChild, waitFor } from './session';

const FIXTURE = fileURLToPath(new URL('../../fixtures/gtk-counter.py', import.meta.url));
/** Debian's python3 has python3-gi; a pyenv python3 on PATH may not. */
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** The fixture's state as it prints it. */
export interface FixtureState {
  event: string;
  entry?: string;
  clicks?: number;
  pid?: number;
}

/** A running application and everything it printed. */
export interface App {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  /** Resolves with the first printed state matching `pred` (fixture only). */
  state(pred: (s: FixtureState) => boolean, what: string): Promise<FixtureState>;
  stop(): Promise<void>;
}

function track(child: ChildProcess): App {
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (out += chunk));
  child.stderr?.resume();
  const states = (): FixtureState[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as FixtureState);
  return {
    child,
    pid: child.pid!,
    stdout: () => out,
    state: (pred, what) => waitFor(what, () => states().find(pred)),
    stop: () => stopChild(child),
  };
}

/** Starts the GTK fixture and waits until it is ready. */
export async function startFixture(session: DesktopSession, args: string[] = []): Promise<App> {
  const child = spawn(PYTHON, [FIXTURE, ...args], { env: session.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const app = track(child);
  await app.state((s) => s.event === 'ready', 'fixture ready');
  return app;
}

/** Starts `zenity --entry`. */
export function startZenity(session: DesktopSession, title: string): App {
  const child = spawn('zenity', ['--entry', '--title', title, '--text', 'Enter a word'], { env: session.env, stdio: ['ignore', 'pipe', 'pipe'] });
  return track(child);
}

/** Waits until the driver lists a window of `pid` and returns its channel. */
export function channelOf(driver: Driver, pid: number, title?: string): Promise<ChannelEntry> {
  return waitFor(`a channel of pid ${pid}`, async () =>
    (await driver.channels()).find((c) => {
      const d = c.detail as { pid?: number; title?: string; interactions?: string[] };
      return d.pid === pid && (title === undefined || d.title === title);
    }),
  );
}

/** Waits until the channel of `pid` reports the semantic kind (the app registered with AT-SPI). */
export function semanticChannelOf(driver: Driver, pid: number): Promise<ChannelEntry> {
  return waitFor(`an accessible channel of pid ${pid}`, async () =>
    (await driver.channels()).find((c) => {
      const d = c.detail as { pid?: number; interactions?: string[] };
      return d.pid === pid && (d.interactions ?? []).includes('semantic_ui');
    }),
  );
}

/** The `addr` half of a channel. */
export const addrOf = (c: ChannelEntry): string => c.channel.slice('desktop:'.length);
