/**
 * `uplink panel-url --revoke-all` signs every browser out: through the running hub (its open
 * panels are closed, their sessions refused), or, with no hub running, by removing the sessions
 * file so the next hub accepts none of them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import { buildForTests, runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served } from '../../fixtures/hub-build';

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function signIn(served: Served): Promise<{ cookie: string; key: string }> {
  const res = await fetch(`${served.url}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: served.url },
    body: JSON.stringify({ code: new URL(served.panel_url).hash.replace(/^#code=/, '') }),
  });
  expect(res.status).toBe(200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, key: ((await res.json()) as { key: string }).key };
}

/** Opens a panel socket; resolves `ready` when let in, `closed` with the close code. */
function panel(served: Served, op: { cookie: string; key: string }) {
  const ws = new WebSocket(`${served.url.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin: served.url, headers: { cookie: op.cookie } });
  let ready = false;
  ws.on('message', (d) => (ready ||= (JSON.parse(d.toString()) as { t: string }).t === 'ready'));
  ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', key: op.key })));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return { ws, closed, ready: () => ready };
}

describe('uplink panel-url --revoke-all', () => {
  it('through the running hub: its open panels close with 4401 and their session no longer opens one', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const served = await startServe(b, dir);
    running.push(served);
    const op = await signIn(served);
    const open = panel(served, op);
    await expect.poll(() => open.ready()).toBe(true);
    const r = await runCli(b, dir, ['panel-url', '--revoke-all']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('1 panel session revoked: browsers sign in again with `uplink panel-url`\n');
    expect(await open.closed).toBe(CLOSE_UNAUTHORIZED);
    expect(await panel(served, op).closed).toBe(CLOSE_UNAUTHORIZED);
  });

  it('with no hub running: the sessions file goes, and the next hub lets none of them in', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const first = await startServe(b, dir);
    const op = await signIn(first);
    await first.stop();
    expect(existsSync(join(dir, 'panel-sessions.json'))).toBe(true);
    const r = await runCli(b, dir, ['panel-url', '--revoke-all', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ revoked: 'all' });
    expect(existsSync(join(dir, 'panel-sessions.json'))).toBe(false);
    const second = await startServe(b, dir);
    running.push(second);
    // Another port, so another cookie name: present the old session under the new name.
    const cookie = op.cookie.replace(/^uplink_panel_\d+/, `uplink_panel_${new URL(second.url).port}`);
    expect(await panel(second, { cookie, key: op.key }).closed).toBe(CLOSE_UNAUTHORIZED);
  });
});
