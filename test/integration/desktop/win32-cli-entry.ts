/**
 * One bundle holding the CLI and the desktop driver with its live config section, for the Win32
 * tests: `desktop.backend: "win32"` in the data dir's config.json makes the driver run the Win32
 * helper under Wine (WINEPREFIX, DISPLAY and UPLINK_DESKTOP_HELPER_EXE come from the environment).
 */
import type { Driver } from '../../../src/main/drivers/contract';
import { createDesktopDriver, desktopConfigSchema } from '../../../src/main/drivers/desktop';
import type { DesktopConfig } from '../../../src/main/drivers/desktop';

export { main } from '../../../src/main/edges/cli/main';
export const configSchemas = { desktop: desktopConfigSchema };

export function createDrivers(_dataDir: string, section: (name: string) => () => unknown): Driver[] {
  return [createDesktopDriver({ env: process.env, config: section('desktop') as () => DesktopConfig | undefined, stateDir: false })];
}
