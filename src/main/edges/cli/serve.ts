/**
 * `uplink serve`: the hub without Electron — MCP over Streamable HTTP at /mcp and the panel on the
 * same loopback port. Prints the panel URL (token in the fragment) and the MCP URL.
 */
import { createHub, loadDrivers } from '../../hub';
import { startHubServer } from '../http/server';
import type { HttpContext, HttpMount } from '../http/types';
import { createPanelMount } from '../panel';
import { print } from './format';

/** `uplink serve`'s port unless `--port` says otherwise (`--port 0` picks a free one). */
export const DEFAULT_SERVE_PORT = 7420;

/** Options of `uplink serve`. */
export interface ServeOptions {
  dataDir: string;
  port: number;
  host?: string;
  json: boolean;
}

/** The browser panel: the built renderer and the PanelApi WebSocket on the same port. */
async function panelMounts(ctx: HttpContext): Promise<HttpMount[]> {
  return [createPanelMount({ hub: ctx.hub, token: ctx.token, origin: ctx.origin })];
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function runServe(options: ServeOptions): Promise<number> {
  const hub = createHub({ dataDir: options.dataDir, drivers: await loadDrivers(options.dataDir) });
  let server: Awaited<ReturnType<typeof startHubServer>>;
  try {
    server = await startHubServer({
      hub,
      dataDir: options.dataDir,
      port: options.port,
      ...(options.host ? { host: options.host, allowNonLoopback: true } : {}),
      mounts: panelMounts,
    });
  } catch (e) {
    await hub.close();
    throw e;
  }
  if (options.json) print(JSON.stringify({ url: server.url, panel_url: server.panelUrl, mcp_url: server.mcpUrl, pid: process.pid }));
  else print(`Uplink hub serving\n  panel: ${server.panelUrl}\n  MCP:   ${server.mcpUrl} (Authorization: Bearer <token in ${options.dataDir}/token>)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await hub.close();
  return 0;
}
