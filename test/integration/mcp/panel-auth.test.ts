/**
 * Operator authority is not agent access: the hub's HTTP server with the real panel mount, a real
 * hub, the real MCP SDK client holding the agents' token, and real `ws` clients. An agent that
 * holds the MCP token cannot drive the panel, however it presents the token; the operator signs
 * in with a one-time code and decisions record which sign-in made them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub } from '../../../src/main/hub';
import { startHubServer } from '../../../src/main/edges/http/server';
import type { HubServer } from '../../../src/main/edges/http/server';
import { createOperatorAuth, CODE_TTL_MS, SESSION_TTL_MS } from '../../../src/main/hub/credentials/operator';
import { createPanelMount } from '../../../src/main/edges/panel';
import { CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import type { ServerFrame } from '../../../src/shared/panel-ws';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir, waitFor } from '../../fixtures/hub-build';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function start(): Promise<{ hub: Hub; server: HubServer; dir: string }> {
  const dir = tmpDataDir();
  const rendererDir = mkdtempSync(join(tmpdir(), 'uplink-renderer-'));
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Uplink</title>');
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()] });
  cleanup.push(() => hub.close());
  const server = await startHubServer({
    hub,
    dataDir: dir,
    announce: false,
    mounts: (ctx) => [createPanelMount({ hub: ctx.hub, token: ctx.token, authenticate: ctx.panelSession, origin: ctx.origin, rendererDir, user: 'alice' })],
  });
  cleanup.push(() => server.close());
  return { hub, server, dir };
}

const codeOf = (panelUrl: string): string => new URL(panelUrl).hash.replace(/^#code=/, '');

/** `POST /panel/session` as the panel page does it. */
function signIn(server: HubServer, code: string, headers: Record<string, string> = { origin: server.url }): Promise<Response> {
  return fetch(`${server.url}/panel/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ code }) });
}

/** A panel socket that sends `hello`, then `calls`, and collects what comes back until it closes. */
function panelSocket(
  server: HubServer,
  opts: { headers?: Record<string, string>; query?: string; hello: Record<string, unknown>; calls?: Array<[string, unknown]> },
) {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/panel/ws${opts.query ?? ''}`, PANEL_WS_PROTOCOL, {
    origin: server.url,
    headers: opts.headers ?? {},
  });
  const frames: ServerFrame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
  ws.on('open', () => {
    ws.send(JSON.stringify({ t: 'hello', ...opts.hello }));
    (opts.calls ?? []).forEach(([method, params], i) => ws.send(JSON.stringify({ t: 'call', id: i + 1, method, params })));
  });
  const closed = new Promise<number>((resolve) => {
    ws.on('close', (code) => resolve(code));
    ws.on('error', () => resolve(-1));
    // Still open after a while means the hub let it in.
    setTimeout(() => {
      resolve(0);
      ws.terminate();
    }, 3000).unref();
  });
  return { ws, frames, closed };
}

/** The operator's legitimate sign-in: cookie + key. */
async function operatorSession(server: HubServer): Promise<{ cookie: string; key: string }> {
  const res = await signIn(server, codeOf(server.mintPanelUrl()));
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { key } = (await res.json()) as { key: string };
  return { cookie, key };
}

