/**
 * Target integrity as an agent (the real MCP SDK client against `uplink mcp`) and a person (the
 * `uplink` CLI, a fresh process per command) meet it, on a private Xvfb with the real desktop
 * driver: a replaced application, a window claiming another pid, a changed process start time,
 * and the helper killed mid-call. The application's own output proves nothing was injected.
 */
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildCliWithDrivers, cliEnv, ROOT, runCli, tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';
import { semanticChannelOf, startFixture } from './apps';
import type { App } from './apps';
import { startSession, waitFor } from './session';
import type { DesktopSession } from './session';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';
import { validated } from '../../fixtures/validated-driver';

const run = promisify(execFile);
const APPROVE_DESKTOP = { approvals: { rules: [{ id: 'desktop-all', channel: 'desktop:*', op: '*' }] } };
const TARGET_CHANGED = /^uplink error \[desktop:Rejected\]: target changed — hint: /m;

let b: TestBuild;
let session: DesktopSession;
let probe: DesktopDriver;
let dataDir: string;
let overridesFile: string;
let vars: Record<string, string>;
let transport: StdioClientTransport;
let client: Client;
const apps: App[] = [];

async function call(name: string, args: Record<string, unknown>): Promise<{ error: boolean; text: string; data?: Record<string, unknown> }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { error: r.isError === true, text: (r.content[0] as { text: string }).text, data: r.structuredContent };
}
async function fixture(title: string): Promise<App> {
  const app = await startFixture(session, ['--title', title]);
  apps.push(app);
  return app;
}
/** The newest audit row id (0 for none): calls after it are this test's. */
function lastAuditId(): number {
  const db = new Database(join(dataDir, 'audit.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT max(id) AS id FROM entries').get() as { id: number | null }).id ?? 0;
  } finally {
    db.close();
  }
}

/** Whether a `tree` call was handed to a helper (its `started` row) after row `after`. */
function treeStartedSince(after: number): boolean {
  const db = new Database(join(dataDir, 'audit.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT 1 FROM entries WHERE id > ? AND kind = 'started' AND op = 'tree'").get(after) !== undefined;
  } finally {
    db.close();
  }
}

const cli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => runCli(b, dataDir, args, vars);
/** The channel of `pid` as a fresh `uplink channels` process lists it. */
async function cliChannelOf(pid: number): Promise<{ channel: string; detail: { window: string; pid: number; stale?: boolean } }> {
  return waitFor(`uplink channels to list pid ${pid}`, async () => {
    const r = await cli(['channels', '--json']);
    return (JSON.parse(r.stdout) as Array<{ channel: string; detail: { window: string; pid: number; stale?: boolean } }>).find(
      (c) => c.detail.pid === pid && !c.detail.stale,
    );
  });
}
/** No entry or click event since `mark` in the app's own output. */
const untouchedSince = (app: App, mark: number): boolean => !/"event": "(entry|clicks|submit)"/.test(app.stdout().slice(mark));
/** The desktop helper started by process `parent`. */
function helperOf(parent: number): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('uplink_desktop_helper')) return Number(name);
    } catch {
      // the process went away
    }
  }
  return undefined;
}
async function auditOf(channel: string): Promise<Array<Record<string, unknown>>> {
  const r = await cli(['log', '--json', '--channel', channel, '--limit', '200']);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  [b, session] = await Promise.all([buildCliWithDrivers('test/integration/desktop/cli-entry.ts', 'desktop-integrity'), startSession()]);
  dataDir = tmpDataDir('uplink-desktop-integrity-');
  overridesFile = join(dataDir, 'proc-overrides.json');
  writeFileSync(overridesFile, '{}');
  writeConfirmedConfig(dataDir, APPROVE_DESKTOP);
  vars = { DISPLAY: session.env.DISPLAY!, DBUS_SESSION_BUS_ADDRESS: session.env.DBUS_SESSION_BUS_ADDRESS!, UPLINK_TEST_PROC_OVERRIDES: overridesFile };
  probe = validated(createDesktopDriver({ env: session.env, stateDir: false }));
  const env = { ...cliEnv(b, dataDir, vars) } as Record<string, string>;
  delete env.NO_AT_BRIDGE;
  client = new Client({ name: 'claude', version: '1.0.0' });
  transport = new StdioClientTransport({ command: process.execPath, args: [b.launcher, 'mcp'], env, cwd: ROOT, stderr: 'pipe' });
  await client.connect(transport);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await probe?.dispose();
  for (const app of apps) await app.stop();
  await session?.stop();
});

