/**
 * The real MCP SDK client against `uplink mcp` over stdio (embedded headless hub, fixture
 * drivers), and against `uplink mcp` forwarding to a running `uplink serve`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ProgressNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { buildForTests, cliEnv, runCli, startApprover, startServe, tmpDataDir, waitFor, ROOT } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';
import type { AuditEntry } from '../../../src/main/hub';

let b: TestBuild;
let dir: string;
let client: Client;

async function connect(dataDir: string, name = 'vitest-agent', extraEnv: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name, version: '9.9.9' });
  const env = cliEnv(b, dataDir, extraEnv) as Record<string, string>;
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [b.launcher, 'mcp'], env, cwd: ROOT, stderr: 'pipe' }));
  return c;
}

function text(r: unknown): string {
  const res = r as CallToolResult;
  return (res.content[0] as { text: string }).text;
}

/** What a tool answered (its structuredContent). */
function data<T = Record<string, unknown>>(r: unknown): T {
  return (r as CallToolResult).structuredContent as T;
}

/** The op's own result in a channel_observe / channel_act answer. */
function result(r: unknown): unknown {
  return JSON.parse(((r as CallToolResult).content[0] as { text: string }).text) as unknown;
}

beforeAll(async () => {
  b = await buildForTests();
  dir = tmpDataDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ hub: { driver_timeout_ms: 300 }, approvals: { when_no_panel: 'deny' } }));
  client = await connect(dir);
});

afterAll(async () => {
  await client?.close();
});

