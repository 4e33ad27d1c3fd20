/**
 * The real helper program's protocol edges, without a display: bad lines get `Invalid` replies,
 * a bug inside it is an internal error whose detail only the operator sees, what libraries print
 * to stdout never reaches the protocol, and the helper keeps serving; its /proc reader agrees
 * with the driver's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { renderDriverError } from '../../../src/main/drivers/contract';
import { HelperClient } from '../../../src/main/drivers/desktop/helper-client';
import { locateHelperScript } from '../../../src/main/drivers/desktop/helper-path';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const run = promisify(execFile);

/** The real helper with two ops patched in: one hits a Python bug, one prints to stdout first. */
const PATCHED = `
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import uplink_desktop_helper as h
real = h.Helper.handle
def handle(self, op, target, args, interaction):
    if op == "buggy":
        return {}["secret-looking detail"]
    if op == "noisy":
        print("GTK says hello on stdout", flush=True)
        os.write(1, b"libfoo: native noise on fd 1\\n")
        return {"noisy": True}
    return real(self, op, target, args, interaction)
h.Helper.handle = handle
h.main()
`;

function noDisplayEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  return env;
}

describe('desktop helper protocol', () => {
  it('answers bad requests with Invalid and keeps serving', async () => {
    const env = { ...process.env };
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const client = new HelperClient({ command: [PYTHON, locateHelperScript()], env, callTimeoutMs: 20_000 });
    try {
      await expect(client.call({ op: 'no-such-op', target: { window: '0x1', pid: 1, start_time: 1 } })).rejects.toMatchObject({
        kind: 'Invalid',
        message: "unknown op 'no-such-op'",
      });
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

  it('a bug inside the helper reaches the driver as an internal Upstream error, its traceback only in evidence', async () => {
    const dir = locateHelperScript().replace(/\/[^/]+$/, '');
    const client = new HelperClient({ command: [PYTHON, '-c', PATCHED, dir], env: noDisplayEnv(), callTimeoutMs: 20_000 });
    try {
      const error = await client.call({ op: 'buggy' }).then(
        () => undefined,
        (e: unknown) => e as { kind: string; message: string; hint?: string; evidence?: string },
      );
      expect(error).toMatchObject({ kind: 'Upstream', message: 'the desktop helper failed unexpectedly' });
      expect(error!.evidence).toMatch(/Traceback[\s\S]*KeyError: 'secret-looking detail'/);
      expect(renderDriverError('desktop', error as never)).not.toMatch(/KeyError|secret-looking|Traceback/);
      expect(await client.call({ op: 'hello' })).toMatchObject({ protocol: 1 });
    } finally {
      await client.dispose();
    }
  });

  it('what libraries print to stdout mid-call breaks neither that call nor the next', async () => {
    const dir = locateHelperScript().replace(/\/[^/]+$/, '');
    const client = new HelperClient({ command: [PYTHON, '-c', PATCHED, dir], env: noDisplayEnv(), callTimeoutMs: 20_000 });
    try {
      expect(await client.call({ op: 'noisy' })).toEqual({ noisy: true });
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
