/**
 * Panel sessions outlive the hub: a browser that signed in before a restart is let in by the next
 * hub of the same data directory and port, from hashes the hub wrote down (never the secrets);
 * sessions end when idle, at their absolute lifetime, on sign-out and on `--revoke-all`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { createHub } from '../../../src/main/hub/hub-core';
import { startHubServer } from '../../../src/main/edges/http/server';
import type { HubServer } from '../../../src/main/edges/http/server';
import { createOperatorAuth, panelSessionsPath, SESSION_IDLE_MS, SESSION_TTL_MS } from '../../../src/main/hub/credentials/operator';
import { createPanelMount } from '../../../src/main/edges/panel';
import { CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import type { ServerFrame } from '../../../src/shared/panel-ws';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir, waitFor } from '../../fixtures/hub-build';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function start(dir: string, port = 0): Promise<HubServer> {
  const rendererDir = mkdtempSync(join(tmpdir(), 'uplink-renderer-'));
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Uplink</title>');
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()] });
  cleanup.push(() => hub.close());
  const server = await startHubServer({
    hub,
    dataDir: dir,
    port,
    announce: false,
    mounts: (ctx) => [
      createPanelMount({
        hub: ctx.hub,
        token: ctx.token,
        authenticate: ctx.panelSession,
        sessions: ctx.panelSessions,
        origin: ctx.origin,
        rendererDir,
        user: 'alice',
      }),
    ],
  });
  cleanup.push(() => server.close());
  return server;
}

async function signIn(server: HubServer): Promise<{ cookie: string; key: string }> {
  const code = new URL(server.mintPanelUrl()).hash.replace(/^#code=/, '');
  const res = await fetch(`${server.url}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url },
    body: JSON.stringify({ code }),
  });
  expect(res.status).toBe(200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, key: ((await res.json()) as { key: string }).key };
}

/** A panel socket: `ready` once let in, the close code once closed. */
function panel(server: HubServer, op: { cookie: string; key: string }) {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin: server.url, headers: { cookie: op.cookie } });
  const frames: ServerFrame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
  ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', key: op.key })));
  const closed = new Promise<number>((resolve) => {
    ws.on('close', (code) => resolve(code));
    ws.on('error', () => resolve(-1));
  });
  cleanup.push(async () => ws.terminate());
  return { ws, frames, closed, ready: () => waitFor(() => frames.some((f) => f.t === 'ready'), 5000, 'the panel to be let in') };
}

describe('panel sessions survive a restart of the hub', () => {
  it('the next hub on the same data dir and port lets the signed-in browser in; only hashes are on disk (0600)', async () => {
    const dir = tmpDataDir();
    const first = await start(dir);
    const op = await signIn(first);
    await panel(first, op).ready();
    await first.close();
    const second = await start(dir, first.port);
    await panel(second, op).ready();
    const path = panelSessionsPath(dir);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(op.key);
    expect(text).not.toContain(op.cookie.split('=')[1]!);
    expect(text).toMatch(/"id_sha256": "[0-9a-f]{64}"/);
  });

  it('sign-out ends the session for this hub and the next, and clears the cookie', async () => {
    const dir = tmpDataDir();
    const server = await start(dir);
    const op = await signIn(server);
    const open = panel(server, op);
    await open.ready();
    const out = await fetch(`${server.url}/panel/session`, { method: 'DELETE', headers: { origin: server.url, cookie: op.cookie } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect(await open.closed).toBe(CLOSE_UNAUTHORIZED);
    await server.close();
    const again = await start(dir, server.port);
    expect(await panel(again, op).closed).toBe(CLOSE_UNAUTHORIZED);
  });

  it('revoke-all (operator key) closes open panels, refuses their sessions and unopened links, and rotates the key; a wrong key revokes nothing', async () => {
    const dir = tmpDataDir();
    const server = await start(dir);
    const op = await signIn(server);
    const open = panel(server, op);
    await open.ready();
    const wrong = await fetch(`${server.url}/panel/revoke`, { method: 'POST', headers: { authorization: 'Operator nope' } });
    expect(wrong.status).toBe(401);
    const key = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
    const link = server.mintPanelUrl();
    const res = await fetch(`${server.url}/panel/revoke`, { method: 'POST', headers: { authorization: `Operator ${key}` } });
    expect(await res.json()).toEqual({ revoked: 1 });
    expect(await open.closed).toBe(CLOSE_UNAUTHORIZED);
    expect(await panel(server, op).closed).toBe(CLOSE_UNAUTHORIZED);
    // The links not yet opened are gone, and the operator key was rotated: the old one mints none.
    const code = new URL(link).hash.replace(/^#code=/, '');
    const late = await fetch(`${server.url}/panel/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ code }),
    });
    expect(late.status).toBe(401);
    expect(readFileSync(join(dir, 'operator.key'), 'utf8').trim()).not.toBe(key);
    expect((await fetch(`${server.url}/panel/code`, { method: 'POST', headers: { authorization: `Operator ${key}` } })).status).toBe(401);
  });
});

describe('panel sessions expire', () => {
  it('idle past twelve hours, or past seven days since sign-in however used; a restarted hub agrees', () => {
    const dir = tmpDataDir();
    let now = 1_000_000;
    const clock = () => now;
    const auth = createOperatorAuth(dir, () => 1, clock);
    const won = auth.redeem(auth.mintCode())!;
    const cookie = `${auth.cookieName()}=${won.id}`;
    // Used every eleven hours: alive past twelve, in another hub too.
    for (let i = 0; i < 5; i++) {
      now += 11 * 60 * 60_000;
      const s = createOperatorAuth(dir, () => 1, clock).sessionOf(cookie);
      expect(s?.keyMatches(won.key)).toBe(true);
      auth.touch(s!.handle);
    }
    const fresh = createOperatorAuth(dir, () => 1, clock);
    const s = fresh.sessionOf(cookie)!;
    fresh.touch(s.handle);
    now += SESSION_IDLE_MS + 1;
    expect(createOperatorAuth(dir, () => 1, clock).sessionOf(cookie)).toBeUndefined();
    // The absolute limit.
    const won2 = fresh.redeem(fresh.mintCode())!;
    const cookie2 = `${fresh.cookieName()}=${won2.id}`;
    for (let t = 0; t < SESSION_TTL_MS; t += 6 * 60 * 60_000) {
      now += 6 * 60 * 60_000;
      const live = createOperatorAuth(dir, () => 1, clock);
      const x = live.sessionOf(cookie2);
      if (!x) break;
      live.touch(x.handle);
    }
    expect(createOperatorAuth(dir, () => 1, clock).sessionOf(cookie2)).toBeUndefined();
  });
});