describe('uplink mcp (stdio, embedded hub)', () => {
  it('lists the seven tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'channel_act',
      'channel_describe',
      'channel_doctor',
      'channel_list',
      'channel_observe',
      'channel_recv',
      'channel_send',
    ]);
  });

  it('lists channels and describes ops', async () => {
    const list = data<{ channels: Array<{ channel: string }> }>(await client.callTool({ name: 'channel_list', arguments: {} })).channels;
    expect(list.map((c) => c.channel)).toEqual(['test:alpha', 'test:beta']);
    const d = data<{ ops: Array<{ op: string; tool: string }> }>(
      await client.callTool({ name: 'channel_describe', arguments: { channel: 'test:alpha', op: 'write' } }),
    );
    expect(d.ops).toEqual([expect.objectContaining({ op: 'write', tool: 'channel_act', mutating: true })]);
  });

  it('channel_observe runs a read-only op', async () => {
    const r = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'hello' } } });
    expect(r.isError).toBeFalsy();
    expect(result(r)).toEqual({ text: 'hello' });
  });

  it('channel_act without a panel is refused with a hint to ask the operator', async () => {
    const r = await client.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } });
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(
      'uplink error [test:Rejected]: write on test:alpha: denied: it needs operator approval and no Uplink panel is open — hint: ask the operator to open the Uplink panel and approve it, then retry',
    );
    const s = await client.callTool({ name: 'channel_send', arguments: { channel: 'test:alpha', message: 'hi' } });
    expect(text(s)).toContain('[test:Rejected]: send on test:alpha: denied: it needs operator approval');
  });

  it('the wrong tool class is Invalid naming the right tool', async () => {
    const a = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } });
    expect(a.isError).toBe(true);
    expect(text(a)).toBe('uplink error [test:Invalid]: write is mutating; call it with channel_act, not channel_observe — hint: use the channel_act tool');
    const b2 = await client.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'noop' } });
    expect(text(b2)).toBe('uplink error [test:Invalid]: noop is read-only; call it with channel_observe, not channel_act — hint: use the channel_observe tool');
    const c = await client.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'send', args: { message: 'x' } } });
    expect(text(c)).toBe('uplink error [test:Invalid]: send is not taken by channel_act — hint: use the channel_send tool');
  });

  it('bad input: malformed JSON args, params_schema, unknown channel, unknown op, oversized message, bad tool args', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['channel_observe', { channel: 'test:alpha', op: 'echo', args: '{"text": ' }, /^uplink error \[test:Invalid\]: args for echo are not valid JSON/],
      [
        'channel_observe',
        { channel: 'test:alpha', op: 'echo', args: { text: 1 } },
        /^uplink error \[test:Invalid\]: args for echo do not match its params_schema: .*\/args\/text.*type/,
      ],
      ['channel_observe', { channel: 'test:zzz', op: 'noop' }, /^uplink error \[test:NotFound\]: no channel test:zzz — hint: list channels/],
      ['channel_observe', { channel: 'nope:1', op: 'noop' }, /^uplink error \[nope:NotFound\]: no driver named nope/],
      ['channel_observe', { channel: 'test:alpha', op: 'teleport' }, /^uplink error \[test:NotFound\]: test has no op "teleport"/],
      [
        'channel_send',
        { channel: 'test:alpha', message: 'x'.repeat(65 * 1024) },
        /^uplink error \[test:Invalid\]: the send payload is \d+ bytes; the limit is 65536 bytes/,
      ],
      [
        'channel_observe',
        { channel: 'test:alpha' },
        /^uplink error \[test:Invalid\]: channel_observe arguments are invalid: \/ lacks the property "op" \(required\)/,
      ],
      [
        'channel_observe',
        { channel: 'test:alpha', op: 'noop', interaction: 'telepathy' },
        /^uplink error \[test:Invalid\]: channel_observe arguments are invalid: \/interaction must be one of "typed", "semantic_ui", "visual_ui" \(enum\)/,
      ],
      ['channel_describe', { channel: 'test:gone' }, /^uplink error \[test:NotFound\]: no channel test:gone — hint: list channels/],
      ['channel_describe', { channel: 'test:alpha', op: 'warp' }, /^uplink error \[test:NotFound\]: test has no op "warp"/],
    ];
    for (const [name, args, re] of cases) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, name).toBe(true);
      expect(text(r)).toMatch(re);
      // The server keeps serving after each refusal.
      expect(result(await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } }))).toEqual({ ok: true });
    }
  });

  it('an unknown tool is a JSON-RPC invalid-params error (-32602) with one line, and is audited', async () => {
    const err = await client.callTool({ name: 'channel_teleport', arguments: {} }).then(
      () => undefined,
      (e: unknown) => e as { code?: number; message?: string },
    );
    expect(err?.code).toBe(-32602);
    expect(err?.message).toMatch(/uplink error \[core:NotFound\]: no tool channel_teleport — hint: the tools are channel_list, /);
    expect(result(await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } }))).toEqual({ ok: true });
  });

  it('a driver that throws, hangs, or breaks its result_schema gets a clear error and the server keeps serving', async () => {
    const crash = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'crash' } });
    expect(text(crash)).toBe(
      'uplink error [test:Upstream]: the driver failed unexpectedly — hint: the operator can see the detail in `uplink log`; retry, or run `uplink doctor`',
    );
    const hang = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'hang' } });
    expect(text(hang)).toMatch(/^uplink error \[test:Timeout\]: test\.hang did not finish within/);
    const bad = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'bad-output' } });
    expect(text(bad)).toMatch(/^uplink error \[test:Invalid\]: the driver's result for bad-output breaks its result_schema/);
    const ok = await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } });
    expect(result(ok)).toEqual({ ok: true });
  });

  it('no progress notifications are sent when the request carries no progressToken', async () => {
    const quiet = await connect(dir, 'quiet-agent');
    const seen: unknown[] = [];
    // Replaces the SDK's own progress routing: every progress notification that arrives is seen here.
    quiet.setNotificationHandler(ProgressNotificationSchema, (n) => void seen.push(n));
    try {
      const r = await quiet.callTool(
        { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms: 2600, timeout_ms: 5000 } } },
        undefined,
        { timeout: 30_000 },
      );
      expect(result(r)).toEqual({ waited: 2600 });
      // A later round trip flushes anything the server might still have queued.
      await quiet.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } });
      expect(seen).toEqual([]);
    } finally {
      await quiet.close();
    }
  });

  it('progress notifications arrive when the request asks for them', async () => {
    const seen: string[] = [];
    const r = await client.callTool(
      { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms: 2600, timeout_ms: 5000 } } },
      undefined,
      {
        onprogress: (p) => seen.push(p.message ?? ''),
        timeout: 30_000,
      },
    );
    expect(result(r)).toEqual({ waited: 2600 });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]).toContain('test.slow running');
  });

  it('channel_doctor and channel_recv answer', async () => {
    const d = data<{ ok: boolean; drivers: unknown[] }>(await client.callTool({ name: 'channel_doctor', arguments: {} }));
    expect(d.ok).toBe(true);
    const r = data<{ items: unknown[]; next_cursor: string }>(await client.callTool({ name: 'channel_recv', arguments: {} }));
    expect(r).toEqual({ items: [], next_cursor: Buffer.from('{"v":1,"at":{"test":0}}').toString('base64url') });
  });

  it('every call appears in uplink log with the client name/version and how it was authorized', async () => {
    const log = await runCli(b, dir, ['log', '--json', '--limit', '1000']);
    expect(log.code).toBe(0);
    const entries = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const agentOf = (e: Record<string, unknown>): unknown => e.agent;
    expect(entries.some((e) => e.kind === 'succeeded' && e.op === 'echo')).toBe(true);
    expect(entries.filter((e) => e.op === 'echo').every((e) => JSON.stringify(agentOf(e)).includes('"name":"vitest-agent","version":"9.9.9"'))).toBe(true);
    expect(entries.some((e) => e.type === 'decision' && e.op === 'write' && e.authorized === 'default_policy' && e.granted === false)).toBe(true);
    expect(entries.some((e) => e.kind === 'accepted' && e.op === 'echo' && e.authorized === 'default_policy' && e.granted === true)).toBe(true);
    // Bad input is recorded too: the malformed JSON, the bad tool args and the unknown channel.
    expect(entries.some((e) => e.type === 'rejected' && String(e.message).includes('not valid JSON'))).toBe(true);
    expect(entries.some((e) => e.type === 'rejected' && e.channel === 'test:zzz')).toBe(true);
    expect(entries.some((e) => e.kind === 'failed' && e.op === 'hang' && e.error_kind === 'Timeout')).toBe(true);
    // Every bad input of the issue that reached this server is in the audit.
    const rejected = (pred: (e: Record<string, unknown>) => boolean): boolean => entries.some((e) => e.type === 'rejected' && pred(e));
    expect(rejected((e) => e.error_code === 'input_schema_violation' && e.op === 'echo')).toBe(true);
    expect(rejected((e) => String(e.message).startsWith('write is mutating; call it with channel_act'))).toBe(true);
    expect(rejected((e) => String(e.message).startsWith('noop is read-only; call it with channel_observe'))).toBe(true);
    expect(rejected((e) => String(e.message).startsWith('send is not taken by channel_act'))).toBe(true);
    expect(rejected((e) => e.op === 'teleport' && e.error_kind === 'NotFound')).toBe(true);
    expect(rejected((e) => e.channel === 'nope:1' && e.error_kind === 'NotFound')).toBe(true);
    expect(rejected((e) => e.op === 'send' && String(e.message).includes('the limit is 65536 bytes'))).toBe(true);
    expect(rejected((e) => String(e.message).startsWith('channel_observe arguments are invalid'))).toBe(true);
    expect(rejected((e) => String(e.message).startsWith('no tool channel_teleport'))).toBe(true);
    expect(rejected((e) => e.channel === 'test:gone' && e.error_kind === 'NotFound')).toBe(true);
    expect(rejected((e) => e.op === 'warp' && e.error_kind === 'NotFound')).toBe(true);
    expect(entries.some((e) => e.kind === 'failed' && e.op === 'crash' && e.error_kind === 'Upstream')).toBe(true);
    expect(entries.some((e) => e.kind === 'failed' && e.op === 'bad-output' && e.error_code === 'output_schema_violation')).toBe(true);
    const human = await runCli(b, dir, ['log', '--limit', '1000']);
    // The embedded hub's own client is `stdio`; the name it declared is shown beside it.
    expect(human.stdout).toMatch(/agent=mcp:stdio \(declares "vitest-agent@9\.9\.9"\)/);
    // How each call was authorized, in the human log too.
    expect(human.stdout).toMatch(/accepted\s+test:alpha\s+echo\s+agent=mcp:stdio \(declares "vitest-agent@9\.9\.9"\) .*read-only: no approval needed/);
    expect(human.stdout).toMatch(
      /decision\s+test:alpha\s+write\s+agent=mcp:stdio \(declares "vitest-agent@9\.9\.9"\) .*denied by the default policy: “no panel attached”/,
    );
  });
});

