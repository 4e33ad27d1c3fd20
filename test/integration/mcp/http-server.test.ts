/**
 * `startHubServer` in-process, as the Electron main and `uplink serve` use it: loopback only
 * unless explicitly allowed, mounts get every other path and upgrades, hub.json comes and goes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createHub } from '../../../src/main/hub';
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
  it("a relayed agent's own tmux pane (uplink mcp's headers) reaches the driver with each call", async () => {
    const dir = tmpDataDir();
    const driver = createTestDriver();
    const h = createHub({ dataDir: dir, drivers: [driver] });
    hubs.push(h);
    const server = await startHubServer({ hub: h, dataDir: dir, announce: false });
    const headers = { authorization: `Bearer ${server.token}`, [CALLER_HEADERS.tmux]: '/tmp/tmux-1000/default,4242,0', [CALLER_HEADERS.tmux_pane]: '%7' };
    const client = new Client({ name: 'relayed-agent', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }));
      const result = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } } });
      expect(result.isError).toBeFalsy();
      expect(driver.state.invoked.at(-1)).toMatchObject({ op: 'echo', agent: 'relayed-agent', caller: { tmux: '/tmp/tmux-1000/default,4242,0', tmux_pane: '%7' } });
    } finally {
      await client.close();
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
