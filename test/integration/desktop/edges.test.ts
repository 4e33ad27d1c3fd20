/**
 * The desktop flows as an agent and a person meet them: the real MCP SDK client against
 * `uplink mcp` (stdio, embedded hub) and the `uplink` CLI, with the real desktop driver on a
 * private Xvfb: zenity and the fixture driven by an agent, the kernel's choice of interaction
 * (semantic by default, visual when constrained, `constraint_unsatisfied` when impossible) as the
 * timeline records it. Standing rules approve desktop ops (no panel here); the prompt itself is
 * covered in hub.test.ts, the integrity cases through MCP and the CLI in edges-integrity.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildCliWithDrivers, cliEnv, ROOT, runCli, tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';
import { semanticChannelOf, startFixture, startZenity } from './apps';
import type { App } from './apps';
import { startSession, waitFor } from './session';
import type { DesktopSession } from './session';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { validated } from '../../fixtures/validated-driver';

const APPROVE_DESKTOP = { approvals: { rules: [{ id: 'desktop-all', channel: 'desktop:*', op: '*' }] } };

let b: TestBuild;
let session: DesktopSession;
let app: App;
let probe: DesktopDriver;
let channel: string;
let dataDir: string;
let client: Client;
let sessionVars: Record<string, string>;

function buildDesktopCli(): Promise<TestBuild> {
  return buildCliWithDrivers('test/integration/desktop/cli-entry.ts', 'desktop');
}

async function call(name: string, args: Record<string, unknown>): Promise<{ error: boolean; text: string; data?: Record<string, unknown> }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { error: r.isError === true, text: (r.content[0] as { text: string }).text, data: r.structuredContent };
}
/** The answer itself: an op's result (its JSON text), the channel array, else the whole structuredContent. */
async function json<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T> {
  const r = await call(name, args);
  if (r.error) throw new Error(r.text);
  const data = r.data!;
  return (name === 'channel_observe' || name === 'channel_act' ? JSON.parse(r.text) : name === 'channel_list' ? data.channels : data) as T;
}

beforeAll(async () => {
  [b, session] = await Promise.all([buildDesktopCli(), startSession()]);
  sessionVars = { DISPLAY: session.env.DISPLAY!, DBUS_SESSION_BUS_ADDRESS: session.env.DBUS_SESSION_BUS_ADDRESS! };
  app = await startFixture(session, ['--title', 'Edge Fixture']);
  probe = validated(createDesktopDriver({ env: session.env }));
  channel = (await semanticChannelOf(probe, app.pid)).channel;
  dataDir = tmpDataDir('uplink-desktop-edges-');
  writeConfirmedConfig(dataDir, APPROVE_DESKTOP);
  const env = { ...cliEnv(b, dataDir, sessionVars) } as Record<string, string>;
  delete env.NO_AT_BRIDGE;
  client = new Client({ name: 'claude', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [b.launcher, 'mcp'], env, cwd: ROOT, stderr: 'pipe' }));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await probe?.dispose();
  await app?.stop();
  await session?.stop();
});

