/**
 * What agents hear when the hub they talk to stops, restarts or never came: a real `uplink serve`,
 * `uplink mcp` relaying to it, the real SDK clients (stdio and Streamable HTTP), the real panel
 * socket keeping a prompt open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import type { ServerFrame } from '../../../src/shared/panel-ws';
import type { AuditEntry } from '../../../src/main/hub';
import { buildForTests, cliEnv, ROOT, runCli, startJsonCommand, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

async function serve(b: TestBuild, dir: string): Promise<Served> {
  const s = await startServe(b, dir);
  cleanup.push(() => s.stop());
  return s;
}

async function stdioClient(b: TestBuild, dir: string, name = 'relayed-agent'): Promise<Client> {
  const c = new Client({ name, version: '1.2.3' });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [b.launcher, 'mcp'],
      env: cliEnv(b, dir) as Record<string, string>,
      cwd: ROOT,
      stderr: 'pipe',
    }),
  );
  cleanup.push(() => c.close());
  return c;
}

const text = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;
/** The op's own result in a channel_observe / channel_act answer. */
const result = (r: unknown): unknown => JSON.parse(((r as CallToolResult).content[0] as { text: string }).text) as unknown;
const echo = { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'still here' } } };

async function log(b: TestBuild, dir: string): Promise<AuditEntry[]> {
  const r = await runCli(b, dir, ['log', '--json']);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);
}

/** The operator's panel, signed in with the serve's one-time code, so mutating calls wait for a decision. */
async function openPanel(served: Served): Promise<{ frames: ServerFrame[]; ws: WebSocket }> {
  const code = new URL(served.panel_url).hash.replace(/^#code=/, '');
  const res = await fetch(`${served.url}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: served.url },
    body: JSON.stringify({ code }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { key } = (await res.json()) as { key: string };
  const ws = new WebSocket(`${served.url.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin: served.url, headers: { cookie } });
  const frames: ServerFrame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as ServerFrame));
  ws.on('error', () => undefined);
  ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', key })));
  await waitFor(() => frames.some((f) => f.t === 'ready'), 10_000, 'the panel');
  return { frames, ws };
}

describe('uplink mcp relaying across hub restarts', () => {
  it('the next call after the hub restarts succeeds, as the same agent and client', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const first = await serve(b, dir);
    const client = await stdioClient(b, dir);
    expect(result(await client.callTool(echo))).toEqual({ text: 'still here' });

    await first.stop();
    const second = await serve(b, dir);
    expect(second.url).not.toBe(first.url);
    const after = await client.callTool(echo);
    expect(after.isError).toBeFalsy();
    expect(result(after)).toEqual({ text: 'still here' });

    // On the same port the new hub does not know the relay's session (404): a new one, once.
    await second.stop();
    const third = await startJsonCommand(b, dir, ['serve', '--port', new URL(second.url).port, '--json']);
    cleanup.push(() => third.stop());
    expect(third.url).toBe(second.url);
    expect(result(await client.callTool(echo))).toEqual({ text: 'still here' });

    const rows = (await log(b, dir)).filter((e) => e.op === 'echo' && e.state === 'succeeded');
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r.agent).toMatchObject({ agent_id: 'default', name: 'relayed-agent', version: '1.2.3' });
  });

  it('with no hub any more, a call gets one line saying so (not that a running hub did not answer)', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const served = await serve(b, dir);
    const client = await stdioClient(b, dir);
    await client.callTool(echo);
    await served.stop();
    const err = await client.callTool(echo).then(
      () => undefined,
      (e: unknown) => e as Error & { code: number },
    );
    expect(err?.message).toBe(
      `MCP error -32603: uplink error [core:Unavailable]: no Uplink hub is running for ${dir} — hint: start \`uplink serve\` (or the desktop app) for this data directory, then retry`,
    );
    // And it comes back once a hub does.
    await serve(b, dir);
    expect(result(await client.callTool(echo))).toEqual({ text: 'still here' });
  });

  it('a request before initialize is answered as the embedded server answers it: -32601 for an unknown method', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    await serve(b, dir);
    const child = spawn(process.execPath, [b.launcher, 'mcp'], { env: cliEnv(b, dir), cwd: ROOT });
    cleanup.push(async () => void child.kill());
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const answer = async (id: number): Promise<Record<string, unknown>> =>
      waitFor(
        () =>
          out
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((m) => m.id === id),
        10_000,
        `answer ${id}`,
      );
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} })}\n`);
    expect(await answer(1)).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
    expect(await answer(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    // The client's own initialize still opens its session afterwards.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } })}\n`,
    );
    expect(await answer(3)).toMatchObject({ id: 3, result: { serverInfo: { name: 'uplink' } } });
  });
});

