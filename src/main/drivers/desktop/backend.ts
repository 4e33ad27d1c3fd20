/**
 * Which native helper serves the desktop driver, and why: on Windows the Win32 helper runs
 * directly; on Linux the Python helper (AT-SPI + X11) runs, unless the config's
 * `desktop.backend` is `"win32"`, which runs the Win32 helper under Wine (for testing the Windows
 * path on Linux, or driving Wine applications through their Win32 windows).
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { DesktopConfig } from './config';
import { defaultPython, locateHelperScript, locateWin32Helper } from './helper-path';

/** The helper families: `linux` (Python, AT-SPI + X11/Wayland) and `win32` (native, HWND + MSAA). */
export type DesktopBackend = 'linux' | 'win32';

/** The chosen helper: its argv, its family, and the reason in words (for `doctor`). */
export interface HelperChoice {
  backend: DesktopBackend;
  command: string[];
  reason: string;
  /** What to install when the command cannot run. */
  installHint: string;
  /** Environment defaults for the helper (the hub's own environment wins). */
  envDefaults?: Record<string, string>;
}

/** Where Debian's wine puts its 64-bit loader when `wine64` is not on PATH. */
export const DEBIAN_WINE64 = '/usr/lib/wine/wine64';

/** `wine64` on PATH, else Debian's loader path, else plain `wine64` (spawning it then says what is missing). */
export function locateWine64(env: NodeJS.ProcessEnv): string {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'wine64'))) return join(dir, 'wine64');
  }
  return existsSync(DEBIAN_WINE64) ? DEBIAN_WINE64 : 'wine64';
}

/** The helper for this platform and config. */
export function chooseHelper(config: DesktopConfig, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): HelperChoice {
  if (platform === 'win32') {
    return {
      backend: 'win32',
      command: [locateWin32Helper(env)],
      reason: 'this is Windows: the native Win32 helper (HWND, MSAA, SendInput) runs directly',
      installHint: 'reinstall Uplink: its desktop-helper folder holds uplink-desktop-helper.exe',
    };
  }
  if (config.backend === 'win32') {
    const wine = locateWine64(env);
    return {
      backend: 'win32',
      command: [wine, locateWin32Helper(env)],
      reason: `config desktop.backend is "win32": the Win32 helper runs under Wine (${wine}; WINEPREFIX ${env.WINEPREFIX ?? '~/.wine (default)'}, DISPLAY ${env.DISPLAY ?? 'unset'})`,
      installHint: 'apt-get install wine wine64, and build the helper (npm run build, which needs gcc-mingw-w64-x86-64)',
      // Wine's fixme lines would crowd out the helper's own last words in the stderr the client keeps.
      envDefaults: { WINEDEBUG: '-all' },
    };
  }
  return {
    backend: 'linux',
    command: [config.python ?? defaultPython(), locateHelperScript(env)],
    reason:
      config.backend === 'linux'
        ? 'config desktop.backend is "linux": the Python helper (AT-SPI + X11) runs'
        : `this is ${platform}: the Python helper (AT-SPI + X11) runs (set desktop.backend to "win32" to drive Wine windows instead)`,
    installHint: 'install python3 with python3-gi, python3-xlib and gir1.2-atspi-2.0 (`uplink doctor` shows what is missing)',
  };
}
