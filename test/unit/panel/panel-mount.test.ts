import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createPanelMount } from '../../../src/main/edges/panel';
import type { PanelMount } from '../../../src/main/edges/panel';
import { checkEvent, checkResponse } from '../../../src/main/edges/panel/validate';
import { CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL, createWsPanelClient } from '../../../src/shared/panel-ws';
import type { ServerFrame, WebSocketLike } from '../../../src/shared/panel-ws';
import type { PanelMethod } from '../../../src/shared/panel-api';
import { approval, createFakeHub, FAKE_TIERS } from './fake-hub';
import type { FakeHub } from './fake-hub';

const TOKEN = 'secret-token-0123456789';
/** The operator's session as the hub server would find it from the cookie. */
const SESSION = { label: 's3ss', key: 'session-key-0123456789', handle: 'h4ndle', keyMatches: (k: unknown) => k === 'session-key-0123456789' };
const COOKIE = 'uplink_panel=good';
let server: Server;
let mount: PanelMount;
let hub: FakeHub;
let origin: string;

beforeEach(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-panel-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Uplink</title>');
  writeFileSync(join(dir, 'assets', 'a.js'), 'console.log(1)');
  hub = createFakeHub();
  mount = createPanelMount({
    hub,
    token: TOKEN,
    rendererDir: dir,
    user: 'alice',
    authenticate: (req) => (req.headers.cookie === COOKIE ? SESSION : undefined),
  });
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    void Promise.resolve(mount.handle(req, res, url)).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (!mount.upgrade(req, socket, head, new URL(req.url ?? '/', 'http://127.0.0.1'))) socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await mount.dispose();
  await new Promise<void>((r) => server.close(() => r()));
});

const wsUrl = () => `${origin.replace('http', 'ws')}/panel/ws`;