describe('desktop through MCP (uplink mcp)', () => {
  it('lists the window, reads its tree and runs doctor', async () => {
    const list = await json<Array<{ channel: string; detail: { pid: number } }>>('channel_list', {});
    expect(list.find((c) => c.channel === channel)?.detail.pid).toBe(app.pid);
    const tree = await json<{ nodes: Array<{ role: string; name: string }> }>('channel_observe', { channel, op: 'tree', args: { max_depth: 3 } });
    expect(tree.nodes[0]).toMatchObject({ role: 'frame', name: 'Edge Fixture' });
    const doctor = await json<{ drivers: Array<{ lines: string[] }> }>('channel_doctor', {});
    expect(doctor.drivers.flatMap((d) => d.lines).join('\n')).toMatch(/XTEST extension present/);
  });

  it('set-text and activate through AT-SPI (the default kind), then type through X11 when forced', async () => {
    await json('channel_act', { channel, op: 'set-text', args: { path: '//text[Name]', text: 'from mcp' } });
    await app.state((s) => s.entry === 'from mcp', 'entry = "from mcp"');
    await json('channel_act', { channel, op: 'activate', args: { path: '//push button[Count]' } });
    await app.state((s) => s.clicks === 1, 'clicks = 1');
    await json('channel_act', { channel, op: 'click', args: { x: 210, y: 54 } });
    await json('channel_act', { channel, op: 'key', args: { chord: 'End' } });
    await json('channel_act', { channel, op: 'type', args: { text: ' + pixels' }, interaction: 'visual_ui' });
    await app.state((s) => s.entry === 'from mcp + pixels', 'entry = "from mcp + pixels"');
  });

  it('answers a wrong kind, a wrong tool and an ambiguous element with rendered errors', async () => {
    const kind = await call('channel_act', { channel, op: 'click', args: { x: 1, y: 1 }, interaction: 'semantic_ui' });
    expect(kind.error).toBe(true);
    expect(kind.text).toMatch(/^uplink error \[desktop:Invalid\]: click is not offered under interaction semantic_ui/);
    const tool = await call('channel_observe', { channel, op: 'click', args: { x: 1, y: 1 } });
    expect(tool.text).toMatch(/^uplink error \[desktop:Invalid\]: click is mutating; call it with channel_act/);
    const ambiguous = await call('channel_act', { channel, op: 'activate', args: { path: '//label' } });
    expect(ambiguous.text).toMatch(/^uplink error \[desktop:Rejected\]: ambiguous target: 2 elements match \/\/label — hint: /);
  });
});

/** The timeline as `uplink log --json` prints it (the MCP hub and CLI share the data dir). */
async function timeline(op: string): Promise<Array<{ kind: string; interaction?: string; provider_id?: string; error_code?: string; invocation_id?: string }>> {
  const r = await runCli(b, dataDir, ['log', '--json', '--channel', channel, '--op', op, '--limit', '500'], sessionVars);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; interaction?: string; error_code?: string });
}

describe('a real application through MCP', () => {
  it('an agent completes zenity --entry: set-text and activate OK, proven by what zenity prints', async () => {
    const zenity = startZenity(session, 'Edge Zenity');
    try {
      const { channel: z } = await semanticChannelOf(probe, zenity.pid);
      const found = await json<{ matches: Array<{ path: string }> }>('channel_observe', { channel: z, op: 'find', args: { role: 'text' } });
      expect(found.matches).toHaveLength(1);
      await json('channel_act', { channel: z, op: 'set-text', args: { path: found.matches[0]!.path, text: 'agent was here' } });
      await json('channel_act', { channel: z, op: 'activate', args: { path: '//push button[OK]' } });
      await waitFor('zenity to exit', () => zenity.child.exitCode !== null);
      expect(zenity.stdout().trim()).toBe('agent was here');
    } finally {
      await zenity.stop();
    }
  });
});

describe('interaction selection through MCP, shown in the timeline', () => {
  it('type runs through semantic_ui by default, visual_ui when constrained; an impossible constraint is constraint_unsatisfied', async () => {
    const semantic = await json<{ confirmed?: boolean; text?: string }>('channel_act', { channel, op: 'type', args: { text: '[sem]' } });
    // The semantic result reads the entry back; the visual one can only count keystrokes.
    expect(semantic).toMatchObject({ confirmed: true, text: expect.stringContaining('[sem]') });
    await app.state((s) => (s.entry ?? '').includes('[sem]'), 'entry contains "[sem]"');
    const visual = await json<Record<string, unknown>>('channel_act', { channel, op: 'type', args: { text: '[vis]' }, interaction: 'visual_ui' });
    expect(visual).toEqual({ typed: 5 });
    await app.state((s) => (s.entry ?? '').includes('[vis]'), 'entry contains "[vis]"');
    const impossible = await call('channel_observe', { channel, op: 'screenshot', args: {}, interaction: 'semantic_ui' });
    expect(impossible.text).toMatch(/^uplink error \[desktop:Invalid\]: screenshot is not offered under interaction semantic_ui/);
    const typed = await waitFor('both type calls in the timeline', async () => {
      const done = (await timeline('type')).filter((e) => e.kind === 'succeeded');
      return done.length >= 3 ? done : undefined;
    });
    expect(typed.map((e) => e.interaction)).toEqual(expect.arrayContaining(['semantic_ui', 'visual_ui']));
    expect(typed.find((e) => e.interaction === 'semantic_ui')?.provider_id).toBe('uplink/desktop-semantic');
    expect(typed.find((e) => e.interaction === 'visual_ui')?.provider_id).toBe('uplink/desktop-visual');
    const refused = await waitFor('the refused screenshot in the timeline', async () =>
      (await timeline('screenshot')).find((e) => e.error_code === 'constraint_unsatisfied'),
    );
    expect(refused.kind).toBe('rejected');
  });
});

