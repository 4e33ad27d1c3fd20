/**
 * One bundle holding the CLI and the desktop driver for the MCP/CLI tests: its launcher passes
 * this same module's `createDrivers` to its `main`, so `DriverError` is one class, as in the
 * product bundle. The spawned `uplink` inherits DISPLAY and DBUS_SESSION_BUS_ADDRESS of the
 * test's private session.
 *
 * `UPLINK_TEST_PROC_OVERRIDES` names a JSON file `{"<pid>": <start time>}`, read on every lookup:
 * a live system cannot reuse a pid on demand, so the tests simulate a changed start time this way.
 */
import { readFileSync } from 'node:fs';
import type { Driver } from '../../../src/main/drivers/contract';
import { createDesktopDriver, desktopConfigSchema } from '../../../src/main/drivers/desktop';
import type { ProcReader } from '../../../src/main/drivers/desktop';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';

export { main } from '../../../src/main/edges/cli/main';
export const configSchemas = { desktop: desktopConfigSchema };

function overrides(): Record<string, number> {
  const file = process.env.UPLINK_TEST_PROC_OVERRIDES;
  if (!file) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

const proc: ProcReader = {
  startTime: async (pid) => overrides()[String(pid)] ?? linuxProc.startTime(pid),
  processName: (pid) => linuxProc.processName(pid),
};

export function createDrivers(): Driver[] {
  return [createDesktopDriver({ env: process.env, proc })];
}
