/**
 * The real helper program's protocol edges, without a display: bad lines get `Invalid` replies
 * and the helper keeps serving; its /proc reader agrees with the driver's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { HelperClient } from '../../../src/main/drivers/desktop/helper-client';
import { locateHelperScript } from '../../../src/main/drivers/desktop/helper-path';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const run = promisify(execFile);

describe('desktop helper protocol', () => {
  it('answers bad requests with Invalid and keeps serving', async () => {
    const env = { ...process.env };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const client = new HelperClient({ command: [PYTHON, locateHelperScript()], env, callTimeoutMs: 20_000 });
    try {
      await expect(client.call({ op: 'no-such-op', target: { window: '0x1', pid: 1, start_time: 1 } })).rejects.toMatchObject({ kind: 'Invalid', message: "unknown op 'no-such-op'" });
      await expect(client.call({ op: 'tree' })).rejects.toMatchObject({ kind: 'Invalid', message: "op 'tree' needs a target" });
      await expect(client.call({ op: 'click', target: { window: '0x1', pid: 1, start_time: 1 }, args: { x: 1, y: 1 } })).rejects.toMatchObject({
        kind: 'Unavailable',
        message: 'no display: DISPLAY is not set',
      });
      expect(await client.call({ op: 'hello' })).toMatchObject({ protocol: 1, platform: 'none' });
    } finally {
      await client.dispose();
    }
  });

  it('reads the same process start time from /proc as the driver does', async () => {
    const code = 'import sys; sys.path.insert(0, sys.argv[1]); from errors import read_start_time; print(read_start_time(int(sys.argv[2])))';
    const dir = locateHelperScript().replace(/\/[^/]+$/, '');
    const { stdout } = await run(PYTHON, ['-B', '-c', code, dir, String(process.pid)]);
    expect(Number(stdout.trim())).toBe(await linuxProc.startTime(process.pid));
  });
});
