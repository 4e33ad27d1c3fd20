/**
 * The tmux flows through the real MCP SDK client against `uplink mcp` (stdio, embedded hub) with
 * the real tmux driver on a private server. Standing rules approve tmux ops (no panel here), so
 * what is tested is the driver's own guards as an agent meets them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cliEnv, ROOT, tmpDataDir, type TestBuild } from '../../fixtures/hub-build';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';
import { APPROVE_TMUX, buildTmuxHub, writeConfig } from './hub-helpers';

let b: TestBuild;
const cleanup: Array<() => unknown> = [];

beforeEach(async () => {
  b = await buildTmuxHub();
}, 120_000);

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

interface Agent {
  server: TmuxTestServer;
  dataDir: string;
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<{ error: boolean; text: string }>;
  json<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T>;
}

async function agent(config: Record<string, unknown> = APPROVE_TMUX): Promise<Agent> {
  const server = TmuxTestServer.start('sh');
  cleanup.push(() => server.stop());
  const dataDir = tmpDataDir('uplink-tmux-mcp-');
  writeConfig(dataDir, config);
  const env = cliEnv(b, dataDir, { UPLINK_TEST_TMUX_SOCKET: server.socket, UPLINK_TEST_TMUX_PANE: server.firstPane }) as Record<string, string>;
  const client = new Client({ name: 'claude', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [b.launcher, 'mcp'], env, cwd: ROOT, stderr: 'pipe' }));
  cleanup.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return { error: r.isError === true, text: (r.content[0] as { text: string }).text };
  };
  const json = async <T,>(name: string, args: Record<string, unknown>): Promise<T> => {
    const r = await call(name, args);
    if (r.error) throw new Error(r.text);
    return JSON.parse(r.text) as T;
  };
  return { server, dataDir, client, call, json };
}

describe('tmux through MCP (uplink mcp)', () => {
  it('lists panes with labels, reads by label, and checks doctor', async () => {
    const a = await agent();
    const peer = a.server.split('cat');
    a.server.setOption(peer, '@name', 'peer');
    const list = await a.json<Array<{ channel: string; labels: string[] }>>('channel_list', {});
    expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ channel: `tmux:${peer}`, labels: ['peer'] })]));
    a.server.typeLine(peer, 'mcp-read-marker');
    await eventually(async () => (await a.json<{ text: string }>('channel_observe', { channel: 'tmux:peer', op: 'read', args: { lines: 10 } })).text.includes('mcp-read-marker'));
    const doctor = await a.call('channel_doctor', {});
    expect(doctor.text).toMatch(/control mode: attached/);
  });

  it('without a panel or a standing rule, mutating tmux ops are refused before the driver runs', async () => {
    const a = await agent({});
    const peer = a.server.split('cat');
    a.server.setOption(peer, '@uplink_profile', 'operator');
    const r = await a.call('channel_send', { channel: `tmux:${peer}`, message: 'hi' });
    expect(r.error).toBe(true);
    expect(r.text).toMatch(/^uplink error \[tmux:Rejected\]: send on tmux:%\d+ needs operator approval/);
    expect(a.server.capture(peer)).not.toContain('[uplink');
    // Read-only ops still run.
    expect(await a.json('channel_observe', { channel: `tmux:${peer}`, op: 'read', args: { lines: 5 } })).toHaveProperty('text');
  });

  it('send delivers with the agent name, own pane is rejected, multi-line is invalid', async () => {
    const a = await agent();
    const peer = a.server.split('cat');
    a.server.setOption(peer, '@uplink_profile', 'operator');
    const receipt = await a.json<{ delivered: boolean; correlation_id: string }>('channel_send', { channel: `tmux:${peer}`, message: 'hello over mcp', reply_hint: 'short' });
    expect(receipt.delivered).toBe(true);
    await eventually(() => a.server.capture(peer).includes(`[uplink from:claude pane:${a.server.firstPane} id:${receipt.correlation_id}] hello over mcp (reply-to:`));
    const own = await a.call('channel_send', { channel: `tmux:${a.server.firstPane}`, message: 'loop' });
    expect(own.error).toBe(true);
    expect(own.text).toMatch(/^uplink error \[tmux:Rejected\]: send to our own pane/);
    const multi = await a.call('channel_send', { channel: `tmux:${peer}`, message: 'a\nb' });
    expect(multi.text).toMatch(/^uplink error \[tmux:Invalid\]/);
  });

  it('keys need a recent read, type is gated by tier, dangerous keys need godmode', async () => {
    const a = await agent();
    const peer = a.server.split('cat');
    const typed = await a.call('channel_act', { channel: `tmux:${peer}`, op: 'type', args: { text: 'x' } });
    expect(typed.text).toMatch(/^uplink error \[tmux:Rejected\]: type needs tier operator; pane %\d+ is observer .* — hint: a human can grant it/);
    a.server.setOption(peer, '@uplink_profile', 'operator');
    const early = await a.call('channel_act', { channel: `tmux:${peer}`, op: 'keys', args: { keys: ['Enter'] } });
    expect(early.text).toMatch(/\[tmux:Rejected\].*read first/);
    await a.json('channel_observe', { channel: `tmux:${peer}`, op: 'read', args: {} });
    expect(await a.json('channel_act', { channel: `tmux:${peer}`, op: 'keys', args: { keys: ['Enter'] } })).toEqual({ sent: 1 });
    expect(await a.json('channel_act', { channel: `tmux:${peer}`, op: 'type', args: { text: 'hi', enter: true } })).toEqual({ typed: 2, enter: true });
    const chord = await a.call('channel_act', { channel: `tmux:${peer}`, op: 'keys', args: { keys: ['C-c'] } });
    expect(chord.text).toMatch(/\[tmux:Rejected\].*needs tier godmode/);
  });

  it('ask returns the transcript; recv sees a reply typed into our pane', async () => {
    const a = await agent();
    const peer = a.server.split(`sh -c 'while IFS= read -r line; do echo answer-from-peer; done'`);
    a.server.setOption(peer, '@uplink_profile', 'operator');
    const out = await a.json<{ transcript: string }>('channel_act', { channel: `tmux:${peer}`, op: 'ask', args: { message: 'ready?', quiet_ms: 1500, timeout_ms: 30_000 } });
    expect(out.transcript).toContain('answer-from-peer');
    a.server.typeLine(a.server.firstPane, "echo '[reply id:abcdef12] all good'");
    const batch = await eventually(async () => {
      const r = await a.json<{ items: Array<{ id?: string }>; next_cursor: number }>('channel_recv', {});
      return r.items.some((i) => i.id === 'abcdef12') && r;
    });
    expect(batch.next_cursor).toBeGreaterThan(0);
  });

  it('await-idle: idle for a quiet pane, not idle for a spinner', async () => {
    const a = await agent();
    const quiet = a.server.split('cat');
    const spinner = a.server.split(`sh -c 'while :; do printf "\\r%s" "-"; sleep 0.1; printf "\\r%s" "+"; sleep 0.1; done'`);
    expect(await a.json('channel_observe', { channel: `tmux:${quiet}`, op: 'await-idle', args: { quiet_ms: 500, timeout_ms: 10_000 } })).toEqual({ idle: true });
    expect(await a.json('channel_observe', { channel: `tmux:${spinner}`, op: 'await-idle', args: { quiet_ms: 1500, timeout_ms: 4000 } })).toEqual({ idle: false });
  });

  it('config grants apply without restart; read blocks and renames cannot be escaped', async () => {
    const a = await agent();
    const worker = a.server.split('cat');
    const secret = a.server.split('cat');
    a.server.setOption(worker, '@name', 'hot1');
    a.server.setOption(secret, '@name', 'customer-1');
    await a.json('channel_observe', { channel: 'tmux:hot1', op: 'read', args: {} });
    expect((await a.call('channel_act', { channel: 'tmux:hot1', op: 'type', args: { text: 'x' } })).text).toMatch(/Rejected/);
    writeConfig(a.dataDir, { ...APPROVE_TMUX, tmux: { write_allow: [{ pattern: 'hot*', tier: 'operator' }], read_deny: ['customer-*'] } });
    expect(await a.json('channel_act', { channel: 'tmux:hot1', op: 'type', args: { text: 'x' } })).toEqual({ typed: 1, enter: false });
    expect((await a.call('channel_observe', { channel: 'tmux:customer-1', op: 'read', args: {} })).text).toMatch(/\[tmux:Rejected\].*read-blocked/);
    a.server.setOption(secret, '@name', 'innocent');
    expect((await a.call('channel_observe', { channel: 'tmux:innocent', op: 'read', args: {} })).text).toMatch(/read-blocked/);
    writeConfig(a.dataDir, { ...APPROVE_TMUX, tmux: { write_allow: [{ pattern: 'hot*', tier: 'operator' }, { pattern: 'lab-*', tier: 'godmode' }] } });
    const raise = await a.call('channel_act', { channel: 'tmux:hot1', op: 'label', args: { name: 'lab-1' } });
    expect(raise.text).toMatch(/\[tmux:Rejected\].*never raise a tier/);
  });
});
