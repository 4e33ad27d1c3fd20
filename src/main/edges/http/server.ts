/**
 * The hub's one HTTP server (used by `uplink serve` and the Electron main): Streamable HTTP MCP at
 * `/mcp` (bearer token, Origin check, no CORS), `/health` for liveness, and the mounts (the panel).
 * Listens on 127.0.0.1 unless the caller explicitly allows another host.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { HubError } from '../../hub';
import type { AgentCredential, Hub } from '../../hub';
import type { CallerEnvironment } from '../../drivers/contract';
import { createMcpServer } from '../mcp/server';
import { announceHub, retractHub } from './hub-json';
import { ensureToken, tokenMatches } from './token';
import type { HttpContext, HttpMount } from './types';

/** An MCP session idle this long (no request in flight) is closed. */
const SESSION_IDLE_MS = 30 * 60_000;

/** One Streamable HTTP MCP session. */
interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
  inflight: number;
  /** The agent that opened it. */
  agent_id: string;
}

/** Headers `uplink mcp` sets when it relays an agent to this hub: where that agent runs. */
export const CALLER_HEADERS = { tmux: 'x-uplink-tmux', tmux_pane: 'x-uplink-tmux-pane' } as const;

/** The relayed agent's `$TMUX`/`$TMUX_PANE`, if sent (drivers verify them before use). */
function callerFrom(req: IncomingMessage): CallerEnvironment | undefined {
  const caller: CallerEnvironment = {};
  for (const [key, header] of Object.entries(CALLER_HEADERS) as Array<[keyof CallerEnvironment, string]>) {
    const value = req.headers[header];
    if (typeof value === 'string' && value.length > 0 && value.length <= 4096) caller[key] = value;
  }
  return Object.keys(caller).length ? caller : undefined;
}

/** Largest request body accepted on `/mcp`. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

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
}

/** A running hub server. */
export interface HubServer {
  /** e.g. `http://127.0.0.1:7420` */
  url: string;
  port: number;
  mcpUrl: string;
  /** The panel URL with the token in the fragment (never sent to a server or a Referer). */
  panelUrl: string;
  token: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function sendError(res: ServerResponse, status: number, kind: 'Rejected' | 'Invalid' | 'NotFound' | 'Unavailable', message: string, hint: string, headers: Record<string, string> = {}): HubError {
  const err = new HubError('core', kind, message, { hint });
  const text = err.rendered;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: text }, id: null }));
  return err;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw Object.assign(new Error('too large'), { status: 413 });
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
  if (!LOOPBACK.has(host) && !options.allowNonLoopback) {
    throw new Error(`refusing to listen on ${host} — hint: Uplink listens on 127.0.0.1 only unless you pass --host explicitly`);
  }
  const token = ensureToken(options.dataDir);
  let origin = '';
  let port = 0;
  const ownOrigins = (): string[] => [origin, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`];
  const ctx: HttpContext = {
    hub: options.hub,
    token,
    origin: () => origin,
    originAllowed: (o) => o === undefined || ownOrigins().includes(o),
    tokenMatches: (c) => tokenMatches(token, c),
  };
  const sessions = new Map<string, McpSession>();
  // Clients that vanish without DELETE would leak their session: close idle ones.
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) {
      if (s.inflight === 0 && now - s.lastSeen > SESSION_IDLE_MS) {
        sessions.delete(id);
        void s.server.close().catch(() => undefined);
      }
    }
  }, 60_000);
  sweeper.unref();
  const serve = (s: McpSession, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> => {
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
    options.hub.recordRejected({ agent: { kind: 'mcp', name: 'http-client' } }, new HubError('core', err.kind, message, { ...(err.hint ? { hint: err.hint } : {}) }));
  };
  let mounts: HttpMount[] = [];

  /** Who a bearer token is: the data dir's default MCP token, or a named agent's (not revoked). */
  const authenticate = (bearer: string | undefined): AgentCredential | undefined =>
    ctx.tokenMatches(bearer) ? { id: 'default' } : options.hub.authenticateAgent(bearer);

  const handleMcp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined;
    const credential = authenticate(bearer);
    if (!credential) {
      const err = sendError(res, 401, 'Rejected', 'missing, wrong or revoked bearer token', `send Authorization: Bearer <the token in ${options.dataDir}/token, or a named agent's from \`uplink agents create\`>`, { 'www-authenticate': 'Bearer' });
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
        const err = sendError(res, status, 'Invalid', status === 413 ? `request body over ${MAX_BODY_BYTES} bytes` : 'request body is not valid JSON', 'send one JSON-RPC message per request');
        audit(`HTTP ${status} on /mcp: ${err.message}`, err);
        return;
      }
      const existing = owned(sessionId ? sessions.get(sessionId) : undefined);
      if (existing) return serve(existing, req, res, body);
      if (sessionId) return void sendError(res, 404, 'NotFound', `unknown MCP session ${sessionId}`, 'initialize a new session');
      if (!isInitializeRequest(body)) return void sendError(res, 400, 'Invalid', 'no MCP session: the first request must be initialize', 'initialize first');
      const grantsKey = randomUUID();
      const server = createMcpServer(options.hub, credential, grantsKey, callerFrom(req));
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, session),
      });
      const session: McpSession = { transport, server, lastSeen: Date.now(), inflight: 0, agent_id: credential.id };
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return serve(session, req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const existing = owned(sessionId ? sessions.get(sessionId) : undefined);
      if (!existing) return void sendError(res, sessionId ? 404 : 400, 'NotFound', 'unknown or missing MCP session', 'initialize a new session');
      return serve(existing, req, res);
    }
    res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
  };

  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin || 'http://127.0.0.1');
      // Browsers send Origin on cross-site requests; only the hub's own origin may talk to it.
      const o = req.headers.origin;
      if (!ctx.originAllowed(o)) {
        const err = sendError(res, 403, 'Rejected', `origin ${o} is not allowed`, `only ${origin} may call this hub`);
        audit(`HTTP 403 on ${url.pathname}: foreign origin ${String(o).slice(0, 200)}`, err);
        return;
      }
      if (url.pathname === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ app: 'uplink', ok: true }));
        return;
      }
      if (url.pathname === '/mcp') return handleMcp(req, res);
      for (const m of mounts) if (await m.handle(req, res, url)) return;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    })().catch(() => {
      if (!res.headersSent) sendError(res, 500, 'Unavailable', 'the hub failed to handle the request', 'retry; see `uplink doctor`');
      else res.end();
    });
  });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', origin || 'http://127.0.0.1');
    if (!ctx.originAllowed(req.headers.origin)) return void socket.destroy();
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
  mounts = typeof options.mounts === 'function' ? await options.mounts(ctx) : (options.mounts ?? []);
  if (options.announce !== false) announceHub(options.dataDir, origin);

  let closed = false;
  return {
    url: origin,
    port,
    mcpUrl: `${origin}/mcp`,
    panelUrl: `${origin}/#token=${token}`,
    token,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweeper);
      if (options.announce !== false) retractHub(options.dataDir);
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
      await Promise.all(mounts.map((m) => m.dispose?.().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
