/**
 * The hub's one HTTP server (used by `uplink serve` and the Electron main): Streamable HTTP MCP at
 * `/mcp` (bearer token, no CORS), `/health` for liveness, the operator's panel sign-in and sign-out
 * (`/panel/session`, `/panel/code`, `/panel/revoke`), the CLI's calls (`/cli`, `cli-route.ts`), and the mounts (the
 * panel). Every request must name this server in Host (DNS rebinding) and, when it has an Origin,
 * come from it. Listens on 127.0.0.1 unless the caller explicitly allows another host.
 */
import { compactWhenIdle } from './idle-memory';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { HubError } from '../../hub';
import { clipName } from '../../../shared/escape';
import type { AgentCredential, CallerEnvironment, Hub } from '../../hub';
import { connectMcp, createMcpServer } from '../mcp/server';
import { checkBody } from '../mcp/jsonrpc';
import { createCliRoute } from './cli-route';
import { announceHub, retractHub } from './hub-json';
import { EventBuffer } from './event-store';
import { quickInitializeCheck } from './initialize-check';

import { isLoopbackHost, isLoopbackPeer } from './loopback';
import { connectionOwner } from './peer-process';
import { McpSessions } from './sessions';
import type { McpSession } from './sessions';
import { createOperatorAuth, ensureToken, secretEquals, SESSION_TTL_MS } from '../../hub';
import type { OperatorAuth } from '../../hub';
import type { HttpContext, HttpMount } from './types';

/** How long a stopping server lets answers already being written reach their clients. */
const FLUSH_MS = 2000;
/** How long an SSE client waits before it reconnects (sent in the priming event's `retry`). */
const SSE_RETRY_MS = 1000;

/**
 * Headers `uplink mcp` sets when it relays an agent to this hub: the agent's `$TMUX`/`$TMUX_PANE`
 * and the relay's own pid. They are claims and only ask the hub to locate the caller.
 */
export const CALLER_HEADERS = { tmux: 'x-uplink-tmux', tmux_pane: 'x-uplink-tmux-pane', pid: 'x-uplink-pid' } as const;

/**
 * Where a relayed agent runs, from evidence only. No header is believed: when a client claims a
 * terminal, the hub finds which process holds the other end of this very connection (the kernel's
 * tables, `peer-process.ts`; a claimed pid is only where it looks first) and passes that pid on;
 * drivers find the caller's pane from it on their own server. Without evidence the caller is `{}`:
 * someone outside the hub's process whose terminal nobody knows, never the hub's own.
 */
async function callerFrom(req: IncomingMessage): Promise<CallerEnvironment> {
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return typeof value === 'string' && value.length > 0 && value.length <= 4096 ? value : undefined;
  };
  const claimedPid = header(CALLER_HEADERS.pid);
  if (claimedPid === undefined && header(CALLER_HEADERS.tmux) === undefined && header(CALLER_HEADERS.tmux_pane) === undefined) return {};
  const hint = claimedPid !== undefined && /^\d{1,10}$/.test(claimedPid) ? Number(claimedPid) : undefined;
  const pid = await connectionOwner(req.socket, hint).catch(() => undefined);
  return pid === undefined ? {} : { pid };
}

/** Largest request body accepted on `/mcp`. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Largest body of the panel sign-in routes. */
const MAX_SIGN_IN_BYTES = 4096;

/** The credential after an auth scheme (case-insensitive, RFC 7235), if the header uses it. */
export function credentialOf(header: string | undefined, scheme: 'bearer' | 'operator'): string | undefined {
  const m = /^(\S+)\s+(\S+)\s*$/.exec(header ?? '');
  return m && m[1]!.toLowerCase() === scheme ? m[2] : undefined;
}

