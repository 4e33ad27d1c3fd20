/** `hub.json`: a running hub is announced by a live pid and an answering `/health`. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRunningHub } from '../../../src/main/edges/http/hub-json';

const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function healthServer(): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ app: 'uplink', ok: true })));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function announce(url: string, pid: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-hubjson-'));
  writeFileSync(join(dir, 'hub.json'), JSON.stringify({ url, pid, started_at: new Date().toISOString() }));
  return dir;
}

describe('findRunningHub', () => {
  it('finds a hub whose pid lives and whose /health answers', async () => {
    expect(await findRunningHub(announce(await healthServer(), process.pid))).toMatchObject({ pid: process.pid });
  });

  it('a pid of 0 or below is nobody, even where something answers (kill(0) would signal our own group)', async () => {
    const url = await healthServer();
    expect(await findRunningHub(announce(url, 0))).toBeUndefined();
    expect(await findRunningHub(announce(url, -1))).toBeUndefined();
  });
});
