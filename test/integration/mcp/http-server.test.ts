/**
 * `startHubServer` in-process, as the Electron main and `uplink serve` use it: loopback only
 * unless explicitly allowed, mounts get every other path and upgrades, hub.json comes and goes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub } from '../../../src/main/hub';
import { startHubServer } from '../../../src/main/edges/http/server';
import type { HttpContext, HttpMount } from '../../../src/main/edges/http/types';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CALLER_HEADERS } from '../../../src/main/edges/http/server';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';

const hubs: Hub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

function hub(dir: string): Hub {
  const h = createHub({ dataDir: dir, drivers: [createTestDriver()] });
  hubs.push(h);
  return h;
}

describe('startHubServer', () => {
  it('relay headers claiming a pane never reach the driver: only the process the hub finds holding the connection does', async () => {
    const dir = tmpDataDir();
    const driver = createTestDriver();
    const h = createHub({ dataDir: dir, drivers: [driver] });
    hubs.push(h);
    const server = await startHubServer({ hub: h, dataDir: dir, announce: false });
    const claim = { [CALLER_HEADERS.tmux]: '/tmp/tmux-1000/default,4242,0', [CALLER_HEADERS.tmux_pane]: '%7' };
    /** The caller the driver heard for one session opened with these headers. */
    const callerWith = async (extra: Record<string, string>): Promise<unknown> => {
      const client = new Client({ name: 'operator', version: '1.0.0' });
      try {
        const headers = { authorization: `Bearer ${server.token}`, ...extra };
        await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }));
        const result = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } } });
        expect(result.isError).toBeFalsy();
        // The driver hears the credential's id (the hub token's `default`), never the declared client name.
        expect(driver.state.invoked.at(-1)).toMatchObject({ op: 'echo', agent: 'default' });
        return driver.state.invoked.at(-1)!.caller;
      } finally {
        await client.close();
      }
    };
    try {
      const linux = existsSync('/proc/net/tcp');
      // The claim only makes the hub look: this process holds the client's connection, so its pid
      // is what the driver gets; the claimed pane is dropped.
      expect(await callerWith(claim)).toEqual(linux ? { pid: process.pid } : {});
      expect(await callerWith({ ...claim, [CALLER_HEADERS.pid]: String(process.pid) })).toEqual(linux ? { pid: process.pid } : {});
      // A pid the connection does not belong to is no evidence: the caller is nobody known.
      expect(await callerWith({ ...claim, [CALLER_HEADERS.pid]: '1' })).toEqual({});
      // No claim: a caller from outside whose terminal is unknown (never the hub's own environment).
      expect(await callerWith({})).toEqual({});
    } finally {
      await server.close();
    }
  });

  it('refuses a non-loopback host unless explicitly allowed', async () => {
    const dir = tmpDataDir();
    await expect(startHubServer({ hub: hub(dir), dataDir: dir, host: '0.0.0.0' })).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 — hint: .*--host/);
  });

  it('offers other paths and upgrades to the mounts, with the token and origin checks in the context', async () => {
    const dir = tmpDataDir();
    let ctx: HttpContext | undefined;
    let upgraded = false;
    const mount: HttpMount = {
      handle(_req, res, url) {
        if (url.pathname !== '/panel/hello') return false;
        res.writeHead(200, { 'content-type': 'text/plain' }).end('hi');
        return true;
      },
      upgrade(_req, socket, _head, url) {
        if (url.pathname !== '/panel/ws') return false;
        upgraded = true;
        socket.end('HTTP/1.1 101 Switching Protocols\r\n\r\n');
        return true;
      },
    };
    const server = await startHubServer({
      hub: hub(dir),
      dataDir: dir,
      mounts: (c) => {
        ctx = c;
        return [mount];
      },
    });
    try {
      expect(await (await fetch(`${server.url}/panel/hello`)).text()).toBe('hi');
      expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
      expect(ctx!.origin()).toBe(server.url);
      expect(ctx!.originAllowed(undefined)).toBe(true);
      expect(ctx!.originAllowed(server.url)).toBe(true);
      expect(ctx!.originAllowed('http://evil.example')).toBe(false);
      expect(ctx!.tokenMatches(server.token)).toBe(true);
      expect(ctx!.tokenMatches('nope')).toBe(false);
      const answer = await new Promise<string>((resolve) => {
        const sock = connect(server.port, '127.0.0.1', () => {
          sock.write(`GET /panel/ws HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: ${server.url}\r\n\r\n`);
        });
        let data = '';
        sock.on('data', (d) => (data += d.toString()));
        sock.on('close', () => resolve(data));
      });
      expect(upgraded).toBe(true);
      expect(answer).toContain('101');
      expect(JSON.parse(readFileSync(join(dir, 'hub.json'), 'utf8'))).toMatchObject({ url: server.url, pid: process.pid });
    } finally {
      await server.close();
    }
    expect(existsSync(join(dir, 'hub.json'))).toBe(false);
  });

  it('a foreign-origin upgrade is refused before any mount sees it', async () => {
    const dir = tmpDataDir();
    let seen = false;
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false, mounts: [{ handle: () => false, upgrade: () => (seen = true) }] });
    try {
      await new Promise<void>((resolve) => {
        const sock = connect(server.port, '127.0.0.1', () => {
          sock.write(`GET /panel/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nOrigin: http://evil.example\r\n\r\n`);
        });
        sock.on('close', () => resolve());
        sock.on('error', () => resolve());
      });
      expect(seen).toBe(false);
    } finally {
      await server.close();
    }
  });
});

