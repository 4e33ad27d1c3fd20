/**
 * The one file that touches the PanelApi. In Electron the preload exposes it as `window.uplink`;
 * in a browser we connect a WebSocket client to the server that served this page. The token
 * arrives in the URL fragment (`#token=…`, never sent to a server or logged), is moved into
 * sessionStorage so a reload keeps working, and the fragment is removed from history at once.
 */
import type { PanelApi } from '../shared/panel-api';
import type { ConnectionState, WebSocketLike } from '../shared/panel-ws';
import { createWsPanelClient } from '../shared/panel-ws';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in a browser. */
    uplink?: PanelApi;
  }
}

/** A connected PanelApi and the host it runs in. */
export interface PanelConnection {
  api: PanelApi;
  host: 'electron' | 'browser';
  close(): void;
}

const TOKEN_KEY = 'uplink.token';

/** Reads `#token=…` (then removes it from the address bar and history) or the session's copy. */
export function takeToken(loc: Location = window.location, storage: Storage = window.sessionStorage): string {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const fromHash = params.get('token');
  if (fromHash) {
    storage.setItem(TOKEN_KEY, fromHash);
    params.delete('token');
    const rest = params.toString();
    window.history.replaceState(null, '', `${loc.pathname}${loc.search}${rest ? `#${rest}` : ''}`);
    return fromHash;
  }
  return storage.getItem(TOKEN_KEY) ?? '';
}

let current: PanelApi | undefined;

/** The PanelApi in use (actions call through this). */
export function getApi(): PanelApi {
  if (!current) throw new Error('the panel is not connected yet — hint: call connectPanel() first');
  return current;
}

/** Replaces the PanelApi (tests inject an in-memory one). */
export function setApi(api: PanelApi | undefined): void {
  current = api;
}

/** Picks the preload's PanelApi or connects the WebSocket client. */
export function connectPanel(onState: (state: ConnectionState, detail?: string) => void): PanelConnection {
  if (window.uplink) {
    current = window.uplink;
    onState('open');
    return { api: window.uplink, host: 'electron', close() {} };
  }
  const token = takeToken();
  if (!token) {
    onState('unauthorized', 'no token — hint: open the URL that `uplink serve` printed (it ends in #token=…)');
  }
  const url = `${window.location.origin.replace(/^http/, 'ws')}/panel/ws`;
  const client = createWsPanelClient({
    url,
    token,
    createSocket: (u, protocol) => new WebSocket(u, protocol) as unknown as WebSocketLike,
    onState,
  });
  current = client.api;
  return { api: client.api, host: 'browser', close: () => client.close() };
}
