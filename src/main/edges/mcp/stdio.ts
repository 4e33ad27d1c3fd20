/**
 * `uplink mcp`: MCP over stdio. When a hub of this data dir is running (hub.json + liveness), the
 * JSON-RPC messages are relayed to its `/mcp` endpoint so approvals reach its panel and the
 * client's initialize (name/version) reaches it unchanged; the bearer is `$UPLINK_AGENT_TOKEN` (a
 * named agent's token) when set, else the data dir's default token. Otherwise an embedded headless hub
 * serves the session: read-only ops run, mutating ones are denied with the hint.
 */
import { randomUUID } from 'node:crypto';
import { isJSONRPCRequest, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { createHub, loadDrivers, renderDriverError } from '../../hub';
import type { LoadDrivers } from '../../hub';
import { findRunningHub } from '../http/hub-json';
import { CALLER_HEADERS } from '../http/server';
import { ensureToken } from '../../hub';
import { connectMcp, createMcpServer, SERVER_INFO } from './server';
import { LineStdioTransport } from './stdio-transport';

/** Serves MCP on stdin/stdout until stdin closes (an embedded hub runs `drivers`); resolves with the exit code. */
export async function runStdioMcp(dataDir: string, drivers: LoadDrivers = loadDrivers): Promise<number> {
  const running = await findRunningHub(dataDir);
  if (running) return relay(dataDir);
  const hub = await createHub({ dataDir, drivers: await drivers(dataDir) });
  // No credential crosses stdio: the client is whoever started this process.
  const server = createMcpServer(hub, { id: 'stdio' });
  const transport = new LineStdioTransport();
  // A client stops its server by closing stdin or by a signal: either way the hub closes, so
  // queued audit entries commit and the journal goes away (a kill -9 leaves it for replay).
  let stop: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (stop = resolve));
  server.onclose = stop;
  process.stdin.once('end', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await connectMcp(server, transport);
  await closed;
  process.removeListener('SIGTERM', stop);
  process.removeListener('SIGINT', stop);
  await server.close().catch(() => undefined);
  await hub.close();
  return 0;
}

/** A session of the relay with the running hub. */
interface HubSession {
  url: URL;
  id: string;
  protocol_version: string;
  /** The hub's answer to initialize, for the client. */
  result: Record<string, unknown>;
}

/** A JSON-RPC error for the client: the hub's own, or one line of ours. */
class RelayError extends Error {
  constructor(readonly rpc: { code: number; message: string; data?: unknown }) {
    super(rpc.message);
  }
}

const unavailable = (message: string, hint: string): RelayError =>
  new RelayError({ code: -32603, message: renderDriverError('core', { kind: 'Unavailable', message, hint }) });

/** Where an SSE answer got to: its last event id and the reconnect delay the hub asked for. */
interface StreamCursor {
  last_event_id?: string;
  retry_ms?: number;
}

/**
 * Every JSON-RPC message of a `/mcp` answer: one JSON body, or the `data` of SSE message events.
 * Stops reading once `done()` says so (a resumed stream may stay open after the answer).
 */
async function readMessages(res: Response, on: (message: JSONRPCMessage) => void, cursor: StreamCursor = {}, done: () => boolean = () => false): Promise<void> {
  const emit = (data: string): void => {
    try {
      const parsed = JSON.parse(data) as JSONRPCMessage | JSONRPCMessage[];
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) on(m);
    } catch {
      // Not JSON-RPC: nothing the client could use.
    }
  };
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await res.text();
    if (text) emit(text);
    return;
  }
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = res.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    buffer = (buffer + decoder.decode(chunk.value, { stream: true })).replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const event = lines
        .find((l) => l.startsWith('event:'))
        ?.slice(6)
        .trim();
      const id = lines
        .find((l) => l.startsWith('id:'))
        ?.slice(3)
        .trim();
      const retry = Number(
        lines
          .find((l) => l.startsWith('retry:'))
          ?.slice(6)
          .trim(),
      );
      if (id) cursor.last_event_id = id;
      if (Number.isInteger(retry) && retry >= 0) cursor.retry_ms = Math.min(retry, MAX_RESUME_DELAY_MS);
      const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
      if (data.length && (!event || event === 'message')) emit(data.join('\n'));
      if (done()) return void (await reader.cancel().catch(() => undefined));
    }
  }
}