/** A raw HTTP request, so Host can be anything (fetch always sends the URL's). */
function rawRequest(
  port: number,
  opts: { path: string; method?: string; host: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: opts.path, method: opts.method ?? 'GET', headers: { host: opts.host, ...(opts.headers ?? {}) } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('HTTP hardening', () => {
  it('every route answers only requests whose Host names this hub (DNS rebinding)', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({
      hub: hub(dir),
      dataDir: dir,
      announce: false,
      mounts: [{ handle: (_q, res) => Boolean(res.writeHead(200).end('mounted')) }],
    });
    try {
      for (const path of ['/health', '/mcp', '/', '/panel/session', '/panel/code']) {
        const rebound = await rawRequest(server.port, {
          path,
          method: path === '/health' || path === '/' ? 'GET' : 'POST',
          host: `attacker.example:${server.port}`,
          headers: { authorization: `Bearer ${server.token}` },
        });
        expect(rebound.status, path).toBe(403);
        expect(rebound.body, path).toContain('is not this hub');
      }
      for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`]) {
        expect((await rawRequest(server.port, { path: '/health', host })).status, host).toBe(200);
      }
    } finally {
      await server.close();
    }
  });

  it('the 401 names no filesystem path', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false });
    try {
      const refused = await fetch(`${server.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: initialize });
      const message = ((await refused.json()) as { error: { message: string } }).error.message;
      expect(refused.status).toBe(401);
      expect(message).not.toContain(dir);
      expect(message).not.toMatch(/\/(root|home|tmp)\//);
      expect(message).toContain("the token file in Uplink's data directory");
    } finally {
      await server.close();
    }
  });

  it('the auth scheme is case-insensitive (RFC 7235)', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false });
    try {
      for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
        const ok = await fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { ...mcpHeaders, authorization: `${scheme} ${server.token}` },
          body: initialize,
        });
        expect(ok.status, scheme).toBe(200);
      }
    } finally {
      await server.close();
    }
  });

  it("past a credential's cap its own longest-idle MCP session goes; with all of them busy a new one gets 429 naming the cap", async () => {
    const dir = tmpDataDir();
    // 4 in all: 2 per credential, 1 kept for credentials that hold none.
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false, maxMcpSessions: 4 });
    const auth = { ...mcpHeaders, authorization: `Bearer ${server.token}` };
    const open = async (): Promise<string> => {
      const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
      expect(res.status).toBe(200);
      await res.text();
      return res.headers.get('mcp-session-id')!;
    };
    const ping = async (sid: string): Promise<number> => {
      const res = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      await res.text();
      return res.status;
    };
    const clients: Client[] = [];
    try {
      const a = await open();
      // b is used after a: the clock has moved on (eviction goes by last use).
      const aUsed = Date.now();
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(aUsed));
      const b = await open();
      await open();
      expect(await ping(a)).toBe(404);
      expect(await ping(b)).toBe(200);
      // SDK clients keep a GET stream open: their sessions are busy and are never evicted.
      let streams = 0;
      const counting: typeof fetch = async (url, init) => {
        const res = await fetch(url, init);
        if (init?.method === 'GET' && res.ok) streams++;
        return res;
      };
      for (let i = 0; i < 2; i++) {
        const c = new Client({ name: `busy-${i}`, version: '1' });
        await c.connect(
          new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
            fetch: counting,
            requestInit: { headers: { authorization: `Bearer ${server.token}` } },
          }),
        );
        clients.push(c);
      }
      await vi.waitFor(() => expect(streams).toBe(2), { timeout: 10_000 });
      const refused = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
        'uplink error [core:Unavailable]: credential default already has 2 MCP sessions open and busy, its cap (of 4 in all) — hint: close MCP clients of this credential you no longer use, or wait for one of its calls to end; each agent should connect with a token of its own, which the operator issues',
      );
      expect(await clients[0]!.ping()).toEqual({});
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    }
  });

  it('one credential holding its cap with long calls cannot lock out a named agent (default limits)', async () => {
    const dir = tmpDataDir();
    const driver = createTestDriver();
    const h = createHub({ dataDir: dir, drivers: [driver] });
    hubs.push(h);
    const server = await startHubServer({ hub: h, dataDir: dir, announce: false });
    const auth = { ...mcpHeaders, authorization: `Bearer ${server.token}` };
    const calls = new AbortController();
    const clients: Client[] = [];
    try {
      // The default token opens sessions and starts a long call in each, until the hub refuses.
      const CAP = 128;
      for (let i = 0; i < CAP; i++) {
        const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
        expect(res.status).toBe(200);
        await res.text();
        const sid = res.headers.get('mcp-session-id')!;
        const call = { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms: 60_000, timeout_ms: 60_000 } } };
        void fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: call }),
          signal: calls.signal,
        }).catch(() => undefined);
      }
      await vi.waitFor(() => expect(driver.state.invoked.filter((c) => c.op === 'slow')).toHaveLength(CAP), { timeout: 30_000 });
      const refused = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /^uplink error \[core:Unavailable\]: credential default already has 128 MCP sessions open and busy, its cap \(of 256 in all\) — hint: /,
      );

      // Named agents still connect and call, each with its own sessions.
      for (const name of ['builder', 'reviewer']) {
        const { token } = await h.createAgent(name, 'alice');
        const c = new Client({ name, version: '1' });
        await c.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
        clients.push(c);
        const result = await c.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: name } } });
        expect(result.isError).toBeFalsy();
        expect(driver.state.invoked.at(-1)).toMatchObject({ op: 'echo', agent: name });
      }
    } finally {
      calls.abort();
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    }
  }, 60_000);

  it('a burst of initializes never leaves a credential more sessions than its cap', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false, maxMcpSessions: 4 });
    const auth = { ...mcpHeaders, authorization: `Bearer ${server.token}` };
    try {
      const burst = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
          await res.text();
          return res.headers.get('mcp-session-id');
        }),
      );
      const live = [];
      for (const sid of burst.filter((x): x is string => x !== null)) {
        const res = await fetch(`${server.url}/mcp`, {
          method: 'POST',
          headers: { ...auth, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
        });
        await res.text();
        if (res.status === 200) live.push(sid);
      }
      // Its cap is 2: never more live at once, however the burst was interleaved.
      expect(live.length).toBeGreaterThan(0);
      expect(live.length).toBeLessThanOrEqual(2);
    } finally {
      await server.close();
    }
  });

  it('the last sessions are kept for credentials that hold none', async () => {
    const dir = tmpDataDir();
    const h = hub(dir);
    // 4 in all: 2 per credential, the last 1 kept for a credential that holds none.
    const server = await startHubServer({ hub: h, dataDir: dir, announce: false, maxMcpSessions: 4 });
    const clients: Client[] = [];
    // SDK clients keep a GET stream open: their sessions are busy and are never evicted.
    let streams = 0;
    const counting: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      if (init?.method === 'GET' && res.ok) streams++;
      return res;
    };
    const connect = async (token: string): Promise<number> => {
      const c = new Client({ name: 'busy', version: '1' });
      try {
        await c.connect(
          new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { fetch: counting, requestInit: { headers: { authorization: `Bearer ${token}` } } }),
        );
      } catch (e) {
        return (e as { code?: number }).code ?? -1;
      }
      clients.push(c);
      await c.ping();
      return 200;
    };
    // An initialize, as a raw request: the status and the line.
    const initializeAs = async (token: string): Promise<[number, string]> => {
      const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, authorization: `Bearer ${token}` }, body: initialize });
      const text = await res.text();
      return [res.status, res.status === 200 ? '' : (JSON.parse(text) as { error: { message: string } }).error.message];
    };
    try {
      const alice = (await h.createAgent('alice', 'op')).token;
      const bob = (await h.createAgent('bob', 'op')).token;
      const carol = (await h.createAgent('carol', 'op')).token;
      expect(await connect(server.token)).toBe(200);
      expect(await connect(server.token)).toBe(200);
      expect(await connect(alice)).toBe(200);
      await vi.waitFor(() => expect(streams).toBe(3), { timeout: 10_000 });
      // Every session is busy. Alice holds one, so the last is not hers.
      expect(await initializeAs(alice)).toEqual([
        503,
        'uplink error [core:Unavailable]: 3 of 4 MCP sessions are open and busy, and the last 1 are kept for agents that hold none — hint: retry in a moment, or close MCP clients of credential alice you no longer use',
      ]);
      // Bob holds none: he gets it.
      expect(await connect(bob)).toBe(200);
      await vi.waitFor(() => expect(streams).toBe(4), { timeout: 10_000 });
      // Now every session is busy: a newcomer is told so.
      expect(await initializeAs(carol)).toEqual([
        503,
        'uplink error [core:Unavailable]: all 4 MCP sessions are open and busy — hint: retry in a moment, or close MCP clients you no longer use',
      ]);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await server.close();
    }
  });

  it('an idle MCP session expires', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false, mcpSessionIdleMs: 100 });
    try {
      const auth = { ...mcpHeaders, authorization: `Bearer ${server.token}` };
      const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
      await res.text();
      const sid = res.headers.get('mcp-session-id')!;
      // Idleness is the condition: a probe would be a use and keep the session alive.
      await new Promise((r) => setTimeout(r, 400));
      const late = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      expect(late.status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('JSON-RPC error codes on /mcp', () => {
  it('an unparsable body is -32700, a request before initialize or a broken initialize -32600, an unknown method -32601; each message one line with a hint', async () => {
    const dir = tmpDataDir();
    const server = await startHubServer({ hub: hub(dir), dataDir: dir, announce: false });
    const auth = { ...mcpHeaders, authorization: `Bearer ${server.token}` };
    const post = async (body: string, headers: Record<string, string> = {}): Promise<{ status: number; error?: { code: number; message: string } }> => {
      const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...auth, ...headers }, body });
      const text = await res.text();
      // A session's answers may come as one SSE event.
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
      const { error } = JSON.parse(json) as { error?: { code: number; message: string } };
      return { status: res.status, ...(error ? { error } : {}) };
    };
    try {
      const garbled = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(garbled).toEqual({
        status: 400,
        error: {
          code: -32700,
          message: 'uplink error [core:Invalid]: Parse error: the request body is not valid JSON — hint: send one JSON-RPC message per request',
        },
      });

      const early = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover' }));
      expect(early).toEqual({
        status: 400,
        error: {
          code: -32600,
          message: 'uplink error [core:Invalid]: Bad Request: Server not initialized — hint: send initialize first, without an Mcp-Session-Id header',
        },
      });
      const noVersion = await post(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
      );
      expect(noVersion.status).toBe(400);
      expect(noVersion.error?.code).toBe(-32600);
      expect(noVersion.error?.message).toMatch(/^uplink error \[core:Invalid\]: Invalid Request: initialize needs params with protocolVersion.* — hint: /);

      const init = await fetch(`${server.url}/mcp`, { method: 'POST', headers: auth, body: initialize });
      await init.text();
      const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
      expect(await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover' }), session)).toMatchObject({ status: 200, error: { code: -32601 } });
      expect((await post('not json at all', session)).error?.code).toBe(-32700);
    } finally {
      await server.close();
    }
  });
});
