/**
 * Streamable HTTP: the real SDK client against `uplink serve`, the bearer token and Origin checks,
 * approvals decided by a (stand-in) panel over HTTP, and kill -9 durability of a decision.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildForTests, runCli, startApprover, startJsonCommand, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';
import type { AuditEntry } from '../../../src/main/hub';

let b: TestBuild;
let dir: string;
let served: Served;
let token: string;

function text(r: unknown): string {
  return ((r as CallToolResult).content[0] as { text: string }).text;
}

/** The op's own result in a channel_observe / channel_act answer. */
function result(r: unknown): unknown {
  return JSON.parse(((r as CallToolResult).content[0] as { text: string }).text) as unknown;
}

async function httpClient(mcpUrl: string, bearer: string, name = 'http-agent'): Promise<Client> {
  const c = new Client({ name, version: '1.2.3' });
  await c.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
  return c;
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

beforeAll(async () => {
  b = await buildForTests();
  dir = tmpDataDir();
  // These agents' mutating calls are refused at once while no panel is open, not left waiting.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { when_no_panel: 'deny' } }));
  served = await startServe(b, dir);
  token = readFileSync(join(dir, 'token'), 'utf8').trim();
});

afterAll(async () => {
  await served?.stop();
});

describe('uplink serve', () => {
  it('prints a panel URL with a one-time code (not the MCP token) in the fragment, and the MCP URL, on 127.0.0.1', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(served.mcp_url).toBe(`${served.url}/mcp`);
    expect(served.panel_url).toMatch(new RegExp(`^${served.url}/#code=[\\w-]{20,}$`));
    expect(served.panel_url).not.toContain(token);
  });

  it('`uplink panel-url` prints a fresh one-time URL of the running hub that signs the panel in once', async () => {
    const out = await runCli(b, dir, ['panel-url']);
    expect(out.code).toBe(0);
    const url = out.stdout.trim();
    expect(url).toMatch(new RegExp(`^${served.url}/#code=[\\w-]{20,}$`));
    expect(url).not.toBe(served.panel_url);
    const signIn = () =>
      fetch(`${served.url}/panel/session`, {
        method: 'POST',
        headers: { origin: served.url, 'content-type': 'application/json' },
        body: JSON.stringify({ code: new URL(url).hash.slice('#code='.length) }),
      });
    expect((await signIn()).status).toBe(200);
    expect((await signIn()).status).toBe(401);
  });

  it('a second `uplink serve` on the same data directory exits naming the hub that holds it and leaves hub.json alone', async () => {
    const before = readFileSync(join(dir, 'hub.json'), 'utf8');
    const second = await runCli(b, dir, ['serve', '--port', '0']);
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toEqual([expect.stringContaining(`pid ${served.pid}`)]);
    expect(second.stderr).toContain(served.url);
    expect(readFileSync(join(dir, 'hub.json'), 'utf8')).toBe(before);
  });

  it('an invalid --port is refused with one line', async () => {
    const out = await runCli(b, tmpDataDir(), ['serve', '--port', '99999']);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe('uplink error [core:Invalid]: --port must be 0–65535, not 99999 — hint: see `uplink --help`\n');
  });

  it('a non-loopback --host needs --insecure-plain-http, which warns in one line that the token travels in clear text', async () => {
    const refused = await runCli(b, tmpDataDir(), ['serve', '--port', '0', '--host', '0.0.0.0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('--insecure-plain-http')]);
    const d = tmpDataDir();
    const open = await startJsonCommand(b, d, ['serve', '--port', '0', '--host', '0.0.0.0', '--insecure-plain-http', '--json']);
    try {
      expect(open.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      expect(open.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^uplink: warning: .*0\.0\.0\.0.*clear text/)]);
    } finally {
      await open.stop();
    }
  });

  it('creates the token file with mode 0600 and announces itself in hub.json', () => {
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    const hubJson = JSON.parse(readFileSync(join(dir, 'hub.json'), 'utf8')) as { url: string; pid: number };
    expect(hubJson).toMatchObject({ url: served.url, pid: served.pid });
  });

  it('the SDK client lists tools and calls both classes over Streamable HTTP', async () => {
    const c = await httpClient(served.mcp_url, token);
    const { tools } = await c.listTools();
    expect(tools).toHaveLength(7);
    expect(result(await c.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } }))).toEqual({ ok: true });
    const act = await c.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } });
    expect(act.isError).toBe(true);
    expect(text(act)).toContain('no Uplink panel is open');
    await c.close();
  });

  it('requests without a token, or with a wrong one, get 401', async () => {
    const none = await fetch(served.mcp_url, { method: 'POST', headers: mcpHeaders, body: initialize });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await none.json()) as { error: { message: string } }).error.message).toMatch(
      /^uplink error \[core:Rejected\]: missing, wrong or revoked bearer token — hint: /,
    );
    const wrong = await fetch(served.mcp_url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${'x'.repeat(token.length)}` },
      body: initialize,
    });
    expect(wrong.status).toBe(401);
    await expect(httpClient(served.mcp_url, 'wrong-token')).rejects.toThrow();
  });

  it('a foreign Origin gets 403 even with the right token; no CORS headers are sent', async () => {
    const res = await fetch(served.mcp_url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}`, origin: 'http://evil.example' },
      body: initialize,
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const own = await fetch(served.mcp_url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}`, origin: served.url },
      body: initialize,
    });
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a body over the limit is refused and the server keeps serving', async () => {
    const res = await fetch(served.mcp_url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: 'x'.repeat(5 * 1024 * 1024),
    });
    expect(res.status).toBe(413);
    const health = await fetch(`${served.url}/health`);
    expect(await health.json()).toEqual({ app: 'uplink', ok: true });
  });

  it('refused HTTP requests are recorded in the audit', async () => {
    const entries = await waitFor(
      async () => {
        const log = await runCli(b, dir, ['log', '--json', '--state', 'rejected', '--limit', '100']);
        const rows = log.stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { message: string });
        return rows.some((r) => r.message.includes('HTTP 403')) ? rows : undefined;
      },
      20_000,
      'audited refusals',
    );
    expect(entries.some((e) => e.message.startsWith('HTTP 401 on /mcp: no bearer token'))).toBe(true);
    expect(entries.some((e) => e.message.startsWith('HTTP 401 on /mcp: a wrong or revoked bearer token'))).toBe(true);
    expect(entries.some((e) => e.message.startsWith('HTTP 403 on /mcp: foreign origin http://evil.example'))).toBe(true);
    expect(entries.some((e) => e.message.startsWith('HTTP 413 on /mcp'))).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(token);
  });
});

/** The audit as the operator reads it after the hub died: `uplink log` (which replays what the dead hub journaled). */
async function auditAfterCrash(dataDir: string): Promise<AuditEntry[]> {
  const log = await runCli(b, dataDir, ['log', '--json', '--limit', '1000']);
  expect(log.code).toBe(0);
  return log.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);
}

describe('approvals over HTTP and durability', () => {
  it('a panel approval lets channel_act run; an "always" decision reported to the agent survives kill -9', async () => {
    const d = tmpDataDir();
    const hub = await startApprover(b, d, 'always');
    const c = await httpClient(hub.mcp_url, hub.token, 'durable-agent');
    const r = await c.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'keep me' } } });
    expect(r.isError).toBeFalsy();
    expect(result(r)).toEqual({ written: 7 });
    // The agent has its answer: kill the hub without any chance to flush.
    hub.child.kill('SIGKILL');
    await new Promise((resolve) => hub.child.once('close', resolve));
    const decision = (await auditAfterCrash(d)).find((e) => e.type === 'decision' && e.op === 'write');
    expect(decision).toMatchObject({
      authorized: 'operator',
      by: 'stand-in-operator',
      granted: true,
      agent: { agent_id: 'default', name: 'durable-agent', version: '1.2.3' },
    });
    const config = JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')) as { approvals: { rules: Array<{ channel: string; op: string }> } };
    // Scoped to the authenticated agent and the channel's label, never the declared name or the address.
    expect(config.approvals.rules).toEqual([expect.objectContaining({ channel: 'test:a', op: 'write', agent: 'default' })]);
  });

  it('default-policy decisions and outcomes reported to the agent survive kill -9', async () => {
    const d = tmpDataDir();
    writeFileSync(join(d, 'config.json'), JSON.stringify({ approvals: { when_no_panel: 'deny' } }));
    const hub = await startServe(b, d);
    const bearer = readFileSync(join(d, 'token'), 'utf8').trim();
    const c = await httpClient(hub.mcp_url, bearer, 'crash-agent');
    const denied = await c.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } });
    expect(text(denied)).toContain('no Uplink panel is open');
    const read = await c.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'seen' } } });
    expect(result(read)).toEqual({ text: 'seen' });
    // The agent has both answers: no chance to flush a batch.
    hub.child.kill('SIGKILL');
    await new Promise((resolve) => hub.child.once('close', resolve));
    const rows = (await auditAfterCrash(d)).filter((e) => e.agent?.name === 'crash-agent');
    expect(rows).toContainEqual(expect.objectContaining({ type: 'decision', op: 'write', authorized: 'default_policy', granted: false }));
    expect(rows).toContainEqual(expect.objectContaining({ type: 'rejected', op: 'write', error_code: 'policy_denied', error_kind: 'Rejected' }));
    expect(rows).toContainEqual(expect.objectContaining({ kind: 'accepted', op: 'echo', authorized: 'default_policy', granted: true }));
    expect(rows).toContainEqual(expect.objectContaining({ kind: 'succeeded', op: 'echo', agent: expect.objectContaining({ version: '1.2.3' }) }));
    // Each entry once: whether a batch commit or the replay of the dead hub's journal stored it.
    const ids = rows.map((e) => `${e.type}/${e.kind}/${e.invocation_id}/${e.sequence}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('an operator deny reaches the HTTP agent with the reason', async () => {
    const d = tmpDataDir();
    const hub = await startApprover(b, d, 'deny');
    const c = await httpClient(hub.mcp_url, hub.token);
    const r = await c.callTool({ name: 'channel_send', arguments: { channel: 'test:beta', message: 'hello' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      'uplink error [test:Rejected]: send on test:beta: denied by the operator: “test says no” — hint: do not retry the same action unchanged; ask the operator what they want instead',
    );
    await c.close();
    await hub.stop();
  });
});
