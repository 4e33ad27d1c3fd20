/**
 * The desktop driver on Windows' own terms, under Wine: `desktop.backend: "win32"` runs the native
 * Win32 helper, channels are HWNDs bound to (HWND, pid, creation time, image path), the semantic
 * side is MSAA and the visual side SendInput. Through a real hub: an MCP agent fills and submits
 * the Win32 fixture's form through semantic_ui and draws on its canvas through visual_ui, every
 * action approved by an operator whose prompt carries the window's screenshot; Notepad's text is
 * set and read back through `uplink invoke`; a restarted app is a new channel and the old one is
 * refused. Every effect is proven by the application's own output (or, for Notepad, its text).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub, PendingApproval } from '../../../src/main/hub';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import { createDesktopDriver, desktopConfigSchema } from '../../../src/main/drivers/desktop';
import type { DesktopConfig } from '../../../src/main/drivers/desktop';
import { buildCliWithDrivers, runCli, writeConfirmedConfig } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';
import { waitFor } from './session';
import { startNotepad, startWin32Fixture, startWineSession, wineTools } from './wine';
import type { WineApp, WineSession } from './wine';

const skip = wineTools.skip;
let session: WineSession;
let hub: Hub;
let client: Client;
let app: WineApp;
let channel: string;
let cliBuild: Promise<TestBuild>;
const prompts: PendingApproval[] = [];
const agent = { kind: 'mcp' as const, name: 'test-agent', session: 's1' };
const WIN32 = { desktop: { backend: 'win32' } };

interface Node {
  role: string;
  name: string;
  path: string;
  bounds: { x: number; y: number; width: number; height: number } | null;
  children?: Node[];
}
const flatten = (n: Node): Node[] => [n, ...(n.children ?? []).flatMap(flatten)];

async function act(op: string, args: Record<string, unknown>, interaction?: string): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name: 'channel_act', arguments: { channel, op, args, ...(interaction ? { interaction } : {}) } })) as CallToolResult;
  const text = (r.content[0] as { text: string }).text;
  if (r.isError) throw new Error(text);
  return JSON.parse(text) as Record<string, unknown>;
}
async function observe(op: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name: 'channel_observe', arguments: { channel, op, args } })) as CallToolResult;
  const text = (r.content[0] as { text: string }).text;
  if (r.isError) throw new Error(text);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The RGB pixel at (x, y) of an 8-bit RGB PNG (filter 0 rows, as both helpers write them). */
function pixel(b64: string, x: number, y: number): [number, number, number] {
  const png = Buffer.from(b64, 'base64');
  const width = png.readUInt32BE(16);
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    if (png.subarray(at + 4, at + 8).toString('latin1') === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const at = y * (width * 3 + 1) + 1 + x * 3;
  return [raw[at]!, raw[at + 1]!, raw[at + 2]!];
}

beforeAll(async () => {
  if (skip) return;
  wineTools.check();
  cliBuild = buildCliWithDrivers('test/integration/desktop/win32-cli-entry.ts', 'desktop-win32');
  session = await startWineSession();
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-desktop-win32-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify(WIN32));
  hub = createHub({
    dataDir,
    drivers: {
      configSchemas: { desktop: desktopConfigSchema },
      create: (section) => [createDesktopDriver({ env: session.env, config: section('desktop') as () => DesktopConfig | undefined, stateDir: false })],
    },
    watchConfig: false,
  });
  hub.attachPanel();
  hub.subscribeApprovals((e) => {
    if (e.type !== 'added') return;
    prompts.push(e.approval);
    void hub.decide(e.approval.approval_id, { kind: 'once', by: 'test-operator' });
  });
  app = await startWin32Fixture(session, 'Win32 Form');
  channel = await waitFor('the fixture listed', async () => (await hub.listChannels()).find((c) => (c.detail as { pid?: number }).pid === app.pid)?.channel);
  const server = createMcpServer(hub, { id: 'default' }, 's1');
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: 'win32-agent', version: '1.0.0' });
  await client.connect(b);
}, 240_000);

afterAll(async () => {
  await client?.close();
  await hub?.close();
  await app?.stop();
  await session?.stop();
});

