/**
 * The Windows side of the desktop tests, on Linux: the Win32 helper and the Win32 fixture app
 * built with mingw-w64, run under Wine on a private Xvfb with a private WINEPREFIX (one
 * `wineboot -i` per test file). Wine's windows are real Win32 windows: the helper lists them with
 * EnumWindows, reads them through MSAA and drives them with SendInput, as on Windows.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { prerequisite } from '../../fixtures/prerequisite';
import { DEBIAN_WINE64, locateWine64 } from '../../../src/main/drivers/desktop/backend';
import type { DesktopSession } from './session';
import { startSession, stopChild, waitFor } from './session';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const HELPER_SRC = join(ROOT, 'src/main/drivers/desktop/win32');
const FIXTURE_SRC = join(ROOT, 'test/fixtures/win32/fixture-app.c');
const GCC = 'x86_64-w64-mingw32-gcc';
/** The libraries scripts/build.mjs links the helper with. */
const HELPER_LIBS = ['-loleacc', '-lole32', '-loleaut32', '-luuid', '-lgdi32', '-luser32'];

function onPath(file: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, file)));
}

/** mingw-w64 and Wine: the Windows tests skip without them, and fail under CI=true. */
export const wineTools = prerequisite(
  'mingw-w64 (x86_64-w64-mingw32-gcc) and Wine (wine64)',
  onPath(GCC) && (onPath('wine64') || existsSync(DEBIAN_WINE64)),
  'apt-get install gcc-mingw-w64-x86-64 wine wine64 (scripts/install-system-deps.sh)',
);

/** The built helper and fixture. */
export interface Win32Build {
  helper: string;
  fixture: string;
}

/** Compiles `sources` into `out` unless a build of the same sources is cached (by content hash). */
async function compile(name: string, sources: string[], libs: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const s of sources) hash.update(readFileSync(s));
  hash.update(libs.join(' '));
  const dir = join(tmpdir(), 'uplink-win32-build');
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${name}-${hash.digest('hex').slice(0, 16)}.exe`);
  if (existsSync(out)) return out;
  const tmp = `${out}.${process.pid}.tmp`;
  await run(GCC, ['-O2', '-static', '-Wall', '-o', tmp, ...sources, ...libs]);
  renameSync(tmp, out); // files built concurrently by other test files replace each other whole
  return out;
}

/** Builds the helper (as scripts/build.mjs does) and the fixture app. */
export async function buildWin32(): Promise<Win32Build> {
  const sources = readdirSync(HELPER_SRC)
    .filter((f) => f.endsWith('.c'))
    .sort()
    .map((f) => join(HELPER_SRC, f));
  const [helper, fixture] = await Promise.all([
    compile('uplink-desktop-helper', sources, HELPER_LIBS),
    compile('uplink-fixture', [FIXTURE_SRC], ['-lgdi32', '-luser32']),
  ]);
  return { helper, fixture };
}

/** A private Xvfb and a fresh Wine prefix booted on it; `env` reaches both. */
export interface WineSession extends DesktopSession {
  wine: string;
  prefix: string;
  build: Win32Build;
}

/** Starts Xvfb, boots a private prefix (~10–20 s) and builds the Win32 programs meanwhile. */
export async function startWineSession(): Promise<WineSession> {
  const [x, build] = await Promise.all([startSession(), buildWin32()]);
  const prefix = mkdtempSync(join(tmpdir(), 'uplink-wine-'));
  const env: NodeJS.ProcessEnv = {
    ...x.env,
    WINEPREFIX: prefix,
    WINEDEBUG: '-all',
    // No Mono or Gecko installer dialogs: nothing here needs .NET or the HTML engine.
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
    UPLINK_DESKTOP_HELPER_EXE: build.helper,
  };
  const wine = locateWine64(env);
  await run(wine, ['wineboot', '-i'], { env, timeout: 120_000 });
  return {
    display: x.display,
    env,
    wine,
    prefix,
    build,
    async stop() {
      const server = existsSync('/usr/lib/wine/wineserver') ? '/usr/lib/wine/wineserver' : 'wineserver';
      await run(server, ['-k'], { env }).catch(() => undefined);
      await x.stop();
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

/** A state line of the Win32 fixture. */
export interface Win32State {
  event: string;
  pid?: number;
  hwnd?: string;
  name?: string;
  subscribe?: boolean;
  color?: string | null;
  dots?: number;
  typed?: string;
  x?: number;
  y?: number;
}

/** A Win32 program running under Wine. */
export interface WineApp {
  child: ChildProcess;
  /** The Windows pid (Wine's), as the helper reports it. */
  pid: number;
  hwnd?: string;
  states(): Win32State[];
  state(pred: (s: Win32State) => boolean, what: string): Promise<Win32State>;
  stop(): Promise<void>;
}

function track(child: ChildProcess): Omit<WineApp, 'pid'> {
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => (out += chunk));
  child.stderr?.resume();
  const states = (): Win32State[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Win32State);
  return { child, states, state: (pred, what) => waitFor(what, () => states().find(pred)), stop: () => stopChild(child) };
}

/** Starts the Win32 fixture app (`extra`: e.g. `--topmost`) and waits until it says it is ready. */
export async function startWin32Fixture(session: WineSession, title: string, extra: string[] = []): Promise<WineApp> {
  const child = spawn(session.wine, [session.build.fixture, '--title', title, ...extra], { env: session.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const app = track(child);
  const ready = await app.state((s) => s.event === 'ready', `${title} ready`);
  return { ...app, pid: ready.pid!, hwnd: ready.hwnd };
}

/** Starts Wine's Notepad; its pid is learnt from the helper's listing. */
export function startNotepad(session: WineSession): Omit<WineApp, 'pid'> {
  return track(spawn(session.wine, ['notepad'], { env: session.env, stdio: ['ignore', 'pipe', 'pipe'] }));
}
