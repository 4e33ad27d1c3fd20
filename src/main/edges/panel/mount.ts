/**
 * The panel mount itself (no path defaults, so the Electron CJS bundle can import it): the built
 * renderer at `/` with a strict CSP and the PanelApi over a WebSocket at `/panel/ws`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { Hub } from '../../hub';
import type { PanelEventName, PanelEvents } from '../../../shared/panel-api';
import { EventHub } from '../../../shared/panel-proxy';
import { serveStatic } from './static';
import type { PanelBroadcast, PanelHostInfo, PanelPresenter } from './session';
import { openPanelSession } from './session';
import { createPanelWs } from './ws-server';
import type { PanelCredential } from './ws-server';

/** A mount on the hub's HTTP server (structurally the hub helper's `HttpMount`). */
export interface PanelMount {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean;
  dispose(): Promise<void>;
  /** Open WebSocket connections (tests). */
  connections(): number;
}

export interface PanelMountOptions {
  hub: Hub;
  /** The agents' MCP token, shown in the settings view (it opens nothing here). */
  token: string;
  /** The operator's panel session of an upgrade request (the hub server's `panelSession`). */
  authenticate: (req: IncomingMessage) => PanelCredential | undefined;
  /** Built renderer directory (`dist/renderer`). */
  rendererDir: string;
  /** The sessions' idle clocks and revocations (the hub server's `panelSessions`). */
  sessions?: { touch(handle: string): void; onRevoke(listener: () => void): () => void };
  /** The server's own origin (e.g. `http://127.0.0.1:7420`), known once listening. */
  origin?: () => string;
  /** The MCP endpoint URL; default `<origin>/mcp`. */
  mcpUrl?: () => string | undefined;
  cliPath?: string;
  /** The stdio MCP argv when it is not `<cliPath> mcp` (see PanelHostInfo). */
  stdioCommand?: string[];
  version?: string;
  /** OS user recorded for the operator's decisions; default the current user. */
  user?: string;
  /** A running demo's story, for the presenter strip. */
  presenter?: PanelPresenter;
}

/** A broadcast channel shared by every session of one hub. */
export function createBroadcast(): PanelBroadcast {
  const hub = new EventHub();
  return {
    emit: (event, payload) => hub.emit('*', { event, payload }),
    on: (listener) =>
      hub.on('*', (m) => {
        const { event, payload } = m as { event: PanelEventName; payload: PanelEvents[PanelEventName] };
        listener(event, payload);
      }),
  };
}

/** Builds the panel mount for the hub's HTTP server. */
export function createPanelMount(options: PanelMountOptions): PanelMount {
  const root = resolve(options.rendererDir);
  const version = options.version ?? '0.1.0';
  const startedAt = Date.now();
  const broadcast = createBroadcast();
  const host: PanelHostInfo = {
    token: options.token,
    version,
    user: options.user ?? safeUser(),
    ...(options.mcpUrl ? { mcpUrl: options.mcpUrl } : options.origin ? { mcpUrl: () => `${options.origin!()}/mcp` } : {}),
    ...(options.cliPath ? { cliPath: options.cliPath } : {}),
    ...(options.stdioCommand ? { stdioCommand: options.stdioCommand } : {}),
    ...(options.presenter ? { presenter: options.presenter } : {}),
  };
  const ws = createPanelWs({
    authenticate: options.authenticate,
    version,
    ...(options.origin ? { origin: options.origin } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
    openSession: (emit, via) => openPanelSession(options.hub, host, broadcast, emit, startedAt, via),
  });
  return {
    handle(req, res, url) {
      if (url.pathname.startsWith('/mcp') || url.pathname.startsWith('/panel/')) return false;
      const origin = options.origin?.() ?? `http://127.0.0.1:${req.socket.localPort ?? 0}`;
      serveStatic(root, req, res, url.pathname, origin);
      return true;
    },
    upgrade: (req, socket, head, url) => ws.upgrade(req, socket, head, url),
    dispose: () => ws.close(),
    connections: () => ws.connections(),
  };
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'operator';
  }
}