describe.skipIf(skip)('Windows windows through the hub (Win32 helper under Wine)', () => {
  it('lists the window by HWND, bound to pid, creation time and image; doctor names the backend and why', async () => {
    const listed = (await hub.listChannels()).find((c) => c.channel === channel)!;
    expect(listed.channel).toMatch(/^desktop:0x[0-9a-f]+$/);
    expect(listed.channel).toBe(`desktop:${app.hwnd}`);
    expect(listed.labels).toContain('Win32 Form');
    expect(listed.detail).toMatchObject({
      pid: app.pid,
      title: 'Win32 Form',
      class: ['UplinkFixtureWindow'],
      process_name: expect.stringMatching(/^uplink-fixture-.*\.exe$/),
      interactions: ['semantic_ui', 'visual_ui'],
      bound: { pid: app.pid, start_time: expect.any(Number) },
    });
    const doctor = await hub.doctor();
    const lines = doctor.drivers.find((d) => d.driver === 'desktop')!.lines.join('\n');
    expect(lines).toMatch(/^backend: win32 — config desktop\.backend is "win32": the Win32 helper runs under Wine/m);
    expect(lines).toMatch(/Win32 helper running under Wine/);
  });

  it('an MCP agent fills and submits the form through semantic_ui, each action approved with the window in the prompt', async () => {
    const tree = (await observe('tree')) as unknown as { nodes: Node[] };
    const all = tree.nodes.flatMap(flatten);
    expect(tree.nodes[0]).toMatchObject({ role: 'frame', name: 'Win32 Form', path: '/' });
    expect(all.map((n) => `${n.role}:${n.name}`)).toEqual(
      expect.arrayContaining(['label:Name:', 'text:Name:', 'push button:Submit', 'check box:Subscribe', 'list:Colors', 'list item:Blue']),
    );
    const found = (await observe('find', { role: 'check box' })) as { count: number };
    expect(found.count).toBe(1);
    const before = prompts.length;
    expect(await act('set-text', { path: '//text[Name:]', text: 'Ada Lovelace' })).toMatchObject({ text: 'Ada Lovelace', confirmed: true });
    expect(await act('activate', { path: '//check box[Subscribe]' })).toMatchObject({
      activated: true,
      element: { states: expect.arrayContaining(['checked']) },
    });
    await app.state((s) => s.event === 'check' && s.subscribe === true, 'the check box checked');
    await act('activate', { path: '//list item[Blue]' });
    await act('activate', { path: '//push button[Submit]' });
    const submitted = await app.state((s) => s.event === 'submit', 'the form submitted');
    expect(submitted).toMatchObject({ name: 'Ada Lovelace', subscribe: true, color: 'Blue' });
    const asked = prompts.slice(before);
    expect(asked.map((p) => p.op)).toEqual(['set-text', 'activate', 'activate', 'activate']);
    for (const p of asked) {
      expect(p).toMatchObject({ interaction: 'semantic_ui', provider_id: 'uplink/desktop-semantic' });
      expect(Buffer.from(p.preview!.image_png!, 'base64').subarray(1, 4).toString()).toBe('PNG');
      expect(p.preview?.mark).toMatchObject({ width: expect.any(Number), height: expect.any(Number) });
    }
    expect(asked[0]!.preview?.text).toMatch(/^set the text of text "Name:" \(\/1\) to "Ada Lovelace" in "Win32 Form" \(desktop:0x[0-9a-f]+, pid \d+\)/);
    expect(asked[3]!.preview?.text).toMatch(/^activate push button "Submit" \(\/2\)/);
  });

  it('the agent draws on the canvas, which has no accessibility, through visual_ui: click and type, seen in the app and in a screenshot', async () => {
    const tree = (await observe('tree')) as unknown as { nodes: Node[] };
    const canvas = tree.nodes.flatMap(flatten).find((n) => n.role === 'panel' && n.name === '' && n.bounds && n.bounds.width > 250)!;
    const x = canvas.bounds!.x + 60;
    const y = canvas.bounds!.y + 50;
    const before = prompts.length;
    expect(await act('click', { x, y })).toMatchObject({ clicked: true, x, y, button: 'left' });
    await app.state((s) => s.event === 'canvas-click', 'a canvas click');
    expect(await act('type', { text: 'hi' }, 'visual_ui')).toEqual({ typed: 2 });
    await app.state((s) => s.event === 'canvas-key' && s.typed === 'hi', 'the canvas typed "hi"');
    await act('key', { chord: 'Return' });
    await app.state((s) => s.event === 'canvas-enter' && s.dots === 1, 'Return on the canvas');
    const asked = prompts.slice(before);
    expect(asked.map((p) => [p.op, p.interaction])).toEqual([
      ['click', 'visual_ui'],
      ['type', 'visual_ui'],
      ['key', 'visual_ui'],
    ]);
    expect(asked[0]!.preview?.text).toMatch(new RegExp(`^left-click at \\(${x}, ${y}\\) in "Win32 Form"`));
    expect(asked[0]!.preview?.mark).toMatchObject({ x: expect.any(Number), y: expect.any(Number) });
    expect(Buffer.from(asked[0]!.preview!.image_png!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    // The red square the canvas drew where the agent clicked, in a screenshot of the window's size.
    const shot = (await hub.invoke(channel, 'screenshot', {}, { agent })) as { png_base64: string; width: number; height: number };
    const { geometry } = (await hub.invoke(channel, 'observe', {}, { agent, interaction: 'visual_ui' })) as { geometry: { width: number; height: number } };
    expect({ width: shot.width, height: shot.height }).toEqual({ width: geometry.width, height: geometry.height });
    const [r, g, b] = pixel(shot.png_base64, x, y);
    expect(r).toBeGreaterThan(180);
    expect(g + b).toBeLessThan(80);
  });

  it('visual input is refused where another window covers the target, and its screenshot warns', async () => {
    const cover = await startWin32Fixture(session, 'Win32 Cover', ['--topmost']);
    try {
      const before = app.states().filter((s) => s.event === 'canvas-click').length;
      await expect(hub.invoke(channel, 'click', { x: 250, y: 150 }, { agent })).rejects.toMatchObject({
        kind: 'Rejected',
        message: 'target changed',
        evidence: `point (250, 150) is covered by window ${cover.hwnd}`,
      });
      const shot = (await hub.invoke(channel, 'screenshot', {}, { agent })) as { warnings?: string[] };
      expect(shot.warnings).toContainEqual(expect.stringMatching(new RegExp(`^window ${cover.hwnd} is stacked above it and covers 100% of it`)));
      expect(app.states().filter((s) => s.event === 'canvas-click')).toHaveLength(before);
    } finally {
      await cover.stop();
    }
  });

  it('a restarted app with the same title is a new channel; the old address is refused', async () => {
    const first = await startWin32Fixture(session, 'Win32 Restart');
    let second: WineApp | undefined;
    try {
      const old = await waitFor('the first instance listed', async () =>
        (await hub.listChannels()).find((c) => (c.detail as { pid?: number }).pid === first.pid),
      );
      await hub.invoke(old.channel, 'tree', { max_depth: 1 }, { agent });
      await first.stop();
      second = await startWin32Fixture(session, 'Win32 Restart');
      const now = await waitFor('the second instance listed', async () =>
        (await hub.listChannels()).find((c) => (c.detail as { pid?: number }).pid === second!.pid),
      );
      expect(now.channel).not.toBe(old.channel);
      // The address names the exited instance and never moves to the newcomer. A new HWND leaves the
      // old address unlisted (NotFound); an HWND handed out again gets `<hwnd>-2` and the old address
      // stays listed as stale and is refused as "target changed", as on Linux.
      const reused = now.channel.startsWith(`${old.channel}-`);
      const refusal = reused ? { kind: 'Rejected', message: 'target changed' } : { kind: 'NotFound', message: `no channel ${old.channel}` };
      await expect(hub.invoke(old.channel, 'tree', { max_depth: 1 }, { agent })).rejects.toMatchObject(refusal);
      await expect(hub.invoke(old.channel, 'set-text', { path: '//text[Name:]', text: 'wrong window' }, { agent })).rejects.toMatchObject(refusal);
      expect(second.states().some((s) => s.name === 'wrong window')).toBe(false);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  it("Notepad's text is set and read back through `uplink invoke`", async () => {
    const b = await cliBuild;
    const dataDir = mkdtempSync(join(tmpdir(), 'uplink-desktop-win32-cli-'));
    writeConfirmedConfig(dataDir, { ...WIN32, approvals: { rules: [{ id: 'desktop-all', channel: 'desktop:*', op: '*' }] } });
    const vars = Object.fromEntries(
      ['DISPLAY', 'WINEPREFIX', 'WINEDEBUG', 'WINEDLLOVERRIDES', 'UPLINK_DESKTOP_HELPER_EXE'].map((k) => [k, session.env[k]!]),
    ) as Record<string, string>;
    const notepad = startNotepad(session);
    try {
      const entry = await waitFor(
        'Notepad listed',
        async () => {
          const r = await runCli(b, dataDir, ['channels', '--json'], vars);
          const all = JSON.parse(r.stdout || '[]') as Array<{ channel: string; detail: { title?: string; process_name?: string } }>;
          return all.find((c) => c.detail.process_name === 'notepad.exe');
        },
        30_000,
      );
      const set = await runCli(b, dataDir, ['invoke', entry.channel, 'set-text', '{"path": "//text", "text": "hello from uplink"}'], vars);
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ text: 'hello from uplink', confirmed: true });
      const read = await runCli(b, dataDir, ['invoke', entry.channel, 'find', '{"role": "text"}'], vars);
      expect(read.code, read.stderr).toBe(0);
      const { matches } = JSON.parse(read.stdout) as { matches: Array<{ value?: string }> };
      expect(matches[0]!.value).toBe('hello from uplink');
    } finally {
      await notepad.stop();
    }
  });
});
