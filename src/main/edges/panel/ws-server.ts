/**
 * The PanelApi over a WebSocket at `/panel/ws`. Guards, in order: the path, a loopback Host and
 * an Origin equal to this server's own origin (no other site can drive the panel), our
 * subprotocol, the operator's session cookie on the upgrade, then the session's key in the first
 * frame. The agents' MCP token opens nothing here, wherever it is put. Every frame is validated;
 * a bad frame gets an error frame, never a crash.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { PanelEventName, PanelEvents } from '../../../shared/panel-api';
import type { ClientFrame, ServerFrame } from '../../../shared/panel-ws';
import { CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL } from '../../../shared/panel-ws';
import { dispatchCall } from './dispatch';
import type { PanelSession } from './session';

/** The WebSocket endpoint path. */
export const PANEL_WS_PATH = '/panel/ws';
const MAX_FRAME = 1024 * 1024;
const MAX_BUFFERED = 32 * 1024 * 1024;
const AUTH_TIMEOUT_MS = 5000;

/** Origins this server answers to: its own loopback address and port. */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
}

/** True when the request comes from a page served by this very server (Origin and Host both). */
export function isOwnOrigin(headers: { origin?: string; host?: string }, port: number, extra: string[] = []): boolean {
  const allowed = [...ownOrigins(port), ...extra];
  const host = headers.host ? `http://${headers.host}` : undefined;
  return headers.origin !== undefined && allowed.includes(headers.origin) && host !== undefined && allowed.includes(host);
}

/** An operator's panel sign-in (see `hub/credentials/operator.ts`): a short label for the audit, a stable handle, the key check. */
export interface PanelCredential {
  label: string;
  handle: string;
  keyMatches(candidate: unknown): boolean;
}

/** How often a connected panel restarts its session's idle clock. */
const TOUCH_MS = 5 * 60_000;

export interface PanelWsOptions {
  /** The operator's session named by the upgrade request's cookie, if live. */
  authenticate: (req: IncomingMessage) => PanelCredential | undefined;
  /** Opens a session for an authenticated socket; `emit` pushes an event to it, `via` names the sign-in. */
  openSession: (emit: <E extends PanelEventName>(event: E, payload: PanelEvents[E]) => void, via: string) => PanelSession;
  version: string;
  /** The server's own origin when it is not a loopback one (`serve --host`). */
  origin?: () => string;
  /** The sessions' idle clocks and revocations (sign-out, `uplink panel-url --revoke-all`). */
  sessions?: { touch(handle: string): void; onRevoke(listener: () => void): () => void };
}

/** The upgrade handler plus a way to close every socket on shutdown. */
export interface PanelWsEndpoint {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean;
  connections(): number;
  close(): Promise<void>;
}

