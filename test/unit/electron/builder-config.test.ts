import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

interface BuilderConfig {
  [key: string]: unknown;
  linux: { target: string[] };
  win: { target: string[]; extraResources?: Array<{ from: string; to: string; filter: string[] }> };
  mac: { target: string[] };
  asar: boolean;
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
}
const schema = JSON.parse(readFileSync(require.resolve('app-builder-lib/scheme.json'), 'utf8')) as Record<string, unknown>;
const config = yaml.load(readFileSync(new URL('../../../electron-builder.yml', import.meta.url), 'utf8')) as BuilderConfig;

describe('electron-builder.yml', () => {
  it('is valid against electron-builder’s own configuration schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const ok = validate(config);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
    // The check has teeth: an unknown key or a wrong type is refused.
    expect(validate({ ...config, asar: 'yes' })).toBe(false);
    expect(validate({ ...config, electronFuses: { runAsNode: false, notAFuse: true } })).toBe(false);
  });

  it('builds AppImage and deb for Linux, NSIS for Windows and dmg for macOS', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.mac.target).toEqual(['dmg']);
  });

  it('packages only build output, in an asar with the SQLite native module unpacked', () => {
    expect(config.asar).toBe(true);
    for (const f of config.files) expect(f === 'package.json' || f.startsWith('dist/') || f === 'bin/uplink' || f.startsWith('!')).toBe(true);
    expect(config.asarUnpack).toContain('**/node_modules/better-sqlite3/**');
  });

  it('ships the native Win32 desktop helper in the Windows build only, outside the archive', () => {
    expect(config.win.extraResources).toContainEqual({ from: 'dist/desktop-helper', to: 'desktop-helper', filter: ['uplink-desktop-helper.exe'] });
    expect(config.files).toContain('!dist/desktop-helper/*.exe');
  });

  it('flips the fuses that would let the app run as Node, take NODE_OPTIONS or open an inspector', () => {
    expect(config.electronFuses).toMatchObject({ runAsNode: false, enableNodeOptionsEnvironmentVariable: false, enableNodeCliInspectArguments: false });
  });
});
