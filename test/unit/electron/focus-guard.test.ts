/**
 * "The panel never takes keyboard focus away from a target window while an action is being
 * injected." Approvals reach the operator through notifications and a flashing task-bar entry
 * (see attention.test.ts); this proves by reading the source that nothing else in the shell or
 * the renderer raises or focuses a window: the only `show()` calls are the window's first
 * appearance and a second launch by hand, and neither runs because of an agent's request.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function sources(dir: string): Array<{ file: string; code: string }> {
  const out: Array<{ file: string; code: string }> = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.(ts|tsx)$/.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    // Comments may talk about focus; only code counts.
    const code = readFileSync(path, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    out.push({ file: relative(ROOT, path), code });
  }
  return out;
}

const FOCUS_TAKING = /\.(focus|moveTop|focusOnWebView|setAlwaysOnTop|requestFocus)\(/;

describe('the panel never takes keyboard focus on its own', () => {
  it('no code in the Electron shell, preload or renderer focuses or raises a window', () => {
    const offenders = [...sources('src/main/electron'), ...sources('src/preload'), ...sources('src/renderer')].filter((s) => FOCUS_TAKING.test(s.code)).map((s) => s.file);
    expect(offenders).toEqual([]);
  });

  it('a window is shown (which focuses) only when it first appears and on a second launch by hand', () => {
    const shows = sources('src/main/electron').flatMap((s) => (s.code.match(/\b\w+\.show\(\)/g) ?? []).map((m) => `${s.file}: ${m}`));
    expect(shows.sort()).toEqual([
      'src/main/electron/attention.ts: n.show()', // the OS notification, not a window
      'src/main/electron/security.ts: w.show()', // second-instance, skipped for `Uplink mcp`
      'src/main/electron/window.ts: win.show()', // ready-to-show of the window the operator opened
    ]);
  });
});
