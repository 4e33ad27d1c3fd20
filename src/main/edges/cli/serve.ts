/**
 * `uplink serve`: the hub without Electron — MCP over Streamable HTTP at /mcp and the panel on the
 * same loopback port. Prints the panel URL (a one-time code in the fragment) and the MCP URL.
 * One serve per data directory: a second one would take over hub.json from a live hub.
 *
 * The one-time link is a live secret: in a tmux pane the hub's tmux driver serves (any agent may
 * read it) neither `serve` nor `panel-url` prints it — they open it in the browser where they can,
 * and otherwise say to run `uplink panel-url` from a terminal outside that tmux server.
 */
import { createHub, HubError, loadDrivers, recordUnfinishedCalls, revokePanelSessionsAt } from '../../hub';
import type { Hub, LoadDrivers } from '../../hub';
import { findRunningHub } from '../http/hub-json';
import { isLoopbackHost } from '../http/loopback';
import { startHubServer } from '../http/server';
import type { HubServer } from '../http/server';
import type { HttpContext, HttpMount } from '../http/types';
import { createPanelMount } from '../panel';
import type { PanelPresenter } from '../panel';
import { usage } from './args';
import { print } from './format';
import { browserOpener, openInBrowser } from './open-browser';
import { readOperatorKey } from './operator-key';
import { paneName, servedPane, withheld } from './served-pane';

export { DEFAULT_SERVE_PORT } from './args';

/** Options of `uplink serve`. */
export interface ServeOptions {
  dataDir: string;
  port: number;
  host?: string;
  /** `--insecure-plain-http`: allows a non-loopback `--host`, where the token travels in clear text. */
  insecure?: boolean;
  json: boolean;
  /** The hub's drivers: the product's unless given. */
  loadDrivers?: LoadDrivers;
}

/** The browser panel: the built renderer and the PanelApi WebSocket on the same port. */
function panelMounts(presenter?: PanelPresenter): (ctx: HttpContext) => Promise<HttpMount[]> {
  return async (ctx) => [
    createPanelMount({
      hub: ctx.hub,
      token: ctx.token,
      authenticate: ctx.panelSession,
      sessions: ctx.panelSessions,
      origin: ctx.origin,
      ...(presenter ? { presenter } : {}),
    }),
  ];
}

/** Starts the hub and its server (MCP + panel) for a data directory no other hub serves. */
export async function startServing(options: Omit<ServeOptions, 'json'> & { presenter?: PanelPresenter }): Promise<{ hub: Hub; server: HubServer }> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw usage(`--port must be 0–65535, not ${options.port}`);
  if (options.host && !isLoopbackHost(options.host)) {
    if (!options.insecure)
      throw usage(`--host ${options.host} is not a loopback address and Uplink speaks plain HTTP; pass --insecure-plain-http to do it anyway`);
    process.stderr.write(
      `uplink: warning: listening on ${options.host} over plain HTTP — the MCP token and the panel's session travel in clear text on that network\n`,
    );
  }
  const running = await findRunningHub(options.dataDir);
  if (running) {
    throw new HubError('core', 'Unavailable', `a hub (pid ${running.pid}) already serves this data directory at ${running.url}`, {
      hint: 'use that one (`uplink panel-url` opens its panel), stop it first, or set UPLINK_DATA_DIR for a separate hub',
    });
  }
  const hub = await createHub({ dataDir: options.dataDir, drivers: await (options.loadDrivers ?? loadDrivers)(options.dataDir) });
  recordUnfinishedCalls(hub);
  let server: Awaited<ReturnType<typeof startHubServer>>;
  try {
    server = await startHubServer({
      hub,
      dataDir: options.dataDir,
      port: options.port,
      ...(options.host ? { host: options.host, allowNonLoopback: true } : {}),
      mounts: panelMounts(options.presenter),
    });
  } catch (e) {
    await hub.close();
    throw e;
  }
  return { hub, server };
}

