/**
 * `uplink driver run <tmux|desktop>`: one built-in driver served over the driver protocol on
 * stdin/stdout, with no hub. Its config section is read live from the data dir's config.json and
 * checked against the driver's schema, as the hub does; a broken file keeps the last good one.
 */
import { loadProductDrivers, serveDriver } from '../drivers';
import type { DesktopConfig, Driver } from '../drivers';
import { ConfigStore } from './config';
import { dataPaths } from './data-dir';
import { sectionSchema } from './default-drivers';
import { HubError } from './errors';

/** The built-in drivers `driver run` serves. */
export const SERVABLE_DRIVERS = ['tmux', 'desktop'] as const;

/** Serves the named driver until the hub sends `shutdown` or closes stdin, then exits. */
export async function runBuiltInDriver(name: string, dataDir: string): Promise<void> {
  if (!(SERVABLE_DRIVERS as readonly string[]).includes(name)) throw new HubError('core', 'Invalid', `no built-in driver "${name}"`, { hint: `use one of ${SERVABLE_DRIVERS.join(', ')}; see \`uplink --help\`` });
  const { tmux, desktop } = await loadProductDrivers();
  const schema = name === 'tmux' ? tmux.tmuxConfigSchema : desktop.desktopConfigSchema;
  const config = new ConfigStore(dataPaths(dataDir).config, { [name]: sectionSchema(schema) });
  // stderr is the driver's log: the hub that started it shows the last lines.
  const report = (error: string): void => void process.stderr.write(`config: ${error} (${config.fallback()})\n`);
  const startError = config.error();
  if (startError) report(startError);
  config.onError(report);
  config.watch();
  const driver: Driver = name === 'tmux' ? tmux.createTmuxDriver({ config: config.section(name) }) : desktop.createDesktopDriver({ config: config.section(name) as () => DesktopConfig | undefined });
  await serveDriver(driver);
}
