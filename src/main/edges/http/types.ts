/**
 * The mount contract of the hub's HTTP server: the panel (and anything later) plugs in here. The
 * server owns `/mcp` and `/health`; every other request and upgrade is offered to the mounts in
 * order until one takes it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Hub } from '../../hub';
import type { OperatorSession } from '../../hub';

/** Something served on the hub's port besides `/mcp`. */
export interface HttpMount {
  /** Returns true when it handled the request. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
  /** Returns true when it took the WebSocket upgrade. */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): boolean;
  dispose?(): Promise<void>;
}

/** What a mount factory gets: the hub, the agents' token, the origin checks, the operator's sessions. */
export interface HttpContext {
  hub: Hub;
  token: string;
  /** The hub's own origin, e.g. `http://127.0.0.1:7420` (known once listening). */
  origin(): string;
  /** True when an Origin header is absent or names the hub itself. */
  originAllowed(origin: string | undefined): boolean;
  /** True when a Host header names this server. */
  hostAllowed(host: string | undefined): boolean;
  /** True when a bearer/secret matches the agents' token (constant time). */
  tokenMatches(candidate: string | undefined): boolean;
  /** The operator's panel session a request's cookie names, if live (never the agents' token). */
  panelSession(req: IncomingMessage): OperatorSession | undefined;
  /** The sessions' idle clocks and their revocation (sign-out, `uplink panel-url --revoke-all`). */
  panelSessions: PanelSessionWatch;
}

/** What an open panel tells the operator's sessions, and hears from them. */
export interface PanelSessionWatch {
  /** A panel of the session is connected or used now. */
  touch(handle: string): void;
  /** Sessions were revoked: open panels re-check theirs. Returns the unsubscribe. */
  onRevoke(listener: () => void): () => void;
}