/** Runs until SIGINT/SIGTERM; resolves with the exit code. */
export async function runServe(options: ServeOptions): Promise<number> {
  const { hub, server } = await startServing(options);
  const pane = await servedPane(options.dataDir);
  // In a served pane the link is opened, never shown; `why` says why it could not be opened.
  const why = pane ? await openInBrowser(server.panelUrl) : undefined;
  if (options.json) {
    const panel = pane ? { panel: why ? 'withheld' : 'opened' } : { panel_url: server.panelUrl };
    print(JSON.stringify({ url: server.url, ...panel, mcp_url: server.mcpUrl, pid: process.pid }));
  } else {
    print(
      pane
        ? `Uplink hub serving\n  panel: ${server.url}/  (${why ? 'its one-time sign-in link is not shown' : 'opened in your browser; its one-time sign-in link is not shown'} in ${paneName(pane)}, which agents can read${why ? `; ${why}: run \`uplink panel-url\` from a terminal outside that tmux server` : ''})`
        : `Uplink hub serving\n  panel: ${server.panelUrl}  (opens once, within 10 minutes; \`uplink panel-url\` prints a fresh one)`,
    );
    print(`  MCP:   ${server.mcpUrl}  (Authorization: Bearer <the token file in the data directory>)`);
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  // The hub first: it answers every call still waiting for the operator, and the server then
  // gives those answers a moment to reach the agents before it closes their connections.
  await hub.close();
  await server.close();
  return 0;
}

/**
 * `uplink panel-url`: a fresh one-time panel URL from the running hub of this data directory,
 * printed — or, in a pane the hub's tmux driver serves, opened in the browser and never printed.
 */
/**
 * `uplink panel-url --revoke-all`: ends every panel session (each open panel is closed and must
 * sign in with a fresh link), and every link not yet opened. Without a running hub, the sessions
 * file is removed, so the next hub accepts none of them.
 */
export async function runRevokePanelSessions(dataDir: string, json: boolean): Promise<number> {
  const running = await findRunningHub(dataDir);
  let revoked: number | undefined;
  if (running) {
    const key = readOperatorKey(dataDir, running.pid);
    const res = await fetch(new URL('/panel/revoke', running.url), {
      method: 'POST',
      headers: { authorization: `Operator ${key}` },
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json().catch(() => ({}))) as { revoked?: number };
    if (!res.ok || typeof body.revoked !== 'number')
      throw new HubError('core', 'Rejected', `the hub at ${running.url} refused to revoke the panel sessions (HTTP ${res.status})`, {
        hint: 'run it as the user that runs the hub; if the hub was restarted, try again',
      });
    revoked = body.revoked;
  } else revokePanelSessionsAt(dataDir);
  print(
    json
      ? JSON.stringify({ revoked: revoked ?? 'all' })
      : `${revoked === undefined ? 'every panel session' : `${revoked} panel session${revoked === 1 ? '' : 's'}`} revoked: browsers sign in again with \`uplink panel-url\``,
  );
  return 0;
}

export async function runPanelUrl(dataDir: string, json: boolean): Promise<number> {
  const running = await findRunningHub(dataDir);
  if (!running)
    throw new HubError('core', 'Unavailable', 'no hub is running for this data directory', { hint: 'start one with `uplink serve` (or `npm start`)' });
  const pane = await servedPane(dataDir);
  const refuse = (why: string): HubError =>
    withheld(
      'a panel sign-in link',
      pane!,
      `run \`uplink panel-url\` from a terminal outside that tmux server, or where it can open your browser (here: ${why})`,
    );
  // Nowhere to open it: refused before a code is minted.
  const opener = pane ? browserOpener() : undefined;
  if (opener && 'why' in opener) throw refuse(opener.why);
  const key = readOperatorKey(dataDir, running.pid);
  const res = await fetch(new URL('/panel/code', running.url), {
    method: 'POST',
    headers: { authorization: `Operator ${key}` },
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json().catch(() => ({}))) as { panel_url?: string; error?: { message?: string } };
  if (!res.ok || typeof body.panel_url !== 'string') {
    throw new HubError('core', 'Rejected', `the hub at ${running.url} refused a panel link (HTTP ${res.status})`, {
      hint: 'run it as the user that runs the hub; if the hub was restarted, try again',
    });
  }
  if (pane) {
    // The code was minted for the browser only; unopened, it is never shown and expires unused.
    const why = await openInBrowser(body.panel_url);
    if (why) throw refuse(why);
    print(
      json ? JSON.stringify({ opened: true }) : `opened the panel in your browser (its one-time link is not shown in ${paneName(pane)}, which agents can read)`,
    );
    return 0;
  }
  print(json ? JSON.stringify({ panel_url: body.panel_url }) : body.panel_url);
  return 0;
}