const reject = (socket: Duplex, status: number, text: string): void => {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${text.length + 1}\r\n\r\n${text}\n`);
};

/** Creates the endpoint (no listener of its own: the hub's HTTP server forwards upgrades). */
export function createPanelWs(options: PanelWsOptions): PanelWsEndpoint {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(PANEL_WS_PROTOCOL) ? PANEL_WS_PROTOCOL : false),
  });
  const sockets = new Set<WebSocket>();
  /** Each authenticated socket's re-check: closes it when its session has ended. */
  const recheck = new Map<WebSocket, () => void>();
  const offRevoke = options.sessions?.onRevoke(() => {
    for (const check of [...recheck.values()]) check();
  });

  const unauthorized = 'this browser is not signed in to the panel — hint: open the URL that `uplink serve` printed, or run `uplink panel-url` for a fresh one';
  const serve = (ws: WebSocket, req: IncomingMessage, credential: PanelCredential | undefined): void => {
    sockets.add(ws);
    let session: PanelSession | undefined;
    const send = (frame: ServerFrame): void => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED) return void ws.close(1013, 'panel too slow to read events');
      let text: string;
      try {
        text = JSON.stringify(frame);
      } catch {
        // A payload that is not JSON (a hub bug) must not take the connection or the hub down.
        const id = frame.t === 'result' ? frame.id : null;
        text = JSON.stringify({
          t: 'error',
          id,
          error: { code: 'failed', message: 'the hub produced a payload that is not JSON — hint: see the hub log' },
        } satisfies ServerFrame);
      }
      ws.send(text);
    };
    const refuse = (): void => {
      send({ t: 'error', id: null, error: { code: 'unauthorized', message: unauthorized } });
      ws.close(CLOSE_UNAUTHORIZED, 'unauthorized');
    };
    // A browser cannot read an upgrade's HTTP status, so a refusal is a close code it can show.
    if (!credential) return refuse();
    const authTimer = setTimeout(() => ws.close(CLOSE_UNAUTHORIZED, 'no hello'), AUTH_TIMEOUT_MS);
    let touchTimer: ReturnType<typeof setInterval> | undefined;
    const live = (): boolean => options.authenticate(req)?.handle === credential.handle;
    ws.on('message', (data, isBinary) => {
      let frame: ClientFrame;
      try {
        if (isBinary) throw new Error('binary');
        frame = JSON.parse(data.toString()) as ClientFrame;
        if (!frame || typeof frame !== 'object') throw new Error('not an object');
      } catch {
        return send({ t: 'error', id: null, error: { code: 'invalid_request', message: 'frame is not a JSON object — hint: send {"t":"call",…}' } });
      }
      if (!session) {
        if (frame.t !== 'hello' || !credential.keyMatches(frame.key)) return refuse();
        clearTimeout(authTimer);
        options.sessions?.touch(credential.handle);
        touchTimer = setInterval(() => options.sessions?.touch(credential.handle), TOUCH_MS);
        touchTimer.unref?.();
        recheck.set(ws, () => {
          if (!live()) refuse();
        });
        try {
          session = options.openSession((event, payload) => send({ t: 'event', event, payload }), `panel-session:${credential.label}`);
        } catch {
          send({ t: 'error', id: null, error: { code: 'unavailable', message: 'the hub is shutting down — hint: restart `uplink serve`' } });
          return void ws.close(1011, 'hub unavailable');
        }
        return send({ t: 'ready', version: options.version });
      }
      if (frame.t !== 'call' || !Number.isSafeInteger(frame.id)) {
        const id = typeof (frame as { id?: unknown }).id === 'number' ? (frame as { id: number }).id : null;
        return send({ t: 'error', id, error: { code: 'invalid_request', message: 'expected {"t":"call","id":<integer>,"method","params"}' } });
      }
      // The session may have expired or been pushed out since the upgrade.
      if (!live()) return refuse();
      options.sessions?.touch(credential.handle);
      const open = session;
      void dispatchCall(open.handlers, frame.method, frame.params).then((outcome) =>
        send(outcome.ok ? { t: 'result', id: frame.id, result: outcome.result } : { t: 'error', id: frame.id, error: outcome.error }),
      );
    });
    ws.on('close', () => {
      clearTimeout(authTimer);
      if (touchTimer) clearInterval(touchTimer);
      recheck.delete(ws);
      sockets.delete(ws);
      session?.close();
    });
    ws.on('error', () => ws.terminate());
  };

  return {
    upgrade(req, socket, head, url) {
      if (url.pathname !== PANEL_WS_PATH) return false;
      const port = req.socket.localPort ?? 0;
      if (!isOwnOrigin({ origin: req.headers.origin, host: req.headers.host }, port, options.origin ? [options.origin()] : [])) {
        reject(socket, 403, 'Forbidden: the panel WebSocket accepts only its own origin');
        return true;
      }
      const offered = String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((s) => s.trim());
      if (!offered.includes(PANEL_WS_PROTOCOL)) {
        reject(socket, 400, `Bad Request: subprotocol ${PANEL_WS_PROTOCOL} required`);
        return true;
      }
      const credential = options.authenticate(req);
      wss.handleUpgrade(req, socket, head, (ws) => serve(ws, req, credential));
      return true;
    },
    connections: () => sockets.size,
    async close() {
      offRevoke?.();
      for (const ws of sockets) ws.close(1001, 'hub stopping');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      for (const ws of sockets) ws.terminate();
    },
  };
}