describe('desktop through the CLI', () => {
  it('invoke type picks semantic_ui without --interaction and visual_ui with it; the log shows the kind', async () => {
    const semantic = await runCli(b, dataDir, ['invoke', channel, 'type', '{"text": "<s>"}'], sessionVars);
    expect(semantic.code).toBe(0);
    expect(JSON.parse(semantic.stdout)).toMatchObject({ confirmed: true });
    const visual = await runCli(b, dataDir, ['invoke', channel, 'type', '{"text": "<v>"}', '--interaction', 'visual_ui'], sessionVars);
    expect(visual.code).toBe(0);
    expect(JSON.parse(visual.stdout)).toEqual({ typed: 3 });
    await app.state((s) => /<s>.*<v>|<v>.*<s>/.test(s.entry ?? ''), 'entry holds both');
    const impossible = await runCli(b, dataDir, ['invoke', channel, 'key', '{"chord": "End"}', '--interaction', 'semantic_ui'], sessionVars);
    expect(impossible.code).toBe(1);
    expect(impossible.stderr).toMatch(/uplink error \[desktop:Invalid\]: key is not offered under interaction semantic_ui/);
    const log = await runCli(b, dataDir, ['log', '--channel', channel, '--op', 'type', '--limit', '500'], sessionVars);
    // The human log names the provider the kernel picked (one per kind); --json carries the kind itself.
    expect(log.stdout).toMatch(/provider=uplink\/desktop-semantic/);
    expect(log.stdout).toMatch(/provider=uplink\/desktop-visual/);
    const kinds = (await timeline('type')).filter((e) => e.kind === 'succeeded').map((e) => e.interaction);
    expect(kinds).toEqual(expect.arrayContaining(['semantic_ui', 'visual_ui']));
    expect((await timeline('key')).some((e) => e.error_code === 'constraint_unsatisfied')).toBe(true);
  });

  it('channels, invoke with --interaction, and doctor', async () => {
    const channels = await runCli(b, dataDir, ['channels', '--json'], sessionVars);
    expect(channels.code).toBe(0);
    expect((JSON.parse(channels.stdout) as Array<{ channel: string }>).map((c) => c.channel)).toContain(channel);
    const typed = await runCli(b, dataDir, ['invoke', channel, 'type', JSON.stringify({ text: '!' }), '--interaction', 'semantic_ui', '--json'], sessionVars);
    expect(typed.code).toBe(0);
    expect(JSON.parse(typed.stdout)).toMatchObject({ confirmed: true });
    await app.state((s) => (s.entry ?? '').endsWith('!'), 'entry ends with "!"');
    const refused = await runCli(b, dataDir, ['invoke', channel, 'tree', '{}', '--interaction', 'visual_ui'], sessionVars);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/uplink error \[desktop:Invalid\]: tree is not offered under interaction visual_ui/);
    const doctor = await runCli(b, dataDir, ['doctor'], sessionVars);
    expect(doctor.stdout + doctor.stderr).toMatch(/accessibility bus reachable/);
  });
});