describe('a hub stopped while calls wait for the operator', () => {
  it('SIGTERM answers the HTTP and the relayed agent at once with one line, and the audit says the hub stopped', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const served = await serve(b, dir);
    const panel = await openPanel(served);
    cleanup.push(async () => panel.ws.terminate());

    const http = new Client({ name: 'http-agent', version: '1' });
    await http.connect(
      new StreamableHTTPClientTransport(new URL(served.mcp_url), {
        requestInit: { headers: { authorization: `Bearer ${(await import('node:fs')).readFileSync(`${dir}/token`, 'utf8').trim()}` } },
      }),
    );
    cleanup.push(() => http.close());
    const relayed = await stdioClient(b, dir);
    const act = (who: string) => ({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: who } } });
    const calls = [http.callTool(act('http')), relayed.callTool(act('relay'))];
    await waitFor(() => panel.frames.filter((f) => f.t === 'event' && f.event === 'approvalAdded').length === 2 || undefined, 10_000, 'both prompts');

    const stoppedAt = Date.now();
    const stopped = served.stop();
    const answers = await Promise.all(calls.map((c) => Promise.race([c, new Promise<undefined>((r) => setTimeout(() => r(undefined), 8000))])));
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    for (const a of answers) {
      expect(a?.isError).toBe(true);
      expect(text(a)).toBe(
        'uplink error [core:Unavailable]: the hub stopped before the operator decided — hint: write on test:alpha did not run; retry it once the hub is back if it is still wanted',
      );
    }
    await stopped;

    const rows = await log(b, dir);
    const writes = rows.filter((e) => e.op === 'write');
    const invocations = [...new Set(writes.map((e) => e.invocation_id))];
    expect(invocations).toHaveLength(2);
    for (const id of invocations) {
      const mine = writes.filter((e) => e.invocation_id === id);
      expect(mine.find((e) => e.type === 'decision')).toMatchObject({ authorized: 'closed', granted: false });
      // It never ran: the call ended there, in the hub that stopped.
      expect(
        mine
          .map((e) => e.state)
          .filter(Boolean)
          .at(-1),
      ).toBe('failed');
    }
  });
});

