/**
 * Resumable Streamable HTTP: the real SDK client loses its SSE stream in the middle of a call
 * (its connection is cut), reconnects with Last-Event-ID and still gets the answer; an unknown
 * cursor is refused in one line; a session's kept events go when the session does; `uplink mcp`
 * picks up its own dropped stream the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createHub } from '../../../src/main/hub/hub-core';
import { startHubServer } from '../../../src/main/edges/http/server';
import type { HubServer } from '../../../src/main/edges/http/server';
import { EventBuffer } from '../../../src/main/edges/http/event-store';
import { createTestDriver } from '../../fixtures/test-driver';
import { buildForTests, cliEnv, ROOT, tmpDataDir, waitFor } from '../../fixtures/hub-build';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function serve(events = new EventBuffer()): Promise<HubServer> {
  const dir = tmpDataDir();
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()], progressIntervalMs: 100 });
  const server = await startHubServer({ hub, dataDir: dir, announce: false, mcpEvents: events });
  cleanup.push(async () => {
    await server.close();
    await hub.close();
  });
  return server;
}

/** A client whose next `tools/call` connection can be cut, and the GETs it reconnects with. */
async function cuttableClient(
  server: HubServer,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; cut: () => void; resumedWith: string[] }> {
  let cutCall: AbortController | undefined;
  const resumedWith: string[] = [];
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    fetch: async (url, init) => {
      const headers = new Headers(init?.headers);
      const lastEventId = headers.get('last-event-id');
      if (init?.method === 'GET' && lastEventId) resumedWith.push(lastEventId);
      if (init?.method === 'POST' && String(init.body).includes('"tools/call"')) {
        cutCall = new AbortController();
        return fetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, cutCall.signal]) : cutCall.signal });
      }
      return fetch(url, init);
    },
  });
  const client = new Client({ name: 'resuming-agent', version: '1.0.0' });
  await client.connect(transport);
  cleanup.push(() => client.close());
  return { client, transport, cut: () => cutCall?.abort(), resumedWith };
}

describe('resumable Streamable HTTP', () => {
  it.each([
    ['is still running when the client reconnects', 2000],
    ['answered while the client was away', 400],
  ])('a call whose stream is cut at its first progress gets its answer after the client resumes: the call %s', async (_when, ms) => {
    const server = await serve();
    const { client, cut, resumedWith } = await cuttableClient(server);
    const progress: number[] = [];
    const result = (await client.callTool(
      { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms, timeout_ms: 10_000 } } },
      undefined,
      {
        onprogress: (p) => {
          if (progress.push(p.progress) === 1) cut();
        },
        timeout: 15_000,
      },
    )) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain(`"waited\\":${ms}`);
    expect(resumedWith).toHaveLength(1);
    // The same session goes on.
    expect(
      (await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'still here' } } })).isError,
    ).toBeFalsy();
  });

  it('SSE events carry ids, and the stream opens with a priming event that tells the client when to retry', async () => {
    const server = await serve();
    const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(server.mcpUrl, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    });
    const text = await init.text();
    expect(text).toMatch(/^id: \d+\nretry: 1000\ndata: \n\n/);
    expect(text).toMatch(/event: message\nid: \d+\ndata: \{"result"/);
  });

  it('a Last-Event-ID the session does not hold is refused in one line with a hint', async () => {
    const server = await serve();
    const { client, transport } = await cuttableClient(server);
    await client.listTools();
    const res = await fetch(server.mcpUrl, {
      headers: {
        authorization: `Bearer ${server.token}`,
        accept: 'text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': '999999',
      },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      'uplink error [core:NotFound]: cannot resume after event 999999: this session no longer holds it — hint: the hub keeps a bounded tail of each stream; send the request again (a call that was answered meanwhile is in `uplink log`)',
    );
  });

  it("a session's kept events are freed when it closes (DELETE) or idles out", async () => {
    const events = new EventBuffer();
    const server = await serve(events);
    const { client, transport } = await cuttableClient(server);
    await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'kept for a resume' } } });
    expect(events.size.events).toBeGreaterThan(0);
    await transport.terminateSession();
    expect(events.size).toEqual({ events: 0, bytes: 0 });

    const dir = tmpDataDir();
    const hub = createHub({ dataDir: dir, drivers: [createTestDriver()] });
    const idling = await startHubServer({ hub, dataDir: dir, announce: false, mcpEvents: events, mcpSessionIdleMs: 100 });
    cleanup.push(async () => {
      await idling.close();
      await hub.close();
    });
    const idle = await cuttableClient(idling);
    await idle.client.listTools();
    expect(events.size.events).toBeGreaterThan(0);
    // A client that vanishes without DELETE.
    await idle.client.close();
    await waitFor(() => events.size.events === 0, 5000);
  });
});

/**
 * An HTTP proxy in front of the hub that can cut the connections of the next `tools/call` once
 * progress went through (both sides, as a network drop would).
 */
async function cuttingProxy(target: HubServer): Promise<{ url: string; cuts: () => number }> {
  let cuts = 0;
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const up = request(`${target.url}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(target.url).host } }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        const cutting = cuts === 0 && body.includes('"tools/call"');
        upRes.on('data', (c: Buffer) => {
          res.write(c);
          if (cutting && c.includes('notifications/progress') && cuts === 0) {
            cuts++;
            upRes.destroy();
            res.socket?.destroy();
          }
        });
        upRes.on('end', () => res.end());
      });
      up.on('error', () => res.socket?.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => proxy.close(() => r())));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, cuts: () => cuts };
}

describe('uplink mcp relaying to a running hub', () => {
  it('resumes its stream to the hub after a drop mid-call, so the agent gets the answer instead of an error', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const hub = createHub({ dataDir: dir, drivers: [createTestDriver()], progressIntervalMs: 100 });
    const server = await startHubServer({ hub, dataDir: dir, announce: false });
    cleanup.push(async () => {
      await server.close();
      await hub.close();
    });
    const proxy = await cuttingProxy(server);
    // The relay finds the hub through hub.json: point it at the proxy.
    writeFileSync(join(dir, 'hub.json'), JSON.stringify({ url: proxy.url, pid: process.pid, started_at: new Date().toISOString() }));
    const client = new Client({ name: 'relayed-agent', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [b.launcher, 'mcp'],
        env: cliEnv(b, dir) as Record<string, string>,
        cwd: ROOT,
        stderr: 'pipe',
      }),
    );
    cleanup.push(() => client.close());
    const progress: string[] = [];
    const result = (await client.callTool(
      { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms: 1500, timeout_ms: 10_000 } } },
      undefined,
      {
        onprogress: (p) => void progress.push(p.message ?? ''),
        timeout: 20_000,
      },
    )) as CallToolResult;
    expect(proxy.cuts()).toBe(1);
    expect(result.isError).toBeFalsy();
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual({ waited: 1500 });
    expect(progress.length).toBeGreaterThan(1);
  });
});
