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
    candidates.push(resolve(here, '..', 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
    candidates.push(resolve(here, '..', '..', 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
  }
  candidates.push(resolve(process.cwd(), 'src', 'main', 'drivers', 'desktop', 'helper', HELPER_FILE));
  return candidates.find((c) => existsSync(c)) ?? candidates[0]!;
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
