/**
 * The PanelApi over a WebSocket (browser panel). The upgrade carries the operator's session
 * cookie; the session's key travels in the first frame, never in the URL, so it cannot end up in
 * an access log or the browser history. Reconnects on its own with capped backoff; calls made
 * while disconnected fail at once with an actionable message.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { Disposer, PanelApi } from './panel-api';
import { PanelCallError, PanelErrorWire } from './panel-api';
import { PANEL_EVENT_NAMES, PANEL_METHODS } from './panel-channels';
import { EventHub, createPanelProxy } from './panel-proxy';
import { StringEnum } from './schema';

/** Client → server frames: the session's key first, then calls (their params are checked per method). */
export const ClientFrame = Type.Union([
  Type.Object({ t: Type.Literal('hello'), key: Type.String() }),
  Type.Object({ t: Type.Literal('call'), id: Type.Integer(), method: StringEnum(PANEL_METHODS), params: Type.Unknown() }),
]);
export type ClientFrame = Static<typeof ClientFrame>;
/** Server → client frames. */
export const ServerFrame = Type.Union([
  Type.Object({ t: Type.Literal('ready'), version: Type.String() }),
  Type.Object({ t: Type.Literal('result'), id: Type.Integer(), result: Type.Unknown() }),
  Type.Object({ t: Type.Literal('error'), id: Type.Union([Type.Integer(), Type.Null()]), error: PanelErrorWire }),
  Type.Object({ t: Type.Literal('event'), event: StringEnum(PANEL_EVENT_NAMES), payload: Type.Unknown() }),
]);
export type ServerFrame = Static<typeof ServerFrame>;

/** WebSocket close code for a missing or expired operator session. */
export const CLOSE_UNAUTHORIZED = 4401;
/** The subprotocol the panel speaks (versioned, carries no secret). */
export const PANEL_WS_PROTOCOL = 'uplink-panel.v1';

/** Connection state as the panel shows it. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized' | 'closed';

/** The minimal WebSocket surface we need (the browser's and `ws`'s both fit). */
export interface WebSocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface WsClientOptions {
  url: string;
  /** The operator session's key, read at every (re)connect. */
  key: () => string;
  /** Connect at once (default); otherwise on the first `reconnect()`. */
  autoConnect?: boolean;
  createSocket: (url: string, protocol: string) => WebSocketLike;
  onState?: (state: ConnectionState, detail?: string) => void;
  /** Backoff bounds in ms (tests shorten them). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

/** A PanelApi plus control over its connection. */
export interface WsPanelClient {
  api: PanelApi;
  state(): ConnectionState;
  /** Drops the current connection (if any) and connects again now, e.g. after a new sign-in. */
  reconnect(): void;
  close(): void;
}

const OPEN = 1;

/** Connects and keeps the connection up until `close()`. */
export function createWsPanelClient(options: WsClientOptions): WsPanelClient {
  const events = new EventHub();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const minDelay = options.minDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 5000;
  let socket: WebSocketLike | undefined;
  let state: ConnectionState = 'connecting';
  let nextId = 1;
  let attempt = 0;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const setState = (next: ConnectionState, detail?: string): void => {
    state = next;
    options.onState?.(next, detail);
  };

  const failPending = (message: string): void => {
    for (const p of pending.values()) p.reject(new PanelCallError({ code: 'unavailable', message }));
    pending.clear();
  };

  const connect = (): void => {
    const ws = options.createSocket(options.url, PANEL_WS_PROTOCOL);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ t: 'hello', key: options.key() } satisfies ClientFrame));
    ws.onmessage = (ev) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(ev.data)) as ServerFrame;
      } catch {
        return;
      }
      switch (frame.t) {
        case 'ready':
          attempt = 0;
          setState('open');
          return;
        case 'result': {
          const p = pending.get(frame.id);
          pending.delete(frame.id);
          p?.resolve(frame.result);
          return;
        }
        case 'error': {
          if (frame.id === null) return;
          const p = pending.get(frame.id);
          pending.delete(frame.id);
          p?.reject(new PanelCallError(frame.error));
          return;
        }
        case 'event':
          events.emit(frame.event, frame.payload);
          return;
        default: {
          const never: never = frame;
          void never;
        }
      }
    };
    ws.onerror = () => {
      /* onclose follows and decides */
    };
    ws.onclose = (ev) => {
      if (socket !== ws) return;
      socket = undefined;
      failPending('the hub connection closed — hint: the panel reconnects on its own; retry in a moment');
      if (closed) return setState('closed');
      if (ev.code === CLOSE_UNAUTHORIZED) {
        return setState(
          'unauthorized',
          'this browser is not signed in to the panel — hint: open the URL that `uplink serve` printed, or run `uplink panel-url` for a fresh one',
        );
      }
      const delay = Math.min(maxDelay, minDelay * 2 ** attempt++);
      setState('reconnecting', `retrying in ${Math.round(delay / 100) / 10} s`);
      timer = setTimeout(connect, delay);
    };
  };

  const api = createPanelProxy({
    invoke(method, params) {
      const ws = socket;
      if (!ws || ws.readyState !== OPEN || state !== 'open') {
        return Promise.reject(new PanelCallError({ code: 'unavailable', message: 'the hub is not connected — hint: wait for the panel to reconnect' }));
      }
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ t: 'call', id, method, params } satisfies ClientFrame));
      });
    },
    subscribe(event, listener): Disposer {
      return events.on(event, listener);
    },
  });

  if (options.autoConnect !== false) connect();
  return {
    api,
    state: () => state,
    reconnect() {
      if (closed) return;
      if (timer) clearTimeout(timer);
      const old = socket;
      // Detach first, so its close is not taken for a drop and does not schedule a retry.
      socket = undefined;
      old?.close(1000, 'reconnecting');
      failPending('the hub connection was renewed — hint: retry');
      attempt = 0;
      setState('connecting');
      connect();
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      socket?.close(1000, 'panel closed');
      if (!socket) setState('closed');
    },
  };
}
