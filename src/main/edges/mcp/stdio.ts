/**
 * `uplink mcp`: MCP over stdio. When a hub of this data dir is running (hub.json + liveness), the
 * JSON-RPC messages are relayed to its `/mcp` endpoint so approvals reach its panel and the
 * client's initialize (name/version) reaches it unchanged; the bearer is `$UPLINK_AGENT_TOKEN` (a
 * named agent's token) when set, else the data dir's default token. Otherwise an embedded headless hub
 * serves the session: read-only ops run, mutating ones are denied with the hint.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createHub, loadDrivers, renderDriverError } from '../../hub';
import { findRunningHub } from '../http/hub-json';
import { CALLER_HEADERS } from '../http/server';
import { ensureToken } from '../http/token';
import { createMcpServer } from './server';

/** Serves MCP on stdin/stdout until stdin closes; resolves with the exit code. */
export async function runStdioMcp(dataDir: string): Promise<number> {
  const running = await findRunningHub(dataDir);
  if (running) return relay(dataDir, new URL('/mcp', running.url));
  const hub = await createHub({ dataDir, drivers: await loadDrivers(dataDir) });
  // No credential crosses stdio: the client is whoever started this process.
  const server = createMcpServer(hub, { id: 'stdio' });
  const transport = new StdioServerTransport();
  // A client stops its server by closing stdin or by a signal: either way the hub closes, so
  // queued audit entries commit and the journal goes away (a kill -9 leaves it for replay).
  let stop: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (stop = resolve));
  server.onclose = stop;
  process.stdin.once('end', stop);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await server.connect(transport);
  await closed;
  process.removeListener('SIGTERM', stop);
  process.removeListener('SIGINT', stop);
  await server.close().catch(() => undefined);
  await hub.close();
  return 0;
}

/** Relays stdio ↔ Streamable HTTP without interpreting the messages (beyond the protocol version). */
async function relay(dataDir: string, url: URL): Promise<number> {
  // A named agent authenticates with its own token; otherwise the data dir's default one.
  const token = process.env.UPLINK_AGENT_TOKEN?.trim() || ensureToken(dataDir);
  const stdio = new StdioServerTransport();
  // The running hub's drivers cannot see this process's environment: say where the agent runs
  // (its own tmux pane), so envelopes, replies and the own-pane guard refer to the agent's pane.
  const caller: Record<string, string> = {};
  if (process.env.TMUX) caller[CALLER_HEADERS.tmux] = process.env.TMUX;
  if (process.env.TMUX_PANE) caller[CALLER_HEADERS.tmux_pane] = process.env.TMUX_PANE;
  const http = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}`, ...caller } } });
  const initIds = new Set<string | number>();
  let done: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (done = resolve));

  stdio.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') initIds.add(message.id);
    http.send(message).catch((e: unknown) => {
      if (!isJSONRPCRequest(message)) return;
      const text = renderDriverError('core', { kind: 'Unavailable', message: `the running hub at ${url.origin} did not answer (${(e as Error).message})`, hint: 'restart `uplink serve` or the desktop app, then reconnect' });
      void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: text } });
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    const m = message as { id?: string | number; result?: { protocolVersion?: string } };
    if (m.id !== undefined && initIds.has(m.id) && m.result?.protocolVersion) {
      initIds.delete(m.id);
      http.setProtocolVersion(m.result.protocolVersion);
    }
    void stdio.send(message).catch(() => undefined);
  };
  stdio.onclose = () => done();
  http.onerror = () => undefined;
  process.stdin.once('end', () => done());
  await http.start();
  await stdio.start();
  await closed;
  await http.terminateSession().catch(() => undefined);
  await http.close().catch(() => undefined);
  return 0;
}