describe('uplink mcp and input built to break the audit', () => {
  it('args nested 6,000 deep (36 KB of JSON) are refused with one line; 50 reads behind are answered and audited; it exits on stdin close', async () => {
    const d = tmpDataDir();
    // Raw JSON-RPC lines: the SDK client cannot even serialize such an object (its JSON.stringify overflows).
    const child = spawn(process.execPath, [b.launcher, 'mcp'], { env: cliEnv(b, d) as Record<string, string>, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const replies = new Map<number, { result?: CallToolResult }>();
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i)) as { id?: number; result?: CallToolResult };
        buf = buf.slice(i + 1);
        if (typeof msg.id === 'number') replies.set(msg.id, msg);
      }
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const send = (line: string): boolean => child.stdin.write(`${line}\n`);
    const reply = (id: number): Promise<{ result?: CallToolResult }> => waitFor(() => replies.get(id), 15_000, `reply ${id}`);
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'deep-agent', version: '1' } },
      }),
    );
    await reply(1);
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const deep = `${'{"a":'.repeat(6000)}{}${'}'.repeat(6000)}`;
    send(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"channel_observe","arguments":{"channel":"test:alpha","op":"echo","args":{"text":"x","deep":${deep}}}}}`,
    );
    const refused = (await reply(2)).result!;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(
      'uplink error [core:Invalid]: args nest deeper than 64 levels — hint: flatten the args (at most 64 levels of objects and arrays)',
    );
    for (let i = 0; i < 50; i++)
      send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 100 + i,
          method: 'tools/call',
          params: { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: `r${i}` } } },
        }),
      );
    for (let i = 0; i < 50; i++) expect(result((await reply(100 + i)).result)).toEqual({ text: `r${i}` });
    child.stdin.end();
    expect(await exited).toBe(0);
    const db = new Database(join(d, 'audit.sqlite'), { readonly: true });
    const rows = db.prepare("SELECT type, kind, message FROM entries WHERE agent_name = 'deep-agent' ORDER BY id").all() as Array<{
      type: string;
      kind: string;
      message: string | null;
    }>;
    db.close();
    expect(rows.filter((r) => r.kind === 'succeeded')).toHaveLength(50);
    expect(rows.find((r) => r.type === 'rejected')).toMatchObject({ message: 'args nest deeper than 64 levels' });
  });

  it('a 2 MB channel or op name is refused naming the limit', async () => {
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const a = await client.callTool({ name: 'channel_observe', arguments: { channel: `test:${huge}`, op: 'noop' } });
    expect(text(a)).toMatch(/^uplink error \[core:Invalid\]: the channel is 2097157 characters; the limit is 512 — hint: /);
    const o = await client.callTool({ name: 'channel_describe', arguments: { channel: 'test:alpha', op: huge } });
    expect(text(o)).toMatch(/^uplink error \[core:Invalid\]: the op name is 2097152 characters; the limit is 128 — hint: /);
    expect(result(await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } }))).toEqual({ ok: true });
  });
});

describe('uplink mcp stopped by its client', () => {
  it('on SIGTERM it commits the audit and removes its journal before exiting', async () => {
    const d = tmpDataDir();
    const c = new Client({ name: 'sigterm-agent', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [b.launcher, 'mcp'],
      env: cliEnv(b, d) as Record<string, string>,
      cwd: ROOT,
      stderr: 'pipe',
    });
    await c.connect(transport);
    expect(result(await c.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'bye' } } }))).toEqual({
      text: 'bye',
    });
    const closed = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
    process.kill(transport.pid!, 'SIGTERM');
    await closed;
    // Committed by the closing hub itself: in the file, read without any replay, and no journal left.
    const db = new Database(join(d, 'audit.sqlite'), { readonly: true });
    const rows = db.prepare("SELECT kind FROM entries WHERE agent_name = 'sigterm-agent' AND op = 'echo' ORDER BY id").all() as Array<{ kind: string }>;
    db.close();
    expect(rows.map((r) => r.kind)).toEqual(['accepted', 'started', 'succeeded']);
    const journals = journalDir(join(d, 'audit.sqlite'));
    expect(existsSync(journals) ? readdirSync(journals) : []).toEqual([]);
  });
});

describe('uplink mcp forwarding to a running hub', () => {
  let served: Served;
  let fwdDir: string;
  let fwd: Client;

  beforeAll(async () => {
    fwdDir = tmpDataDir();
    writeFileSync(join(fwdDir, 'config.json'), JSON.stringify({ approvals: { when_no_panel: 'deny' } }));
    served = await startServe(b, fwdDir, { UPLINK_TEST_MARK: 'served' });
    fwd = await connect(fwdDir, 'forwarded-agent');
  });

  afterAll(async () => {
    await fwd?.close();
    await served?.stop();
  });

  it('relays to the running hub (its drivers answer) and the agent name reaches it', async () => {
    const list = data<{ channels: Array<{ detail: { mark?: string } }> }>(await fwd.callTool({ name: 'channel_list', arguments: {} })).channels;
    expect(list[0]!.detail.mark).toBe('served');
    const r = await fwd.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'x' } } });
    expect(text(r)).toContain('no Uplink panel is open');
    const log = await runCli(b, fwdDir, ['log', '--json', '--op', 'write']);
    const entries = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { agent?: { name: string; version?: string } });
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.agent?.name === 'forwarded-agent' && e.agent.version === '9.9.9')).toBe(true);
  });

  it('progress notifications travel through the relay', async () => {
    const seen: string[] = [];
    const r = await fwd.callTool(
      { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'slow', args: { ms: 2600, timeout_ms: 5000 } } },
      undefined,
      { onprogress: (p) => seen.push(p.message ?? ''), timeout: 30_000 },
    );
    expect(result(r)).toEqual({ waited: 2600 });
    expect(seen.some((m) => m.includes('test.slow running'))).toBe(true);
  });
});

describe('uplink mcp forwarding as a named agent', () => {
  it('relays with $UPLINK_AGENT_TOKEN as the bearer: the call is that agent, the declared name beside it', async () => {
    const d = tmpDataDir();
    const created = await runCli(b, d, ['agents', 'create', 'relay-bot', '--json']);
    expect(created.code).toBe(0);
    const { token: agentToken } = JSON.parse(created.stdout) as { token: string };
    const served = await startServe(b, d);
    const c = await connect(d, 'claude-code', { UPLINK_AGENT_TOKEN: agentToken });
    try {
      expect(result(await c.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } } }))).toEqual({
        text: 'hi',
      });
      const log = await runCli(b, d, ['log', '--json', '--agent', 'relay-bot', '--op', 'echo']);
      const rows = log.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEntry);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((e) => e.agent?.agent_id === 'relay-bot' && e.agent.name === 'claude-code')).toBe(true);
    } finally {
      await c.close();
      await served.stop();
    }
  });
});

describe("uplink mcp forwarding: approvals reach the running hub's panel", () => {
  it("a stdio agent's channel_act is approved by the operator of the running hub", async () => {
    const d = tmpDataDir();
    const hub = await startApprover(b, d, 'once');
    const c = await connect(d, 'relayed-agent');
    try {
      const r = await c.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'via relay' } } });
      expect(r.isError).toBeFalsy();
      expect(result(r)).toEqual({ written: 9 });
      const log = await runCli(b, d, ['log', '--json', '--op', 'write']);
      const decision = log.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((e) => e.type === 'decision');
      expect(decision).toMatchObject({
        authorized: 'operator',
        by: 'stand-in-operator',
        granted: true,
        agent: { kind: 'mcp', agent_id: 'default', name: 'relayed-agent', version: '9.9.9' },
      });
      const human = await runCli(b, d, ['log', '--op', 'write']);
      expect(human.stdout).toMatch(
        /decision\s+test:alpha\s+write\s+agent=mcp:default \(declares "relayed-agent@9\.9\.9"\) .*approved once by the operator \(stand-in-operator\)/,
      );
    } finally {
      await c.close();
      await hub.stop();
    }
  });
});