/** How often the relay reconnects a dropped answer stream, and the longest it waits before one. */
const RESUME_ATTEMPTS = 3;
const MAX_RESUME_DELAY_MS = 5000;

/** Whether fetch failed before any hub took the request (nothing ran). */
function neverReached(e: unknown): boolean {
  const code = (e as { cause?: { code?: string } }).cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EADDRNOTAVAIL';
}

/**
 * Relays stdio ↔ the running hub's `/mcp`, one POST per message, without interpreting the calls.
 * It owns the hub session: it opens it with the client's own initialize params and opens a new one
 * with them whenever the hub forgets it (a restarted hub, an idle session swept), so a client keeps
 * working across hub restarts with the same identity (same bearer, same client name).
 */
async function relay(dataDir: string): Promise<number> {
  // A named agent authenticates with its own token; otherwise the data dir's default one.
  const token = process.env.UPLINK_AGENT_TOKEN?.trim() || ensureToken(dataDir);
  const stdio = new LineStdioTransport();
  // The running hub's drivers cannot see this process's environment. Inside tmux, the relay asks
  // the hub to locate it: the hub believes none of these headers, but checks which process holds
  // the connection (this one, whose pid it looks at first) and the driver finds the pane holding
  // that process — so envelopes, replies and the own-pane guard refer to the agent's own pane.
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (process.env.TMUX) headers[CALLER_HEADERS.tmux] = process.env.TMUX;
  if (process.env.TMUX_PANE) headers[CALLER_HEADERS.tmux_pane] = process.env.TMUX_PANE;
  if (process.env.TMUX || process.env.TMUX_PANE) headers[CALLER_HEADERS.pid] = String(process.pid);
  const reply = (message: JSONRPCMessage): void => void stdio.send(message).catch(() => undefined);
  const noHub = (hint: string): RelayError => unavailable(`no Uplink hub is running for ${dataDir}`, hint);
  const post = (url: URL, message: unknown, s?: HubSession, signal?: AbortSignal): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: { ...headers, ...(s ? { 'mcp-session-id': s.id, 'mcp-protocol-version': s.protocol_version } : {}) },
      body: JSON.stringify(message),
      ...(signal ? { signal } : {}),
    });
  /** The hub's JSON-RPC error in a refused answer (its body), else one line naming the status. */
  const refusal = async (res: Response): Promise<RelayError> => {
    const body = (await res.json().catch(() => undefined)) as { error?: { code: number; message: string } } | undefined;
    return new RelayError(
      body?.error ?? {
        code: -32603,
        message: renderDriverError('core', { kind: 'Unavailable', message: `the hub at ${res.url} answered HTTP ${res.status}`, hint: 'run `uplink doctor`' }),
      },
    );
  };

  /** The client's initialize params; before it sends them (a probe), the relay's own. */
  let initParams: unknown;
  let session: Promise<HubSession> | undefined;
  const open = async (): Promise<HubSession> => {
    const running = await findRunningHub(dataDir);
    if (!running) throw noHub('start `uplink serve` (or the desktop app) for this data directory, then retry');
    const url = new URL('/mcp', running.url);
    const params = initParams ?? {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'uplink-mcp', version: SERVER_INFO.version },
    };
    const id = `uplink-relay-${randomUUID()}`;
    const res = await post(url, { jsonrpc: '2.0', id, method: 'initialize', params }).catch((e: unknown) => {
      throw neverReached(e) ? noHub('start `uplink serve` (or the desktop app) for this data directory, then retry') : e;
    });
    if (!res.ok) throw await refusal(res);
    let answer: { result?: Record<string, unknown>; error?: RelayError['rpc'] } | undefined;
    await readMessages(res, (m) => {
      if ((m as { id?: unknown }).id === id) answer = m as typeof answer;
    });
    const sid = res.headers.get('mcp-session-id');
    if (answer?.error) throw new RelayError(answer.error);
    if (!answer?.result || !sid)
      throw unavailable(`the hub at ${running.url} did not open an MCP session`, 'run `uplink doctor`; restart `uplink serve` if it persists');
    const s: HubSession = { url, id: sid, protocol_version: String(answer.result.protocolVersion), result: answer.result };
    await (await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, s)).body?.cancel();
    return s;
  };
  const current = (): Promise<HubSession> => {
    const opening = (session ??= open());
    // A failed open is not kept: the next message tries again.
    opening.catch(() => {
      if (session === opening) session = undefined;
    });
    return opening;
  };
  const renew = (stale: Promise<HubSession>): Promise<HubSession> => {
    if (session === stale) session = undefined;
    return current();
  };
  const close = async (s: Promise<HubSession> | undefined): Promise<void> =>
    s
      ?.then((x) => fetch(x.url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': x.id }, signal: AbortSignal.timeout(1000) }))
      .then((r) => r.body?.cancel())
      .catch(() => undefined);

  /** Forwards one request; a hub that forgot the session (or is not there) gets a new session and the request once more. */
  const forward = async (request: JSONRPCRequest): Promise<void> => {
    let opening = current();
    for (let attempt = 0; ; attempt++) {
      const s = await opening;
      let res: Response;
      try {
        res = await post(s.url, request, s);
      } catch (e) {
        if (attempt > 0 || !neverReached(e)) throw await stoppedMidCall(opening);
        opening = renew(opening);
        continue;
      }
      if (res.status === 404 && attempt === 0) {
        await res.body?.cancel();
        opening = renew(opening);
        continue;
      }
      if (!res.ok) throw await refusal(res);
      let answered = false;
      const take = (m: JSONRPCMessage): void => {
        if ((m as { id?: unknown }).id === request.id && !('method' in m)) answered = true;
        reply(m);
      };
      const cursor: StreamCursor = {};
      await readMessages(res, take, cursor, () => answered).catch(() => undefined);
      // A stream that dropped after an event id can be picked up where it stopped: the hub keeps
      // what it sent since, the answer included.
      for (let i = 0; !answered && cursor.last_event_id !== undefined && i < RESUME_ATTEMPTS; i++) {
        await new Promise((r) => setTimeout(r, cursor.retry_ms ?? 1000));
        const { 'content-type': _, ...base } = headers;
        const again = await fetch(s.url, {
          headers: {
            ...base,
            accept: 'text/event-stream',
            'mcp-session-id': s.id,
            'mcp-protocol-version': s.protocol_version,
            'last-event-id': cursor.last_event_id,
          },
        }).catch((e: unknown) => (neverReached(e) ? null : undefined));
        // null: nobody listens, so the hub is gone with what it kept; a hub that refuses (a
        // forgotten session or cursor) will not change its mind on a second ask.
        if (again === null || (again && !again.ok)) {
          await again?.body?.cancel();
          break;
        }
        if (again) await readMessages(again, take, cursor, () => answered).catch(() => undefined);
      }
      if (!answered) throw await stoppedMidCall(opening);
      return;
    }
  };
  /** The hub went away while it had the request: it may have run, and the agent must not guess. */
  const stoppedMidCall = async (opening: Promise<HubSession>): Promise<RelayError> => {
    if (session === opening) session = undefined;
    const running = await findRunningHub(dataDir);
    if (!running) return noHub('the call may have run (see `uplink log`); start `uplink serve` (or the desktop app), then retry only if it did not');
    return unavailable(`the hub restarted before answering`, 'the call may have run (see `uplink log`); retry only if it did not');
  };

  stdio.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message)) {
      let answer: Promise<void>;
      if (message.method === 'initialize') {
        initParams = message.params;
        const before = session;
        session = undefined;
        void close(before);
        answer = current().then((s) => reply({ jsonrpc: '2.0', id: message.id, result: s.result }));
      } else answer = forward(message);
      answer.catch((e: unknown) => {
        const rpc =
          e instanceof RelayError
            ? e.rpc
            : unavailable(`the running hub did not answer (${(e as Error).message})`, 'the call may have run (see `uplink log`); run `uplink doctor`').rpc;
        reply({ jsonrpc: '2.0', id: message.id, error: rpc });
      });
      return;
    }
    // The relay told the hub itself when the session opened.
    if ((message as { method?: string }).method === 'notifications/initialized') return;
    // Notifications (a cancel) and answers to the hub's requests go to the session there is.
    const s = session;
    void s
      ?.then((x) => post(x.url, message, x))
      .then((r) => r.body?.cancel())
      .catch(() => undefined);
  };
  let done: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (done = resolve));
  stdio.onclose = () => done();
  process.stdin.once('end', () => done());
  await stdio.start();
  await closed;
  // The hub forgets the session now rather than after its idle timeout (bounded by the DELETE's own).
  await close(session);
  return 0;
}