describe('desktop target integrity through MCP and the CLI', () => {
  it('after the app exits and another starts with the same title, the old channel is refused everywhere and the newcomer gets nothing', async () => {
    const first = await fixture('Twin Fixture');
    await semanticChannelOf(probe, first.pid);
    const listed = await cliChannelOf(first.pid);
    const mcpList = (await call('channel_list', {})).data!.channels as Array<{ channel: string; detail: { pid: number } }>;
    // An address is one thing for every Uplink process: the MCP hub and a CLI process agree.
    expect(mcpList.find((c) => c.detail.pid === first.pid)?.channel).toBe(listed.channel);
    await first.stop();
    const second = await fixture('Twin Fixture');
    const newcomer = await semanticChannelOf(probe, second.pid);
    const reused = (newcomer.detail as { window: string }).window === listed.detail.window;
    const mark = second.stdout().length;

    const attempts = [
      await call('channel_act', { channel: listed.channel, op: 'type', args: { text: 'wrong window' } }),
      await call('channel_act', { channel: listed.channel, op: 'set-text', args: { path: '//text[Name]', text: 'wrong window' } }),
      await call('channel_act', { channel: listed.channel, op: 'click', args: { x: 50, y: 95 } }),
    ].map((r) => ({ code: r.error ? 1 : 0, text: r.text }));
    // Each CLI command is a new process: it must still know what the address was bound to.
    for (const argv of [
      ['invoke', listed.channel, 'type', '{"text": "wrong window"}'],
      ['invoke', listed.channel, 'set-text', '{"path": "//text[Name]", "text": "wrong window"}'],
      ['invoke', listed.channel, 'click', '{"x": 50, "y": 95}', '--interaction', 'visual_ui'],
      ['invoke', listed.channel, 'key', '{"chord": "Return"}'],
    ]) {
      const r = await cli(argv);
      attempts.push({ code: r.code, text: r.stderr + r.stdout });
    }
    for (const a of attempts) {
      expect(a.code).not.toBe(0);
      // The X server usually hands the newcomer the same window id: then the refusal names the
      // change; with a new id the old address is simply gone.
      expect(a.text).toMatch(reused ? TARGET_CHANGED : /^uplink error \[desktop:(Rejected\]: target changed|NotFound\])/m);
    }
    if (reused) expect(attempts.map((a) => a.text).join('\n')).toMatch(/act on that channel if you mean it/);
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(untouchedSince(second, mark)).toBe(true);
    // The newcomer has an address of its own; the old one is listed stale while its id is reused.
    const now = await cliChannelOf(second.pid);
    expect(now.channel).not.toBe(listed.channel);
    if (reused) {
      expect(now.channel).toBe(`${listed.channel}-2`);
      const all = JSON.parse((await cli(['channels', '--json'])).stdout) as Array<{ channel: string; detail: { stale?: boolean } }>;
      expect(all.find((c) => c.channel === listed.channel)?.detail.stale).toBe(true);
    }
    const ok = await cli(['invoke', now.channel, 'set-text', '{"path": "//text[Name]", "text": "meant"}']);
    expect(ok.code).toBe(0);
    await second.state((s) => s.entry === 'meant', 'entry = "meant"');
  });

  it('a window claiming another pid (_NET_WM_PID rewritten) is refused by MCP and the CLI, with the evidence in the timeline', async () => {
    const app = await fixture('Claim Fixture');
    await semanticChannelOf(probe, app.pid);
    const { channel, detail } = await cliChannelOf(app.pid);
    await call('channel_list', {});
    await run('xprop', ['-id', detail.window, '-f', '_NET_WM_PID', '32c', '-set', '_NET_WM_PID', String(process.pid)], { env: session.env });
    const mark = app.stdout().length;
    const viaMcp = await call('channel_act', { channel, op: 'click', args: { x: 50, y: 95 } });
    expect(viaMcp.text).toMatch(TARGET_CHANGED);
    const viaMcpType = await call('channel_act', { channel, op: 'type', args: { text: 'x' }, interaction: 'visual_ui' });
    expect(viaMcpType.text).toMatch(TARGET_CHANGED);
    const viaCli = await cli(['invoke', channel, 'click', '{"x": 50, "y": 95}']);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toMatch(TARGET_CHANGED);
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(untouchedSince(app, mark)).toBe(true);
    const evidence = await waitFor('the evidence in the audit', async () =>
      (await auditOf(channel)).find((e) => String(e.detail ?? '').includes(`_NET_WM_PID is ${process.pid}, bound pid is ${app.pid}`)),
    );
    expect(evidence).toMatchObject({ error_kind: 'Rejected' });
    await run('xprop', ['-id', detail.window, '-f', '_NET_WM_PID', '32c', '-set', '_NET_WM_PID', String(app.pid)], { env: session.env });
  });

  it('a changed process start time (pid reused) is refused by MCP and the CLI', async () => {
    const app = await fixture('Reuse Fixture');
    await semanticChannelOf(probe, app.pid);
    const { channel } = await cliChannelOf(app.pid);
    await call('channel_list', {});
    const real = (await linuxProc.startTime(app.pid))!;
    writeFileSync(overridesFile, JSON.stringify({ [app.pid]: real + 7 }));
    try {
      const mark = app.stdout().length;
      for (const r of [
        await call('channel_act', { channel, op: 'set-text', args: { path: '//text[Name]', text: 'x' } }),
        await call('channel_act', { channel, op: 'type', args: { text: 'x' } }),
      ]) {
        expect(r.error).toBe(true);
        expect(r.text).toMatch(TARGET_CHANGED);
      }
      const viaCli = await cli(['invoke', channel, 'type', '{"text": "x"}', '--interaction', 'visual_ui']);
      expect(viaCli.stderr).toMatch(TARGET_CHANGED);
      // A window: refused input must not arrive late.
      await new Promise((r) => setTimeout(r, 300));
      expect(untouchedSince(app, mark)).toBe(true);
    } finally {
      writeFileSync(overridesFile, '{}');
    }
  });

  it('the helper killed mid-call: MCP gets an error, the hub stays up and the next call works; the CLI likewise', async () => {
    const app = await fixture('Crash Fixture');
    await semanticChannelOf(probe, app.pid);
    const { channel } = await cliChannelOf(app.pid);
    await call('channel_list', {});
    const mcpPid = transport.pid!;
    // A stopped application makes the helper's AT-SPI call block, so the kill lands mid-call.
    process.kill(app.pid, 'SIGSTOP');
    let cliRun: Promise<{ code: number; stderr: string }> | undefined;
    try {
      const before = lastAuditId();
      const inFlight = call('channel_observe', { channel, op: 'tree', args: {} });
      const helper = await waitFor('the MCP hub helper', () => helperOf(mcpPid));
      // The hub records `started` as it hands the call to the helper: from then on it is in flight.
      await waitFor('the tree call to start', () => treeStartedSince(before));
      process.kill(helper, 'SIGKILL');
      const failed = await inFlight;
      expect(failed.error).toBe(true);
      expect(failed.text).toMatch(/^uplink error \[desktop:Unavailable\]: desktop helper stopped \(signal SIGKILL\) while running /);

      const cliBefore = lastAuditId();
      const child = spawn(process.execPath, [b.launcher, 'invoke', channel, 'tree', '{}'], { env: cliEnv(b, dataDir, vars), cwd: ROOT });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      cliRun = new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stderr })));
      // Wait until this CLI process's hub has handed the tree call to its helper, then kill it.
      const cliHelper = await waitFor('the CLI helper', () => helperOf(child.pid!));
      await waitFor('the CLI tree call to start', () => treeStartedSince(cliBefore));
      process.kill(cliHelper, 'SIGKILL');
      const r = await cliRun;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/uplink error \[desktop:Unavailable\]: desktop helper stopped \(signal SIGKILL\)/);
    } finally {
      process.kill(app.pid, 'SIGCONT');
    }
    const tree = JSON.parse((await call('channel_observe', { channel, op: 'tree', args: { max_depth: 2 } })).text) as { node_count: number };
    expect(tree.node_count).toBeGreaterThan(1);
    const again = await cli(['invoke', channel, 'tree', '{"max_depth": 2}']);
    expect(again.code).toBe(0);
  });
});
