/** Where the desktop helper is found: a checkout, beside a bundle, or unpacked from an asar. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asarUnpacked, locateHelperScript } from '../../../src/main/drivers/desktop/helper-path';

describe('desktop helper path', () => {
  it('a packaged app runs the helper from app.asar.unpacked, where python can read it', () => {
    expect(asarUnpacked('/opt/Uplink/resources/app.asar/dist/desktop-helper/uplink_desktop_helper.py')).toBe(
      '/opt/Uplink/resources/app.asar.unpacked/dist/desktop-helper/uplink_desktop_helper.py',
    );
    expect(asarUnpacked('C:\\Uplink\\resources\\app.asar\\dist\\desktop-helper\\x.py')).toBe(
      'C:\\Uplink\\resources\\app.asar.unpacked\\dist\\desktop-helper\\x.py',
    );
    expect(asarUnpacked('/home/me/uplink/src/main/drivers/desktop/helper/x.py')).toBe('/home/me/uplink/src/main/drivers/desktop/helper/x.py');
  });

  it('UPLINK_DESKTOP_HELPER overrides the search when the file exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-helper-'));
    mkdirSync(join(dir, 'h'));
    const file = join(dir, 'h', 'uplink_desktop_helper.py');
    writeFileSync(file, '');
    expect(locateHelperScript({ UPLINK_DESKTOP_HELPER: file })).toBe(file);
  });

  it('in a checkout the helper is found in the source tree', () => {
    expect(locateHelperScript({})).toMatch(/src\/main\/drivers\/desktop\/helper\/uplink_desktop_helper\.py$/);
  });
});