describe('a hub killed while a call waits for the operator', () => {
  it('the relayed agent hears that no hub runs and that the call may have run; the next start ends the call as lost and names it, once', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    // Not through serve(): a SIGKILLed child never reports an exit code, so stop() would wait forever.
    const served = await startServe(b, dir);
    const killed = new Promise((r) => served.child.once('close', r));
    cleanup.push(async () => void served.child.kill('SIGKILL'));
    const panel = await openPanel(served);
    cleanup.push(async () => panel.ws.terminate());
    const relayed = await stdioClient(b, dir);
    const call = relayed.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    const added = await waitFor(() => panel.frames.find((f) => f.t === 'event' && f.event === 'approvalAdded'), 10_000, 'the prompt');
    const invocation = (added as { payload: { invocation_id: string } }).payload.invocation_id;
    // Its accepted entry is in the store before the kill.
    await waitFor(async () => (await log(b, dir)).some((e) => e.invocation_id === invocation) || undefined, 10_000, 'the accepted entry');
    const killedAt = Date.now();
    served.child.kill('SIGKILL');
    await killed;
    // The relay answers the request id it had in flight at once, not at some timeout.
    const err = await call;
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect(err?.message).toMatch(
      /^MCP error -32603: uplink error \[core:Unavailable\]: no Uplink hub is running for .* — hint: the call may have run \(see `uplink log`\)/,
    );

    const unfinished = async (): Promise<AuditEntry[]> => (await log(b, dir)).filter((e) => e.type === 'rejected' && e.message?.includes('never finished'));
    expect(await unfinished()).toEqual([]);
    const again = await serve(b, dir);
    const lines = await unfinished();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toBe(`calls the previous hub never finished (it was killed or crashed): ${invocation}`);
    expect(lines[0]!.hint).toMatch(/waiting for the operator did not run/);
    // The call itself ended, lost with the hub: its row is no longer waiting, and `uplink log` says so.
    const ended = (await log(b, dir)).filter((e) => e.invocation_id === invocation).at(-1);
    expect(ended).toMatchObject({ type: 'event', kind: 'failed', state: 'failed', outcome: 'lost', error_kind: 'Unavailable' });
    expect(ended!.message).toMatch(/^lost with the hub: it stopped \(killed or crashed\) while the call waited for the operator, so it did not run$/);
    const lost = await runCli(b, dir, ['log', '--state', 'lost']);
    expect(lost.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/#\d+\s+lost\s+test:alpha\s+write\s/)]);
    // A later start does not name it again.
    await again.stop();
    await serve(b, dir);
    expect(await unfinished()).toHaveLength(1);
  });
});

describe('an HTTP agent whose session died with the hub', () => {
  // The MCP transport: a server that ended a session MUST answer requests naming it with 404, and a
  // client that gets 404 MUST initialize anew. So the restarted hub cannot answer the dead
  // session's request ids itself; its 404 (also to a resume with Last-Event-ID) is what it can do,
  // and the call ends with the client's own request timeout.
  it('the restarted hub refuses the old session with 404, also to a resume with Last-Event-ID; its waiting call ends with an error', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const served = await startServe(b, dir);
    const killed = new Promise((r) => served.child.once('close', r));
    cleanup.push(async () => void served.child.kill('SIGKILL'));
    const panel = await openPanel(served);
    cleanup.push(async () => panel.ws.terminate());
    const token = (await import('node:fs')).readFileSync(`${dir}/token`, 'utf8').trim();
    const transport = new StreamableHTTPClientTransport(new URL(served.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
    });
    const http = new Client({ name: 'http-agent', version: '1' });
    await http.connect(transport);
    cleanup.push(() => http.close());
    const oldSession = transport.sessionId!;
    const call = http
      .callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } }, undefined, { timeout: 8000 })
      .then(
        (r) => ({ r }),
        (e: unknown) => ({ e: e as Error }),
      );
    await waitFor(() => panel.frames.find((f) => f.t === 'event' && f.event === 'approvalAdded'), 10_000, 'the prompt');
    served.child.kill('SIGKILL');
    await killed;
    const again = await startJsonCommand(b, dir, ['serve', '--port', new URL(served.url).port, '--json']);
    cleanup.push(() => again.stop());
    const ended = await call;
    expect('e' in ended || (ended.r as CallToolResult).isError).toBe(true);
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream', 'mcp-session-id': oldSession };
    const stale = await fetch(again.mcp_url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    const resume = await fetch(again.mcp_url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': 'anything' } });
    expect(resume.status).toBe(404);
    // A new session works at once, as the same credential.
    const fresh = new Client({ name: 'http-agent', version: '1' });
    await fresh.connect(new StreamableHTTPClientTransport(new URL(again.mcp_url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    cleanup.push(() => fresh.close());
    expect(result(await fresh.callTool(echo))).toEqual({ text: 'still here' });
  });
});
