/** Which desktop helper runs: the platform's own, or the Win32 helper under Wine when the config asks for it. */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseHelper, locateWine64 } from '../../../src/main/drivers/desktop/backend';
import { desktopConfigSchema } from '../../../src/main/drivers/desktop';
import { schemaValidator } from '../../../src/main/kernel/registry';

/** An existing helper file (the search takes the first candidate that exists). */
function helperFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-exe-'));
  const file = join(dir, 'uplink-desktop-helper.exe');
  writeFileSync(file, '');
  return file;
}
const exe = helperFile();

describe('desktop helper choice', () => {
  it('Windows runs the native helper directly, whatever the config says', () => {
    const choice = chooseHelper({ backend: 'linux' }, { UPLINK_DESKTOP_HELPER_EXE: exe }, 'win32');
    expect(choice).toMatchObject({ backend: 'win32', command: [exe] });
    expect(choice.reason).toMatch(/^this is Windows/);
  });

  it('Linux runs the Python helper by default, and says how to pick the Win32 one', () => {
    const choice = chooseHelper({}, {}, 'linux');
    expect(choice.backend).toBe('linux');
    expect(choice.command[1]).toMatch(/uplink_desktop_helper\.py$/);
    expect(choice.reason).toMatch(/desktop\.backend to "win32"/);
    expect(chooseHelper({ python: '/opt/py/bin/python3' }, {}, 'linux').command[0]).toBe('/opt/py/bin/python3');
  });

  it('desktop.backend "win32" on Linux runs the Win32 helper under wine64 from PATH, with the prefix and display in the reason', () => {
    const bin = mkdtempSync(join(tmpdir(), 'uplink-wine-bin-'));
    writeFileSync(join(bin, 'wine64'), '#!/bin/sh\n');
    chmodSync(join(bin, 'wine64'), 0o755);
    const env = { PATH: `/nonexistent:${bin}`, WINEPREFIX: '/tmp/pfx', DISPLAY: ':9', UPLINK_DESKTOP_HELPER_EXE: exe };
    const choice = chooseHelper({ backend: 'win32' }, env, 'linux');
    expect(choice).toMatchObject({ backend: 'win32', command: [join(bin, 'wine64'), exe] });
    expect(choice.reason).toBe(`config desktop.backend is "win32": the Win32 helper runs under Wine (${join(bin, 'wine64')}; WINEPREFIX /tmp/pfx, DISPLAY :9)`);
    expect(choice.installHint).toMatch(/wine/);
    expect(choice.envDefaults).toEqual({ WINEDEBUG: '-all' });
  });

  it('without wine64 on PATH the loader is looked for where Debian puts it', () => {
    const found = locateWine64({ PATH: mkdtempSync(join(tmpdir(), 'uplink-empty-')) });
    expect(['/usr/lib/wine/wine64', 'wine64']).toContain(found);
  });

  it('the config schema takes backend linux or win32 and nothing else', () => {
    const check = schemaValidator(desktopConfigSchema as never);
    expect(check({ backend: 'win32' })).toBe(true);
    expect(check({ backend: 'linux' })).toBe(true);
    expect(check({ backend: 'macos' })).toBe(false);
  });

  it('UPLINK_DESKTOP_HELPER_EXE names the helper when it exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-exe-'));
    mkdirSync(join(dir, 'h'));
    const file = join(dir, 'h', 'uplink-desktop-helper.exe');
    writeFileSync(file, '');
    expect(chooseHelper({ backend: 'win32' }, { UPLINK_DESKTOP_HELPER_EXE: file, PATH: '' }, 'linux').command[1]).toBe(file);
  });
});