/** Opens a raw socket and collects frames. */
function raw(opts: { origin?: string; protocol?: string | string[]; cookie?: string | null } = {}) {
  const cookie = opts.cookie === undefined ? COOKIE : opts.cookie;
  const ws = new WebSocket(wsUrl(), opts.protocol ?? PANEL_WS_PROTOCOL, { origin: opts.origin ?? origin, ...(cookie ? { headers: { cookie } } : {}) });
  const frames: ServerFrame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  const opened = new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  return { ws, frames, closed, opened };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function client() {
  const states: string[] = [];
  const c = createWsPanelClient({
    url: wsUrl(),
    key: () => SESSION.key,
    createSocket: (u, p) => new WebSocket(u, p, { origin, headers: { cookie: COOKIE } }) as unknown as WebSocketLike,
    onState: (s) => states.push(s),
    minDelayMs: 20,
  });
  return { c, states };
}

describe('panel static files', () => {
  it('serves the renderer with a strict CSP and no caching of index.html', async () => {
    const res = await fetch(`${origin}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('refuses paths that escape the renderer directory', async () => {
    for (const p of ['/../../etc/passwd', '/%2e%2e/%2e%2e/etc/passwd', '/assets/../../x']) {
      const res = await fetch(`${origin}${p}`);
      expect(res.status).toBe(404);
    }
  });

  it('does not take /mcp requests', async () => {
    const res = await fetch(`${origin}/mcp`);
    expect(res.status).toBe(404);
  });
});

describe('panel WebSocket', () => {
  it('rejects a foreign Origin before the upgrade', async () => {
    const s = raw({ origin: 'http://evil.example' });
    await expect(s.opened).rejects.toThrow('HTTP 403');
  });

  it('rejects a connection without the panel subprotocol', async () => {
    const s = raw({ protocol: 'other' });
    await expect(s.opened).rejects.toThrow();
  });

  it('without an operator session cookie the socket is closed 4401 at once, whatever the hello says', async () => {
    const s = raw({ cookie: null });
    await s.opened;
    s.ws.send(JSON.stringify({ t: 'hello', key: SESSION.key, token: TOKEN }));
    expect(await s.closed).toBe(CLOSE_UNAUTHORIZED);
    expect(s.frames[0]).toMatchObject({ t: 'error', error: { code: 'unauthorized', message: expect.stringContaining('uplink panel-url') } });
    expect(hub.attached).toBe(0);
  });

  it("with the cookie, a hello without the session's key (the MCP token, say) closes 4401 and never attaches", async () => {
    for (const hello of [{ t: 'hello', key: TOKEN }, { t: 'hello', token: TOKEN }, { t: 'hello' }]) {
      const s = raw();
      await s.opened;
      s.ws.send(JSON.stringify(hello));
      expect(await s.closed).toBe(CLOSE_UNAUTHORIZED);
      expect(hub.attached).toBe(0);
    }
  });

  it('refuses calls before hello', async () => {
    const s = raw();
    await s.opened;
    s.ws.send(JSON.stringify({ t: 'call', id: 1, method: 'listRules', params: {} }));
    expect(await s.closed).toBe(CLOSE_UNAUTHORIZED);
  });

  it('answers bad frames with errors and keeps serving', async () => {
    const s = raw();
    await s.opened;
    s.ws.send(JSON.stringify({ t: 'hello', key: SESSION.key }));
    await until(() => s.frames.some((f) => f.t === 'ready'), 'ready');
    s.ws.send('not json');
    s.ws.send(JSON.stringify({ t: 'call', id: 2, method: '__proto__', params: {} }));
    s.ws.send(JSON.stringify({ t: 'call', id: 3, method: 'decide', params: { approval_id: 'x', decision: 'yes' } }));
    s.ws.send(JSON.stringify({ t: 'call', id: 4, method: 'describeChannel', params: { channel: 'tmux:%1', extra: 1 } }));
    s.ws.send(JSON.stringify({ t: 'call', id: 5, method: 'listRules' }));
    await until(() => s.frames.filter((f) => f.t === 'error' || f.t === 'result').length >= 5, 'five answers');
    const byId = (id: number) => s.frames.find((f) => (f.t === 'error' || f.t === 'result') && f.id === id);
    expect(s.frames.find((f) => f.t === 'error' && f.id === null)).toBeTruthy();
    expect(byId(2)).toMatchObject({ t: 'error', error: { code: 'invalid_request' } });
    expect(byId(3)).toMatchObject({ t: 'error', error: { code: 'invalid_request', message: expect.stringContaining('/decision') } });
    expect(byId(4)).toMatchObject({ t: 'error', error: { message: expect.stringContaining('extra') } });
    expect(byId(5)).toMatchObject({ t: 'result', result: [] });
    s.ws.close();
  });

  it('a connected panel counts as attached until it disconnects', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    expect(hub.attached).toBe(1);
    c.close();
    await until(() => hub.attached === 0, 'detach');
  });

  it('pushes approvals and decides them as the operator, once', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    const added: unknown[] = [];
    const resolved: string[] = [];
    c.api.on('approvalAdded', (a) => added.push(a));
    c.api.on('approvalResolved', (r) => resolved.push(`${r.approval_id}:${r.granted}:${r.reason ?? ''}`));
    // The hub's prompt carries the caller's live identity, which also says where the agent runs.
    const live = {
      kind: 'mcp' as const,
      agent_id: 'default',
      name: 'claude-code',
      session: 'mcp-1',
      caller: { tmux: '/tmp/tmux-1000/default', tmux_pane: '%7' },
    };
    hub.addApproval(approval('a1', { agent: live }));
    await until(() => added.length === 1, 'approvalAdded');
    const pending = await c.api.listPendingApprovals();
    expect(checkResponse('listPendingApprovals', pending)).toMatchObject({ ok: true });
    expect(checkEvent('approvalAdded', added[0])).toMatchObject({ ok: true });
    // The hub's own prompt, cut to its declared fields: never where the agent runs.
    const { caller: _where, ...declared } = live;
    expect(pending[0]).toEqual(approval('a1', { agent: declared }));
    expect(added[0]).toEqual(pending[0]);
    const first = await c.api.decide({ approval_id: 'a1', decision: 'deny', reason: 'not now' });
    expect(first).toEqual({ accepted: true, granted: false });
    const second = await c.api.decide({ approval_id: 'a1', decision: 'once' });
    expect(second.accepted).toBe(false);
    expect(second.message).toContain('already decided');
    expect(hub.decisions).toEqual([{ id: 'a1', kind: 'deny', reason: 'not now', by: 'alice via panel-session:s3ss' }]);
    await until(() => resolved.length === 1, 'approvalResolved');
    expect(resolved).toEqual(['a1:false:not now']);
    c.close();
  });

  it('streams audit entries as timeline events and pages history ascending', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    const seen: number[] = [];
    c.api.on('runtimeEvent', (e) => seen.push(e.id));
    for (let i = 1; i <= 5; i++) {
      hub.emitEntry({
        id: i,
        at: i,
        type: 'event',
        kind: 'accepted',
        invocation_id: `inv-${i}`,
        sequence: 1,
        channel: 'tmux:%1',
        agent: { kind: 'mcp', name: 'x' },
      });
    }
    await until(() => seen.length === 5, 'five events');
    const page = await c.api.queryTimeline({ before: 5, limit: 2 });
    expect(checkResponse('queryTimeline', page).ok).toBe(true);
    expect(page.events.map((e) => e.id)).toEqual([3, 4]);
    expect(page.next_before).toBe(3);
    c.close();
  });

  it('every call of the channel map answers with a payload that matches its response schema', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    const calls: Array<[PanelMethod, unknown]> = [
      ['listChannels', {}],
      ['describeChannel', { channel: 'tmux:%1' }],
      ['listRules', {}],
      ['getSettings', {}],
      ['setApprovalTimeout', { timeout_ms: 30_000 }],
      ['listProviders', {}],
      ['explainSelection', { capability_id: 'tmux.send' }],
      ['getInvocation', { invocation_id: 'nope' }],
      ['runOp', { channel: 'tmux:%1', op: 'read', args: { lines: 5 } }],
    ];
    for (const [method, params] of calls) {
      const result = await (c.api[method] as (p: unknown) => Promise<unknown>)(params);
      expect(checkResponse(method, result), method).toEqual({ ok: true, value: result });
    }
    expect(await c.api.explainSelection({ capability_id: 'tmux.send' })).toEqual({
      selected: { provider_id: 'uplink/tmux', capability_version: '1.0.0', interaction: 'typed' },
      candidates: [{ provider_id: 'uplink/tmux', capability_version: '1.0.0', interaction: 'typed', selected: true, reason: 'the only offer' }],
    });
    expect(await c.api.listProviders()).toEqual([expect.objectContaining({ provider_id: 'uplink/tmux', version: '1.0.0', interaction: 'typed' })]);
    c.close();
  });

  it('the tier control offers exactly the tiers the channel’s driver declares', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    const listed = (await c.api.listChannels()).channels[0];
    expect(listed).toMatchObject({ driver: 'tmux', tier: 'observer', tiers: FAKE_TIERS });
    expect((await c.api.describeChannel({ channel: 'tmux:%1' })).channel).toMatchObject({ tier: 'observer', tiers: FAKE_TIERS });
    c.close();
  });

  it('a driver error reaches the panel as the rendered line', async () => {
    const { c } = client();
    await until(() => c.state() === 'open', 'open');
    await expect(c.api.describeChannel({ channel: 'tmux:%9' })).rejects.toMatchObject({
      code: 'not_found',
      message: 'uplink error [tmux:NotFound]: no channel tmux:%9 — hint: list channels',
    });
    c.close();
  });

  it('the client reconnects after the server drops it', async () => {
    const { c, states } = client();
    await until(() => c.state() === 'open', 'open');
    await mount.dispose();
    await until(() => states.includes('reconnecting'), 'reconnecting');
    expect(await c.api.listRules().catch((e: Error) => e.message)).toContain('not connected');
    c.close();
  });
});

describe('selection explanation', () => {
  it('maps the kernel’s offers, candidates and reasons onto the panel shape', async () => {
    const { toPanelExplanation } = await import('../../../src/main/edges/panel/mapping');
    const provider = (id: string) => ({ id, version: '2.0.0', name: id, description: id });
    const capability = {
      id: 'desktop.click',
      version: '1.0.0',
      title: 'click',
      description: 'click',
      input_schema: {},
      output_schema: {},
      safety: 'mutating' as const,
    };
    const offer = { provider: provider('uplink/desktop-semantic'), capability, interaction: 'semantic_ui' as const };
    const other = { provider: provider('uplink/desktop-visual'), capability, interaction: 'visual_ui' as const };
    const x = toPanelExplanation({
      selected: { ...offer },
      candidates: [
        { offer, matched: true, reason: 'preferred interaction' },
        { offer: other, matched: true, reason: 'later in discovery order' },
      ],
    });
    expect(x.selected).toEqual({ provider_id: 'uplink/desktop-semantic', capability_version: '1.0.0', interaction: 'semantic_ui' });
    expect(x.candidates.map((c) => [c.provider_id, c.selected, c.reason])).toEqual([
      ['uplink/desktop-semantic', true, 'preferred interaction'],
      ['uplink/desktop-visual', false, 'later in discovery order'],
    ]);
    const none = toPanelExplanation({ error: { code: 'capability_unavailable', message: 'nobody', retryable: false }, candidates: [] });
    expect(none).toEqual({ error: { code: 'capability_unavailable', message: 'nobody', retryable: false }, candidates: [] });
  });
});
