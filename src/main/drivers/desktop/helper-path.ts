/**
 * Where the helper program lives: beside this module in a source checkout, or copied next to a
 * bundle (`dist/desktop-helper/`). `UPLINK_DESKTOP_HELPER` overrides both.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HELPER_FILE = 'uplink_desktop_helper.py';

/** The helper script's absolute path (the first candidate that exists, else the first one). */
export function locateHelperScript(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  if (env.UPLINK_DESKTOP_HELPER) candidates.push(env.UPLINK_DESKTOP_HELPER);
  const here = moduleDir();
  if (here) {
    candidates.push(join(here, 'helper', HELPER_FILE));
    candidates.push(join(here, 'desktop-helper', HELPER_FILE));
    // The Electron main bundle sits one level deeper (dist/electron/main.cjs).
    candidates.push(resolve(here, '..', 'desktop-helper', HELPER_FILE));
    candidates.push(resolve(here, '..', 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
    candidates.push(resolve(here, '..', '..', 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
  }
  candidates.push(resolve(process.cwd(), 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
  // Python cannot read inside an asar archive: a packaged app runs the unpacked copy.
  const unpacked = candidates.map(asarUnpacked);
  return unpacked.find((c) => existsSync(c)) ?? unpacked[0]!;
}

/** `…/app.asar/…` → `…/app.asar.unpacked/…` (electron-builder's asarUnpack location). */
export function asarUnpacked(path: string): string {
  return path.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
}

/** Debian's python3 carries python3-gi and python3-xlib; a pyenv/venv python3 on PATH may not. */
export function defaultPython(): string {
  return existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
}

function moduleDir(): string | undefined {
  try {
    const url = import.meta.url;
    if (url) return dirname(fileURLToPath(url));
  } catch {
    // fall through
  }
  // A CommonJS bundle (the Electron main) has no import.meta.url but has __dirname.
  return typeof __dirname === 'string' ? __dirname : undefined;
}

const WIN32_HELPER_FILE = 'uplink-desktop-helper.exe';

/**
 * The Win32 helper's absolute path (the first candidate that exists, else the first one):
 * `UPLINK_DESKTOP_HELPER_EXE`, a packaged Windows app's resources (`resources/desktop-helper/`),
 * beside a bundle (`dist/desktop-helper/`), or the build output of a checkout.
 */
export function locateWin32Helper(env: NodeJS.ProcessEnv = process.env): string {
  const candidates: string[] = [];
  if (env.UPLINK_DESKTOP_HELPER_EXE) candidates.push(env.UPLINK_DESKTOP_HELPER_EXE);
  const resources = (process as { resourcesPath?: string }).resourcesPath;
  if (resources) candidates.push(join(resources, 'desktop-helper', WIN32_HELPER_FILE));
  const here = moduleDir();
  if (here) {
    candidates.push(join(here, 'desktop-helper', WIN32_HELPER_FILE));
    candidates.push(resolve(here, '..', 'desktop-helper', WIN32_HELPER_FILE));
    candidates.push(resolve(here, '..', 'dist', 'desktop-helper', WIN32_HELPER_FILE));
    candidates.push(resolve(here, '..', '..', '..', '..', '..', 'dist', 'desktop-helper', WIN32_HELPER_FILE));
  }
  candidates.push(resolve(process.cwd(), 'dist', 'desktop-helper', WIN32_HELPER_FILE));
  const unpacked = candidates.map(asarUnpacked);
  return unpacked.find((c) => existsSync(c)) ?? unpacked[0]!;
}