describe('the panel accepts only the operator', () => {
  it('an agent holding the MCP token cannot decide, set tiers, run ops, revoke rules or change the timeout; its prompt stays pending', async () => {
    const { hub, server, dir } = await start();
    // The operator's panel is open, so the agent's mutating call waits for a decision.
    const op = await operatorSession(server);
    const panel = panelSocket(server, { headers: { cookie: op.cookie }, hello: { key: op.key } });
    await waitFor(() => panel.frames.some((f) => f.t === 'ready'), 5000, 'the operator panel');

    const agent = new Client({ name: 'attacker', version: '1.0.0' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${server.token}` } } }));
    cleanup.push(() => agent.close());
    const call = agent.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'self-approved' } } });
    const [pending] = await waitFor(() => (hub.pendingApprovals().length === 1 ? hub.pendingApprovals() : undefined), 5000, 'the prompt');
    const timeoutBefore = hub.approvalTimeoutMs();

    const calls: Array<[string, unknown]> = [
      ['decide', { approval_id: pending!.approval_id, decision: 'once' }],
      ['setTier', { channel: 'test:alpha', tier: 'godmode' }],
      ['runOp', { channel: 'test:alpha', op: 'write', args: { text: 'no prompt' } }],
      ['revokeRule', { rule_id: 'r1' }],
      ['setApprovalTimeout', { timeout_ms: 600_000 }],
    ];
    const t = server.token;
    const port = new URL(server.url).port;
    const attempts: Array<{ what: string; headers?: Record<string, string>; query?: string; hello: Record<string, unknown> }> = [
      { what: 'token in hello', hello: { token: t } },
      { what: 'token as the hello key', hello: { key: t } },
      { what: 'token as a bearer header', headers: { authorization: `Bearer ${t}` }, hello: { token: t, key: t } },
      { what: 'token as the session cookie', headers: { cookie: `uplink_panel_${port}=${t}` }, hello: { token: t, key: t } },
      { what: 'token in the query', query: `?token=${t}`, hello: { token: t, key: t } },
      // A stolen cookie alone (it is sent to every port of the host) is not enough without the key.
      { what: "the operator's cookie with the token as key", headers: { cookie: op.cookie }, hello: { key: t } },
    ];
    for (const a of attempts) {
      const s = panelSocket(server, { ...a, calls });
      expect(await s.closed, a.what).toBe(CLOSE_UNAUTHORIZED);
      expect(
        s.frames.filter((f) => f.t === 'ready' || f.t === 'result'),
        a.what,
      ).toEqual([]);
    }
    // The token as a one-time code, and at the code mint, is refused too.
    expect((await signIn(server, t)).status).toBe(401);
    for (const scheme of ['Bearer', 'Operator']) {
      expect((await fetch(`${server.url}/panel/code`, { method: 'POST', headers: { authorization: `${scheme} ${t}` } })).status).toBe(401);
    }

    expect(hub.pendingApprovals().map((p) => p.approval_id)).toEqual([pending!.approval_id]);
    expect(hub.approvalTimeoutMs()).toBe(timeoutBefore);
    const audit = hub.queryAudit({ limit: 1000 }).entries;
    expect(audit.filter((e) => e.type === 'decision' && e.authorized === 'operator')).toEqual([]);
    expect(audit.some((e) => e.op === 'set-tier')).toBe(false);

    // The operator decides; the audit says through which sign-in.
    panel.ws.send(JSON.stringify({ t: 'call', id: 99, method: 'decide', params: { approval_id: pending!.approval_id, decision: 'deny', reason: 'not you' } }));
    expect((await call).isError).toBe(true);
    const decision = await waitFor(
      () => hub.queryAudit({ limit: 1000 }).entries.find((e) => e.type === 'decision' && e.authorized === 'operator'),
      5000,
      'the decision',
    );
    expect(decision.by).toMatch(/^alice via panel-session:[\w-]{8}$/);
    expect(readFileSync(join(dir, 'token'), 'utf8')).not.toContain(readFileSync(join(dir, 'operator.key'), 'utf8').trim());
    panel.ws.close();
  });

  it('a one-time code opens one session: HttpOnly, SameSite=Strict cookie; a used code is refused with a hint', async () => {
    const { server } = await start();
    const code = codeOf(server.panelUrl);
    const first = await signIn(server, code);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^uplink_panel_\d+=[\w-]{40,};/);
    for (const attr of ['HttpOnly', 'SameSite=Strict', 'Path=/panel;', `Max-Age=${SESSION_TTL_MS / 1000}`]) expect(cookie).toContain(attr);
    const again = await signIn(server, code);
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { message: string } }).error.message).toBe(
      'uplink error [core:Rejected]: this panel link is unknown, already used or expired — hint: run `uplink panel-url` for a fresh link (each opens the panel once, within 10 minutes)',
    );
  });

  it('sign-in needs the panel page: no Origin or a foreign one is refused, and the code stays unused', async () => {
    const { server } = await start();
    const code = codeOf(server.panelUrl);
    expect((await signIn(server, code, {})).status).toBe(403);
    expect((await signIn(server, code, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await signIn(server, code)).status).toBe(200);
  });

  it('the operator key mints fresh codes; it is a 0600 file apart from the token', async () => {
    const { server, dir } = await start();
    const path = join(dir, 'operator.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const key = readFileSync(path, 'utf8').trim();
    const res = await fetch(`${server.url}/panel/code`, { method: 'POST', headers: { authorization: `operator ${key}` } });
    expect(res.status).toBe(200);
    const { panel_url } = (await res.json()) as { panel_url: string };
    expect(panel_url).toMatch(new RegExp(`^${server.url}/#code=[\\w-]+$`));
    expect((await signIn(server, codeOf(panel_url))).status).toBe(200);
  });
});

describe('codes and sessions expire', () => {
  it('a code past ten minutes is refused; a session past its seven-day lifetime is gone', () => {
    let now = 1_000_000;
    const auth = createOperatorAuth(
      tmpDataDir(),
      () => 1234,
      () => now,
    );
    const late = auth.mintCode();
    now += CODE_TTL_MS + 1;
    expect(auth.redeem(late)).toBeUndefined();
    const won = auth.redeem(auth.mintCode())!;
    expect(auth.sessionOf(`a=b; ${auth.cookieName()}=${won.id}`)?.handle).toBe(won.session.handle);
    now += SESSION_TTL_MS + 1;
    expect(auth.sessionOf(`${auth.cookieName()}=${won.id}`)).toBeUndefined();
  });
});
