/**
 * The driver's side of a Win32 binding, against a fake Win32 helper: process facts come from the
 * helper (Windows pids are not /proc's), the image path is part of the binding and goes to the
 * helper with every op, and a pid whose creation time changed is refused before the helper acts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';

/** A Win32 helper stand-in: one window of pid 424242 (no such Linux process); `observe` echoes its target. */
function fakeHelper(startFile: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-fake-win32-'));
  const file = join(dir, 'helper.cjs');
  writeFileSync(
    file,
    `const fs = require('fs');
const start = () => Number(fs.readFileSync(${JSON.stringify(startFile)}, 'utf8'));
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, op, target, args } = JSON.parse(line);
  let result;
  if (op === 'windows') result = { session: null, windows: [{ window: '0x4007a', title: 'Form', class: ['FormClass'], geometry: { x: 0, y: 0, width: 100, height: 80 },
    net_wm_pid: null, xres_pid: 424242, pid: 424242, start_time: start(), image: 'C:\\\\apps\\\\form.exe', process_name: 'form.exe', focused: true,
    interactions: ['semantic_ui', 'visual_ui'] }] };
  else if (op === 'process') result = { pid: args.pid, start_time: start(), image: 'C:\\\\apps\\\\form.exe', name: 'form.exe' };
  else if (op === 'observe') result = { window: target.window, title: 'Form', pid: target.pid, geometry: { x: 0, y: 0, width: 100, height: 80 }, focused: true, interactions: [], target };
  process.stdout.write(JSON.stringify({ id, ok: true, result }) + '\\n');
});
`,
  );
  return file;
}

describe('desktop driver with the Win32 backend', () => {
  it('binds to the helper-reported creation time and image, sends both with every op, and refuses a changed creation time', async () => {
    const startFile = join(mkdtempSync(join(tmpdir(), 'uplink-start-')), 'start');
    writeFileSync(startFile, '1796177333545708');
    const driver = createDesktopDriver({
      env: { ...process.env },
      config: () => ({ backend: 'win32' }),
      helperCommand: [process.execPath, fakeHelper(startFile)],
      stateDir: false,
    });
    try {
      const [channel] = await driver.channels();
      expect(channel).toMatchObject({ channel: 'desktop:0x4007a', detail: { pid: 424242, bound: { pid: 424242, start_time: 1796177333545708 } } });
      const seen = (await driver.invoke('0x4007a', 'observe', {}, { interaction: 'visual_ui' })) as { target: Record<string, unknown> };
      expect(seen.target).toEqual({ window: '0x4007a', pid: 424242, start_time: 1796177333545708, image: 'C:\\apps\\form.exe' });
      writeFileSync(startFile, '1796177399999999'); // the pid now names a process created later
      await expect(driver.invoke('0x4007a', 'observe', {}, { interaction: 'visual_ui' })).rejects.toMatchObject({
        kind: 'Rejected',
        message: 'target changed',
        evidence: 'process 424242 start time is 1796177399999999, bound start time is 1796177333545708 (pid reused)',
      });
    } finally {
      await driver.dispose();
    }
  });
});