/** Options of `startHubServer`. */
export interface HubServerOptions {
  hub: Hub;
  dataDir: string;
  /** 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. Anything not loopback needs `allowNonLoopback` (the `--host` flag). */
  host?: string;
  allowNonLoopback?: boolean;
  /** Mounts, or a factory that receives the server context (token, origin checks). */
  mounts?: HttpMount[] | ((ctx: HttpContext) => HttpMount[] | Promise<HttpMount[]>);
  /** Write `<data dir>/hub.json` so `uplink mcp` forwards here (default true). */
  announce?: boolean;
  /** Open MCP sessions at most (default 256) and how long one may sit idle (default 10 min). */
  maxMcpSessions?: number;
  /** Open MCP sessions one credential (the default token, or one named agent) may hold at most (default half of `maxMcpSessions`). */
  maxMcpSessionsPerAgent?: number;
  mcpSessionIdleMs?: number;
  /** Where the SSE streams are kept for clients that reconnect (default: one bounded by `EVENT_LIMITS`). */
  mcpEvents?: EventBuffer;
}

/** A running hub server. */
export interface HubServer {
  /** e.g. `http://127.0.0.1:7420` */
  url: string;
  port: number;
  mcpUrl: string;
  /** The panel URL with a one-time code in the fragment (never sent to a server or a Referer). */
  panelUrl: string;
  /** A fresh one-time panel URL. */
  mintPanelUrl(): string;
  /** The agents' MCP bearer token (opens `/mcp` only). */
  token: string;
  close(): Promise<void>;
}

/** JSON-RPC error codes of the answers this server gives itself (the SDK answers the rest). */
const RPC = { serverError: -32000, parseError: -32700, invalidRequest: -32600 } as const;

function sendError(
  res: ServerResponse,
  status: number,
  kind: 'Rejected' | 'Invalid' | 'NotFound' | 'Unavailable',
  message: string,
  hint: string,
  headers: Record<string, string> = {},
  rpcCode: number = RPC.serverError,
): HubError {
  const err = new HubError('core', kind, message, { hint });
  const text = err.rendered;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: rpcCode, message: text }, id: null }));
  return err;
}

async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw Object.assign(new Error('too large'), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw Object.assign(new Error('parse'), { status: 400 });
  }
}

