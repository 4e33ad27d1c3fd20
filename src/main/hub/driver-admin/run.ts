/**
 * `uplink driver run <tmux|desktop>`: one built-in driver served over the driver protocol on
 * stdin/stdout, with no hub. Its config section is read live from the data dir's config.json and
 * checked against the driver's schema, as the hub does; a broken file keeps the last good one.
 */
import { statSync } from 'node:fs';
import { loadProductDrivers, serveDriver } from '../../drivers';
import type { DesktopConfig, Driver } from '../../drivers';
import { ConfigStore } from '../config';
import { dataPaths } from '../data-dir';
import { sectionSchema } from './default';
import { HubError } from '../errors';

/** The built-in drivers `driver run` serves. */
export const SERVABLE_DRIVERS = ['tmux', 'desktop'] as const;

/** Serves the named driver until the hub sends `shutdown` or closes stdin, then exits. */
export async function runBuiltInDriver(name: string, dataDir: string): Promise<void> {
  if (!(SERVABLE_DRIVERS as readonly string[]).includes(name))
    throw new HubError('core', 'Invalid', `no built-in driver "${name}"`, { hint: `use one of ${SERVABLE_DRIVERS.join(', ')}; see \`uplink --help\`` });
  const { tmux, desktop } = await loadProductDrivers();
  const schema = name === 'tmux' ? tmux.tmuxConfigSchema : desktop.desktopConfigSchema;
  const path = dataPaths(dataDir).config;
  let seen = stamp(path);
  const config = new ConfigStore(path, { [name]: sectionSchema(schema) });
  // stderr is the driver's log: the hub that started it shows the last lines.
  const report = (error: string): void => void process.stderr.write(`config: ${error} (${config.fallback()})\n`);
  const startError = config.error();
  if (startError) report(startError);
  config.onError(report);
  config.watch();
  // The driver reads its section on every decision; an edit the hub has just made (a grant from
  // the panel) must be in force on the next call, as for an in-process driver, not only once the
  // watcher's debounce fires. A stat per read is cheap next to the tmux round trip it guards.
  const current = config.section(name);
  const section = (): unknown => {
    const now = stamp(path);
    if (now !== seen) {
      seen = now;
      config.reload();
    }
    return current();
  };
  const driver: Driver =
    name === 'tmux' ? tmux.createTmuxDriver({ config: section }) : desktop.createDesktopDriver({ config: section as () => DesktopConfig | undefined });
  // A broken file is refused whole and the driver runs on the last good one: its doctor says so,
  // as the hub's does for its own config, since stderr alone is easy to miss.
  const doctor = driver.doctor.bind(driver);
  driver.doctor = async () => {
    section();
    const report = await doctor();
    const error = config.error();
    return error ? { ...report, ok: false, lines: [...report.lines, `config file: ${error} (${config.fallback()})`] } : report;
  };
  await serveDriver(driver);
}

/** Identifies one version of a file (inode, size, mtime in ns); `none` when it is missing. */
function stamp(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return 'none';
  }
}
