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
export type { PanelSession, PanelHostInfo, PanelBroadcast, PanelPresenter } from './session';
export { dispatchCall } from './dispatch';
export { checkRequest, checkResponse, checkEvent } from './validate';
export { PANEL_WS_PATH, isOwnOrigin } from './ws-server';
export { panelCsp } from './static';
export { createBroadcast } from './mount';
export type { PanelMount, PanelMountOptions } from './mount';

/**
 * This checkout's `dist`, wherever this module runs from: bundled into dist/cli.mjs or one of
 * its chunks (dist/chunks/*.mjs), or from source (tests: src/main/edges/panel).
 */
function distDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (basename(here) === 'chunks' && basename(dirname(here)) === 'dist') return dirname(here);
  return here.endsWith('dist') ? here : resolve(here, '../../../../dist');
}

/** Where the built renderer lives. */
export function defaultRendererDir(): string {
  return join(distDir(), 'renderer');
}

/** `bin/uplink` of this checkout or package, when it exists. */
export function defaultCliPath(): string | undefined {
  const candidate = resolve(distDir(), '../bin/uplink');
  return existsSync(candidate) ? candidate : undefined;
}

/** Builds the panel mount; the renderer directory and CLI path default to this checkout's. */
export function createPanelMount(options: Omit<PanelMountOptions, 'rendererDir'> & { rendererDir?: string }): PanelMount {
  const cliPath = options.cliPath ?? defaultCliPath();
  return createMount({ ...options, rendererDir: options.rendererDir ?? defaultRendererDir(), ...(cliPath ? { cliPath } : {}) });
}