/** Starts the server; resolves once it listens. */
export async function startHubServer(options: HubServerOptions): Promise<HubServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.allowNonLoopback) {
    throw new Error(`refusing to listen on ${host} — hint: Uplink listens on 127.0.0.1 only unless you pass --host explicitly`);
  }
  quickInitializeCheck();
  const token = ensureToken(options.dataDir);
  let origin = '';
  let port = 0;
  const operator = createOperatorAuth(options.dataDir, () => port);
  const ownOrigins = (): string[] => [origin, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`];
  const ctx: HttpContext = {
    hub: options.hub,
    token,
    origin: () => origin,
    originAllowed: (o) => o === undefined || ownOrigins().includes(o),
    hostAllowed: (h) => h !== undefined && ownOrigins().includes(`http://${h.toLowerCase()}`),
    tokenMatches: (c) => secretEquals(token, c),
    panelSession: (req) => operator.sessionOf(req.headers.cookie),
    panelSessions: { touch: (handle) => operator.touch(handle), onRevoke: (listener) => operator.onRevoke(listener) },
  };
  const sessions = new McpSessions({
    max: options.maxMcpSessions,
    perAgent: options.maxMcpSessionsPerAgent,
    idleMs: options.mcpSessionIdleMs,
  });
  const eventBuffer = options.mcpEvents ?? new EventBuffer();
  /** MCP requests still being answered (not the long-lived GET streams). */
  const answering = new Set<ServerResponse>();
  const serve = (s: McpSession, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> => {
    if (req.method === 'POST') {
      answering.add(res);
      res.once('close', () => answering.delete(res));
    }
    s.lastSeen = Date.now();
    s.inflight++;
    res.once('close', () => {
      s.inflight--;
      s.lastSeen = Date.now();
    });
    return s.transport.handleRequest(req, res, body);
  };
  // Refused HTTP requests go to the audit too, at most a few per second (an unauthenticated client
  // must not be able to flood the store).
  let budget = 0;
  let budgetAt = 0;
  const audit = (message: string, err: HubError): void => {
    const now = Date.now();
    if (now - budgetAt > 1000) {
      budgetAt = now;
      budget = 5;
    }
    if (budget-- <= 0) return;
    options.hub.recordRejected(
      { agent: { kind: 'mcp', name: 'http-client' } },
      new HubError('core', err.kind, message, { ...(err.hint ? { hint: err.hint } : {}) }),
    );
  };
  let mounts: HttpMount[] = [];

  /** Who a bearer token is: the data dir's default MCP token, or a named agent's (not revoked). */
  const authenticate = (bearer: string | undefined): AgentCredential | undefined =>
    ctx.tokenMatches(bearer) ? { id: 'default' } : options.hub.authenticateAgent(bearer);

  const handleMcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const bearer = credentialOf(req.headers.authorization, 'bearer');
    const credential = authenticate(bearer);
    if (!credential) {
      const err = sendError(
        res,
        401,
        'Rejected',
        'missing, wrong or revoked bearer token',
        "send Authorization: Bearer <the token file in Uplink's data directory, or a named agent's token from `uplink agents create`>",
        { 'www-authenticate': 'Bearer' },
      );
      audit(`HTTP 401 on /mcp: ${bearer === undefined ? 'no' : 'a wrong or revoked'} bearer token`, err);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    // A session belongs to the agent that opened it: another credential cannot speak in it.
    const owned = (s: McpSession | undefined): McpSession | undefined => (s && s.agent_id === credential.id ? s : undefined);
    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (e) {
        const status = (e as { status?: number }).status ?? 400;
        const tooLarge = status === 413;
        const err = sendError(
          res,
          status,
          'Invalid',
          tooLarge ? `request body over ${MAX_BODY_BYTES} bytes` : 'Parse error: the request body is not valid JSON',
          'send one JSON-RPC message per request',
          {},
          tooLarge ? RPC.invalidRequest : RPC.parseError,
        );
        audit(`HTTP ${status} on /mcp: ${err.message}`, err);
        return;
      }
      // The JSON-RPC envelope, checked here with its own codes and the request's id (the SDK
      // would call every bad message a parse error with id null); a bad batch is refused whole.
      const checked = checkBody(body);
      if ('error' in checked) {
        // HTTP answers even a malformed notification: 400, its error without an id.
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(checked.answer ?? checked.error));
        const why = checked.error.error.message.replace(/^uplink error \[core:Invalid\]: /, '').replace(/ — hint: .*$/, '');
        audit(`HTTP 400 on /mcp: ${why}`, new HubError('core', 'Invalid', why, { hint: 'send one JSON-RPC 2.0 message per request' }));
        return;
      }
      const existing = owned(sessionId ? sessions.get(sessionId) : undefined);
      if (existing) return serve(existing, req, res, body);
      if (sessionId) return void sendError(res, 404, 'NotFound', `unknown MCP session ${clipName(sessionId)}`, 'initialize a new session');
      if (!isInitializeRequest(body)) {
        const badInit = (body as { method?: unknown } | null)?.method === 'initialize';
        const message = badInit
          ? 'Invalid Request: initialize needs params with protocolVersion, capabilities and clientInfo'
          : 'Bad Request: Server not initialized';
        return void sendError(res, 400, 'Invalid', message, 'send initialize first, without an Mcp-Session-Id header', {}, RPC.invalidRequest);
      }
      const refused = sessions.admit(credential.id);
      if (refused) {
        const err = sendError(res, refused.status, 'Unavailable', refused.message, refused.hint, { 'retry-after': '5' });
        audit(`HTTP ${refused.status} on /mcp: ${err.message}`, err);
        return;
      }
      const grantsKey = randomUUID();
      const server = createMcpServer(options.hub, credential, grantsKey, await callerFrom(req));
      const events = eventBuffer.forSession();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.opened(session);
          sessions.set(id, session);
        },
        eventStore: events,
        retryInterval: SSE_RETRY_MS,
      });
      streamAtOnce(transport);
      const session: McpSession = { transport, server, lastSeen: Date.now(), inflight: 0, agent_id: credential.id, events };
      transport.onclose = () => {
        events.drop();
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      // Counted from admission on: concurrent initializes must not all fit in the same free slot.
      sessions.opening(session);
      try {
        await connectMcp(server, transport);
        return await serve(session, req, res, body);
      } finally {
        sessions.opened(session);
      }
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const existing = owned(sessionId ? sessions.get(sessionId) : undefined);
      if (!existing) return void sendError(res, sessionId ? 404 : 400, 'NotFound', 'unknown or missing MCP session', 'initialize a new session');
      const lastEventId = req.headers['last-event-id'];
      if (req.method === 'GET' && typeof lastEventId === 'string' && lastEventId !== '' && !existing.events.knows(lastEventId)) {
        return void sendError(
          res,
          400,
          'NotFound',
          `cannot resume after event ${clipName(lastEventId)}: this session no longer holds it`,
          'the hub keeps a bounded tail of each stream; send the request again (a call that was answered meanwhile is in `uplink log`)',
          {},
          RPC.invalidRequest,
        );
      }
      return serve(existing, req, res);
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
  };

  /**
   * `POST /panel/session {code}`: the page trades its one-time code for a session. `DELETE
   * /panel/session`: the page signs out (its cookie names the session; the cookie is cleared).
   */
  const handleSignIn = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' && req.method !== 'DELETE') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
    // Only a page of this server: a browser always sends Origin on a POST or DELETE.
    if (!req.headers.origin) return void sendError(res, 403, 'Rejected', 'sign-in needs the Origin of the panel page', 'open the panel URL in a browser');
    if (req.method === 'DELETE') {
      const ended = operator.signOut(req.headers.cookie);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'set-cookie': sessionCookie(operator, '', 0) });
      res.end(JSON.stringify({ signed_out: ended }));
      return;
    }
    const body = await readBody(req, MAX_SIGN_IN_BYTES).catch(() => undefined);
    const code = body && typeof body === 'object' ? (body as { code?: unknown }).code : undefined;
    const won = operator.redeem(code);
    if (!won) {
      const err = sendError(
        res,
        401,
        'Rejected',
        'this panel link is unknown, already used or expired',
        'run `uplink panel-url` for a fresh link (each opens the panel once, within 10 minutes)',
      );
      audit('HTTP 401 on /panel/session: an unknown, used or expired code', err);
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'set-cookie': sessionCookie(operator, won.id, SESSION_TTL_MS / 1000),
    });
    res.end(JSON.stringify({ key: won.key }));
  };
  /** `POST /panel/revoke` with `Authorization: Operator <operator.key>`: ends every panel session (`uplink panel-url --revoke-all`). */
  const handleRevoke = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    if (!isLoopbackPeer(req.socket.remoteAddress))
      return void sendError(
        res,
        403,
        'Rejected',
        'panel sessions are revoked from this machine only',
        'run `uplink panel-url --revoke-all` on the machine that runs the hub',
      );
    if (!operator.keyMatches(credentialOf(req.headers.authorization, 'operator'))) {
      const err = sendError(res, 401, 'Rejected', 'missing or wrong operator key', 'run `uplink panel-url --revoke-all` as the user that runs the hub');
      audit('HTTP 401 on /panel/revoke: no or a wrong operator key', err);
      return;
    }
    const revoked = operator.revokeAll();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ revoked }));
  };
  /** `POST /panel/code` with `Authorization: Operator <operator.key>`: a fresh panel URL. */
  const handleMintCode = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    // The key lives on this machine; even a hub on another address mints codes for local callers only.
    if (!isLoopbackPeer(req.socket.remoteAddress))
      return void sendError(res, 403, 'Rejected', 'panel links are minted for this machine only', 'run `uplink panel-url` on the machine that runs the hub');
    if (!operator.keyMatches(credentialOf(req.headers.authorization, 'operator'))) {
      const err = sendError(res, 401, 'Rejected', 'missing or wrong operator key', 'run `uplink panel-url` as the user that runs the hub');
      audit('HTTP 401 on /panel/code: no or a wrong operator key', err);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ panel_url: `${origin}/#code=${operator.mintCode()}` }));
  };

  const handleCli = createCliRoute({ hub: options.hub, keyMatches: operator.keyMatches, operatorCredential: (h) => credentialOf(h, 'operator'), audit });

  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin || 'http://127.0.0.1');
      // A page on a rebound DNS name reaches us as same-origin: Host is what tells.
      if (!ctx.hostAllowed(req.headers.host)) {
        const err = sendError(res, 403, 'Rejected', `host ${clipName(req.headers.host)} is not this hub`, `address the hub as ${origin}`);
        audit(`HTTP 403 on ${clipName(url.pathname)}: foreign host ${clipName(req.headers.host)}`, err);
        return;
      }
      // Browsers send Origin on cross-site requests; only the hub's own origin may talk to it.
      const o = req.headers.origin;
      if (!ctx.originAllowed(o)) {
        const err = sendError(res, 403, 'Rejected', `origin ${clipName(o)} is not allowed`, `only ${origin} may call this hub`);
        audit(`HTTP 403 on ${clipName(url.pathname)}: foreign origin ${clipName(o)}`, err);
        return;
      }
      if (url.pathname === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ app: 'uplink', ok: true }));
        return;
      }
      if (url.pathname === '/mcp') return handleMcp(req, res);
      if (url.pathname === '/panel/session') return handleSignIn(req, res);
      if (url.pathname === '/panel/code') return handleMintCode(req, res);
      if (url.pathname === '/panel/revoke') return handleRevoke(req, res);
      if (url.pathname === '/cli') return handleCli(req, res);
      for (const m of mounts) if (await m.handle(req, res, url)) return;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    })().catch(() => {
      if (!res.headersSent) sendError(res, 500, 'Unavailable', 'the hub failed to handle the request', 'retry; see `uplink doctor`');
      else res.end();
    });
  });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', origin || 'http://127.0.0.1');
    if (!ctx.hostAllowed(req.headers.host) || !ctx.originAllowed(req.headers.origin)) return void socket.destroy();
    for (const m of mounts) if (m.upgrade?.(req, socket, head, url)) return;
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    const fail = (e: NodeJS.ErrnoException): void => {
      const hint = e.code === 'EADDRINUSE' ? 'another hub or program uses it; pass --port N, or --port 0 for any free port' : 'check the host and port';
      reject(new HubError('core', 'Unavailable', `cannot listen on ${host}:${options.port ?? 0} (${e.code ?? e.message})`, { hint }));
    };
    http.once('error', fail);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', fail);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const mintPanelUrl = (): string => `${origin}/#code=${operator.mintCode()}`;
  mounts = typeof options.mounts === 'function' ? await options.mounts(ctx) : (options.mounts ?? []);
  if (options.announce !== false) announceHub(options.dataDir, origin);

  const stopCompacting = compactWhenIdle();
  let closed = false;
  return {
    url: origin,
    port,
    mcpUrl: `${origin}/mcp`,
    panelUrl: mintPanelUrl(),
    mintPanelUrl,
    token,
    async close() {
      if (closed) return;
      closed = true;
      stopCompacting();
      sessions.stopSweeping();
      if (options.announce !== false) retractHub(options.dataDir);
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      // A hub that stopped has answered its waiting calls; closing the sockets now would cut those
      // answers off and leave the agents waiting forever.
      for (const deadline = Date.now() + FLUSH_MS; answering.size > 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 10));
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
      await Promise.all(mounts.map((m) => m.dispose?.().catch(() => undefined)));
      http.closeAllConnections();
      await stopped;
    },
  };
}

