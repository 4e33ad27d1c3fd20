/**
 * Where the demo's panel opens, decided as `npm start` decides: in the Uplink app (Electron,
 * attached to the demo's hub) where its binary exists and the demo runs on the user's display;
 * else in the user's browser there; else (a private display nobody looks at) only the printed URL.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ATTACH_ENV } from '../../../shared/attach';
import { print } from '../cli/format';
import { onPath, STAGE_MARKER } from './stage';

export type PanelOpener = { kind: 'electron'; bin: string } | { kind: 'browser' } | { kind: 'print' };

export interface OpenerFacts {
  /** The demo runs on the user's display (not a private Xvfb). */
  ownDisplay: boolean;
  /** The Electron binary, or why there is none. */
  electron: () => { bin?: string; why?: string };
  /** xdg-open is on PATH. */
  xdgOpen: () => boolean;
}

export function choosePanelOpener(facts: OpenerFacts): PanelOpener {
  if (!facts.ownDisplay) return { kind: 'print' };
  const { bin } = facts.electron();
  if (bin) return { kind: 'electron', bin };
  return facts.xdgOpen() ? { kind: 'browser' } : { kind: 'print' };
}

/**
 * The Electron binary, when the app it would run (`dist/electron/main.cjs` under root) is built.
 * The electron package's layout, as `npm start` reads it (scripts/electron-binary.mjs): path.txt
 * names the binary under dist/; without network at install time neither exists.
 */
export function electronApp(root: string): { bin?: string; why?: string } {
  let pkg: string;
  try {
    pkg = dirname(createRequire(join(root, 'package.json')).resolve('electron/package.json'));
  } catch {
    return { why: 'the electron package is not installed' };
  }
  const pathFile = join(pkg, 'path.txt');
  if (!existsSync(pathFile)) return { why: 'the Electron binary is not installed' };
  const bin = join(pkg, 'dist', readFileSync(pathFile, 'utf8').trim());
  if (!existsSync(bin)) return { why: `the Electron binary is missing at ${bin}` };
  return existsSync(join(root, 'dist', 'electron', 'main.cjs')) ? { bin } : { why: 'the Electron app is not built (run `npm run build`)' };
}

/** The facts of this machine. */
export function panelOpener(ownDisplay: boolean, root: string): PanelOpener {
  return choosePanelOpener({ ownDisplay, electron: () => electronApp(root), xdgOpen: () => onPath('xdg-open', process.env) });
}

/** The user's browser is theirs, not the stage's: it does not carry the marker. */
function openInBrowser(url: string): void {
  const env = { ...process.env };
  delete env[STAGE_MARKER];
  spawn('xdg-open', [url], { env, detached: true, stdio: 'ignore' })
    .on('error', () => undefined)
    .unref();
}

/**
 * Opens the panel URL as chosen. The Electron window inherits the stage's marker, so the demo's
 * cleanup (and its watchdog) end it with the rest of the stage. The URL goes in the environment,
 * not argv: its one-time sign-in code stays out of `ps`.
 */
export function openPanel(opener: PanelOpener, url: string, root: string): void {
  if (opener.kind === 'browser') openInBrowser(url);
  if (opener.kind !== 'electron') return;
  spawn(opener.bin, [root], { cwd: root, env: { ...process.env, [ATTACH_ENV]: url }, stdio: 'ignore' })
    .on('error', (error) => {
      // It never ran, so the code is unspent: hand the URL to the user instead.
      print(`uplink demo: the Uplink app did not start (${error.message}); open the panel in a browser: ${url}`);
      if (onPath('xdg-open', process.env)) openInBrowser(url);
    })
    .on('exit', (code) => {
      if (code)
        print(
          `uplink demo: the Uplink app exited (code ${code}) — hint: \`uplink panel-url\` with UPLINK_DATA_DIR set to the demo's data directory prints a browser link`,
        );
    });
}
