/**
 * One bundle holding the CLI and the desktop driver for the MCP/CLI tests: `UPLINK_TEST_DRIVERS`
 * points at this same file, so `DriverError` is one class, as in the product bundle. The spawned
 * `uplink` inherits DISPLAY and DBUS_SESSION_BUS_ADDRESS of the test's private session.
 */
import type { Driver } from '../../../src/main/drivers/contract';
import { createDesktopDriver, desktopConfigSchema } from '../../../src/main/drivers/desktop';

export { main } from '../../../src/main/edges/cli/main';
export const configSchemas = { desktop: desktopConfigSchema };

export function createDrivers(): Driver[] {
  return [createDesktopDriver({ env: process.env })];
}
