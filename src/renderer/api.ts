/**
 * The one file that touches the PanelApi. In Electron the preload exposes it as `window.uplink`;
 * in a browser we connect a WebSocket client to the server that served this page. The operator
 * signs in with a one-time code from the URL fragment (`#code=…`, never sent to a server or
 * logged, removed from the address bar at once): `POST /panel/session` trades it for an HttpOnly
 * cookie plus a key kept in this origin's localStorage, so a reload or a second tab keeps working,
 * and so does a restart of the hub (it keeps the session): the page reconnects by itself. Pasting
 * a fresh link into an open tab signs in again without a reload; "Sign out" ends the session.
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

const KEY = 'uplink.panel-key';

/** Reads `#code=…` and removes it from the address bar and history (other fragment parts stay). */
export function takeCode(loc: Location = window.location): string | undefined {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const code = params.get('code');
  if (!code) return undefined;
  params.delete('code');
  const rest = params.toString();
  window.history.replaceState(null, '', `${loc.pathname}${loc.search}${rest ? `#${rest}` : ''}`);
  return code;
}

/** Trades a one-time code for a session; resolves with the hub's one-line refusal, if any. */
export async function signIn(code: string, storage: Storage = window.localStorage): Promise<string | undefined> {
  try {
    const res = await fetch('/panel/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
      credentials: 'same-origin',
    });
    const body = (await res.json()) as { key?: string; error?: { message?: string } };
    if (res.ok && typeof body.key === 'string') {
      storage.setItem(KEY, body.key);
      return undefined;
    }
    return body.error?.message ?? `the hub refused the sign-in (HTTP ${res.status}) — hint: run \`uplink panel-url\` for a fresh link`;
  } catch {
    return 'the hub did not answer the sign-in — hint: check that `uplink serve` is running, then open a fresh link';
  }
}

let current: PanelApi | undefined;
let signOutHere: (() => Promise<void>) | undefined;

/** Ends this browser's panel session (every tab of it); undefined in Electron, which has none. */
export function signOutPanel(): Promise<void> | undefined {
  return signOutHere?.();
}

/** The PanelApi in use (actions call through this). */
export function getApi(): PanelApi {
  if (!current) throw new Error('the panel is not connected yet — hint: call connectPanel() first');
  return current;
}

/** Replaces the PanelApi (tests inject an in-memory one). */
export function setApi(api: PanelApi | undefined): void {
  current = api;
}

/** Picks the preload's PanelApi or connects the WebSocket client (signing in first when the URL has a code). */
export function connectPanel(onState: (state: ConnectionState, detail?: string) => void): PanelConnection {
  if (window.uplink) {
    current = window.uplink;
    onState('open');
    return { api: window.uplink, host: 'electron', close() {} };
  }
  // A refused sign-in explains an unauthorized connection better than the generic line.
  let refusal: string | undefined;
  const client = createWsPanelClient({
    url: `${window.location.origin.replace(/^http/, 'ws')}/panel/ws`,
    key: () => window.localStorage.getItem(KEY) ?? '',
    autoConnect: false,
    createSocket: (u, protocol) => new WebSocket(u, protocol) as unknown as WebSocketLike,
    onState: (state, detail) => {
      if (state === 'open') refusal = undefined;
      onState(state, state === 'unauthorized' && refusal ? refusal : detail);
    },
  });
  const start = async (): Promise<void> => {
    const code = takeCode();
    if (code) refusal = await signIn(code);
    client.reconnect();
  };
  const onHash = (): void => {
    if (new URLSearchParams(window.location.hash.replace(/^#/, '')).has('code')) void start();
  };
  window.addEventListener('hashchange', onHash);
  void start();
  signOutHere = async () => {
    await fetch('/panel/session', { method: 'DELETE', credentials: 'same-origin' }).catch(() => undefined);
    window.localStorage.removeItem(KEY);
    refusal = 'signed out of the panel — hint: run `uplink panel-url` for a fresh link to sign in again';
    client.reconnect();
  };
  current = client.api;
  return {
    api: client.api,
    host: 'browser',
    close: () => {
      window.removeEventListener('hashchange', onHash);
      client.close();
    },
  };
}
