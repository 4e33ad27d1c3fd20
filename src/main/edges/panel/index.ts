/**
 * `createPanelMount`: the browser panel on the hub's HTTP server — the built renderer at `/`
 * (strict CSP) and the PanelApi over a WebSocket at `/panel/ws`. The Electron shell uses
 * `openPanelSession` directly over IPC; both share the handlers and the validation.
 *
 * Use from the hub server: `mounts: (ctx) => [createPanelMount({ hub: ctx.hub, token: ctx.token, authenticate: ctx.panelSession, origin: ctx.origin })]`.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PanelMount, PanelMountOptions } from './mount';
import { createPanelMount as createMount } from './mount';

export { openPanelSession, hubStatus } from './session';
export type { PanelSession, PanelHostInfo, PanelBroadcast } from './session';
export { dispatchCall } from './dispatch';
export { checkRequest, checkResponse, checkEvent } from './validate';
export { PANEL_WS_PATH, isOwnOrigin } from './ws-server';
export { panelCsp } from './static';
export { createBroadcast } from './mount';
export type { PanelMount, PanelMountOptions } from './mount';

/** The bundle directory (`dist`) when this module runs bundled, whether from dist/cli.mjs or one of its dist/chunks. */
function distDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = basename(here) === 'chunks' ? dirname(here) : here;
  return basename(dir) === 'dist' ? dir : undefined;
}

/** Where the built renderer lives relative to this module, bundled or not. */
export function defaultRendererDir(): string {
  // Source (tests): src/main/edges/panel → dist/renderer.
  return join(distDir() ?? resolve(dirname(fileURLToPath(import.meta.url)), '../../../../dist'), 'renderer');
}

/** `bin/uplink` of this checkout or package, when it exists. */
export function defaultCliPath(): string | undefined {
  const dist = distDir();
  const candidate = dist ? resolve(dist, '../bin/uplink') : resolve(dirname(fileURLToPath(import.meta.url)), '../../../../bin/uplink');
  return existsSync(candidate) ? candidate : undefined;
}

/** Builds the panel mount; the renderer directory and CLI path default to this checkout's. */
export function createPanelMount(options: Omit<PanelMountOptions, 'rendererDir'> & { rendererDir?: string }): PanelMount {
  const cliPath = options.cliPath ?? defaultCliPath();
  return createMount({ ...options, rendererDir: options.rendererDir ?? defaultRendererDir(), ...(cliPath ? { cliPath } : {}) });
}