/**
 * The panel's session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site sends
 * it), and scoped to `/panel`, the sign-in route and the WebSocket, so no page request carries it.
 * An empty value with Max-Age=0 clears it.
 */
function sessionCookie(operator: OperatorAuth, value: string, maxAgeSeconds: number): string {
  return `${operator.cookieName()}=${value}; HttpOnly; SameSite=Strict; Path=/panel; Max-Age=${maxAgeSeconds}`;
}

/**
 * With an event store, the SDK puts the priming event in an SSE response before handing it over.
 * Its Node adapter, finding a first chunk ready, waits a timer tick for a second one (hoping to
 * send a small body with a Content-Length) — about a millisecond added to every call. An SSE
 * response is never small: declared chunked, it is streamed at once.
 */
function streamAtOnce(transport: StreamableHTTPServerTransport): void {
  type Handle = (request: Request, options?: unknown) => Promise<Response>;
  const web = (transport as unknown as { _webStandardTransport?: { handleRequest: Handle } })._webStandardTransport;
  if (!web) return;
  const handle = web.handleRequest.bind(web);
  web.handleRequest = async (request, options) => {
    const response = await handle(request, options);
    if (response.headers.get('content-type') === 'text/event-stream' && !response.headers.has('transfer-encoding'))
      response.headers.set('transfer-encoding', 'chunked');
    return response;
  };
}
