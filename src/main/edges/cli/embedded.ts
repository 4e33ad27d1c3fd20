/**
 * The CLI's own hub, for when none runs for the data directory: built for one command and closed
 * after it (tmux control client, desktop helper, SQLite — the slow path). `log` needs only the
 * audit store.
 */
import { createHub, loadDrivers } from '../../hub';
import type { LoadDrivers } from '../../hub';
import { cliAgent, executeCli, osUser } from './execute';
import { runLog } from './log';
import { present, printProgress } from './present';
import type { CliRequest } from './request';

/** Runs the request in an embedded hub with `drivers`, prints it; resolves with the exit code. */
export async function runEmbedded(
  dataDir: string,
  request: CliRequest,
  json: boolean,
  show: typeof present = present,
  drivers: LoadDrivers = loadDrivers,
): Promise<number> {
  if (request.command === 'log') return runLog(dataDir, request.args, json);
  const hub = await createHub({ dataDir, drivers: await drivers(dataDir), watchConfig: false });
  try {
    return show(request, await executeCli(hub, request, { agent: cliAgent(osUser()), onProgress: (step) => printProgress(step, json) }), json);
  } finally {
    await hub.close();
  }
}
