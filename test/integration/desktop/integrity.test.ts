/**
 * Target integrity: a channel is bound to (window, pid, process start time) and every action
 * re-checks that binding; the helper's failures never take the driver down.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver, ProcReader } from '../../../src/main/drivers/desktop';
import { HelperClient } from '../../../src/main/drivers/desktop/helper-client';
import { locateHelperScript } from '../../../src/main/drivers/desktop/helper-path';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';
import { PYTHON, addrOf, channelOf, semanticChannelOf, startFixture } from './apps';
import type { App } from './apps';
import { startSession, waitFor } from './session';
import type { DesktopSession } from './session';
import { validated } from '../../fixtures/validated-driver';

const run = promisify(execFile);
let session: DesktopSession;
const apps: App[] = [];
const drivers: DesktopDriver[] = [];

/** A /proc reader whose start times can be overridden: a live system cannot reuse a pid on demand. */
function fakeableProc(): ProcReader & { fakeStart: Map<number, number> } {
  const fakeStart = new Map<number, number>();
  return {
    fakeStart,
    startTime: async (pid) => fakeStart.get(pid) ?? linuxProc.startTime(pid),
    processName: (pid) => linuxProc.processName(pid),
  };
}

async function fixture(title: string): Promise<App> {
  const app = await startFixture(session, ['--title', title]);
  apps.push(app);
  return app;
}
function driverWith(options: Parameters<typeof createDesktopDriver>[0] = {}): DesktopDriver {
  const d = validated(createDesktopDriver({ env: session.env, ...options }));
  drivers.push(d);
  return d;
}
const rejection = (p: Promise<unknown>): Promise<DriverError> =>
  p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as DriverError,
  );
const noInputSince = (app: App, mark: number): boolean =>
  !app.stdout().slice(mark).includes('"event": "entry"') && !app.stdout().slice(mark).includes('"event": "clicks"');

beforeAll(async () => {
  session = await startSession();
});

afterAll(async () => {
  for (const app of apps) await app.stop();
  for (const d of drivers) await d.dispose();
  await session?.stop();
});

describe('desktop target integrity', () => {
  it('refuses to act when the app exits and another starts with the same title, and injects nothing into the newcomer', async () => {
    const driver = driverWith();
    const first = await fixture('Same Title');
    const addr = addrOf(await channelOf(driver, first.pid));
    await first.stop();
    const second = await fixture('Same Title');
    await semanticChannelOf(createProbe(), second.pid);
    const mark = second.stdout().length;
    for (const [op, args, interaction] of [
      ['type', { text: 'wrong window' }, 'visual_ui'],
      ['set-text', { path: '/0/1', text: 'wrong window' }, 'semantic_ui'],
      ['click', { x: 50, y: 95 }, 'visual_ui'],
    ] as const) {
      const error = await rejection(driver.invoke(addr, op, args, { interaction }));
      expect(error.kind).toBe('Rejected');
      expect(error.message).toBe('target changed');
      expect(error.evidence).toMatch(new RegExp(`${first.pid}`));
    }
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(noInputSince(second, mark)).toBe(true);
    // A new listing shows the newcomer under an address of its own; the old address stays refused.
    const relisted = await channelOf(driver, second.pid);
    expect((relisted.detail as { pid: number }).pid).toBe(second.pid);
    expect(relisted.channel).not.toBe(`desktop:${addr}`);
    await expect(driver.invoke(addr, 'observe', {}, { interaction: 'visual_ui' })).rejects.toMatchObject({ kind: 'Rejected' });
    await driver.invoke(addrOf(relisted), 'observe', {}, { interaction: 'visual_ui' });
  });

  it('refuses to act when the window reports another pid (_NET_WM_PID changed)', async () => {
    const driver = driverWith();
    const app = await fixture('Pid Fixture');
    const listedFirst = await channelOf(driver, app.pid);
    const addr = addrOf(listedFirst);
    // The X window id (the address may carry a `-<n>` generation suffix).
    const xid = (listedFirst.detail as { window: string }).window;
    const other = process.pid;
    await run('xprop', ['-id', xid, '-f', '_NET_WM_PID', '32c', '-set', '_NET_WM_PID', String(other)], { env: session.env });
    const mark = app.stdout().length;
    const error = await rejection(driver.invoke(addr, 'click', { x: 50, y: 95 }, { interaction: 'visual_ui' }));
    expect(error).toMatchObject({ kind: 'Rejected', message: 'target changed' });
    expect(error.evidence).toContain(`_NET_WM_PID is ${other}, bound pid is ${app.pid}`);
    const listed = (await driver.channels()).find((c) => c.channel === `desktop:${addr}`)!;
    expect(listed.detail).toMatchObject({ pid: app.pid, interactions: [], binding_mismatch: expect.stringContaining('_NET_WM_PID') });
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(noInputSince(app, mark)).toBe(true);
    // Put the truth back: the binding holds again.
    await run('xprop', ['-id', xid, '-f', '_NET_WM_PID', '32c', '-set', '_NET_WM_PID', String(app.pid)], { env: session.env });
    await driver.invoke(addr, 'click', { x: 50, y: 95 }, { interaction: 'visual_ui' });
    await app.state((s) => s.clicks === 1, 'clicks = 1');
  });

  it('refuses to act when the process start time changed (pid reused), in the driver and in the helper', async () => {
    const proc = fakeableProc();
    const driver = driverWith({ proc });
    const app = await fixture('Start Fixture');
    const addr = addrOf(await channelOf(driver, app.pid));
    const real = (await linuxProc.startTime(app.pid))!;
    proc.fakeStart.set(app.pid, real + 1);
    const error = await rejection(driver.invoke(addr, 'type', { text: 'x' }, { interaction: 'visual_ui' }));
    expect(error).toMatchObject({ kind: 'Rejected', message: 'target changed' });
    expect(error.evidence).toContain(`start time is ${real + 1}, bound start time is ${real}`);

    // The helper checks /proc itself right before acting: a binding with another start time is refused there too.
    const helper = new HelperClient({ command: [PYTHON, locateHelperScript()], env: session.env, callTimeoutMs: 20_000 });
    try {
      const target = { window: addr, pid: app.pid, start_time: real - 1 };
      const raw = await rejection(helper.call({ op: 'click', target, args: { x: 50, y: 95 } }));
      expect(raw).toMatchObject({ kind: 'Rejected', message: 'target changed' });
      expect(raw.evidence).toContain('pid reused');
    } finally {
      await helper.dispose();
    }
    expect(app.stdout()).not.toContain('"event": "clicks"');
  });

  it('a helper killed mid-call fails that call, the driver stays up and the next call works', async () => {
    const driver = driverWith();
    const app = await fixture('Kill Fixture');
    const addr = addrOf(await semanticChannelOf(driver, app.pid));
    // A stopped application makes the helper's AT-SPI call block, so the kill lands mid-call.
    process.kill(app.pid, 'SIGSTOP');
    try {
      const inFlight = rejection(driver.invoke(addr, 'tree', {}, { interaction: 'semantic_ui' }));
      // Time for the call to reach the helper: nothing outside the driver shows when it has.
      await new Promise((r) => setTimeout(r, 300));
      const helperPid = driver.helperPid();
      expect(helperPid).toBeDefined();
      process.kill(helperPid!, 'SIGKILL');
      const error = await inFlight;
      expect(error).toBeInstanceOf(DriverError);
      expect(error.kind).toBe('Unavailable');
      expect(error.message).toMatch(/desktop helper stopped \(signal SIGKILL\) while running tree/);
    } finally {
      process.kill(app.pid, 'SIGCONT');
    }
    const tree = (await driver.invoke(addr, 'tree', {}, { interaction: 'semantic_ui' })) as { node_count: number };
    expect(tree.node_count).toBeGreaterThan(3);
    expect(driver.helperPid()).toBeDefined();
  });

  it('a hung helper call times out, and the restarted helper serves the next call', async () => {
    const driver = driverWith({ callTimeoutMs: 1000 });
    const app = await fixture('Hang Fixture');
    const addr = addrOf(await semanticChannelOf(driver, app.pid));
    const before = driver.helperPid();
    process.kill(app.pid, 'SIGSTOP');
    try {
      const error = await rejection(driver.invoke(addr, 'find', { role: 'text' }, { interaction: 'semantic_ui' }));
      expect(error.kind).toBe('Timeout');
    } finally {
      process.kill(app.pid, 'SIGCONT');
    }
    const found = await waitFor(
      'find after the restart',
      async () => ((await driver.invoke(addr, 'find', { role: 'text' }, { interaction: 'semantic_ui' })) as { count: number }).count === 1 || undefined,
    );
    expect(found).toBe(true);
    expect(driver.helperPid()).not.toBe(before);
  });

  it('semantic type with no path and no focused entry among several is refused as ambiguous, never guessed', async () => {
    const driver = driverWith();
    const app = await startFixture(session, ['--title', 'Two Entries Fixture', '--second-entry']);
    apps.push(app);
    const addr = addrOf(await semanticChannelOf(driver, app.pid));
    const mark = app.stdout().length;
    const error = await rejection(driver.invoke(addr, 'type', { text: 'where?' }, { interaction: 'semantic_ui' }));
    expect(error).toMatchObject({ kind: 'Rejected', message: 'ambiguous target: no focused editable and 2 candidates' });
    expect(error.evidence).toMatch(/^\/\d+(\/\d+)*, \/\d+(\/\d+)*$/);
    expect(noInputSince(app, mark)).toBe(true);
  });

  it('two identical windows of one process: semantic ops on either are refused as ambiguous, never guessed', async () => {
    const driver = driverWith();
    const app = await startFixture(session, ['--title', 'Twin Window Fixture', '--twin-window']);
    apps.push(app);
    await semanticChannelOf(driver, app.pid);
    const both = await waitFor('two windows of the fixture', async () => {
      const mine = (await driver.channels()).filter((c) => (c.detail as { pid: number }).pid === app.pid);
      return mine.length === 2 ? mine : undefined;
    });
    for (const channel of both) {
      const error = await rejection(driver.invoke(addrOf(channel), 'set-text', { path: '//text[Name]', text: 'which one?' }, { interaction: 'semantic_ui' }));
      expect(error).toMatchObject({ kind: 'Rejected', message: expect.stringMatching(/^ambiguous target: 2 accessible windows of process \d+ match/) });
    }
    expect(app.stdout()).not.toContain('"event": "entry"');
  });

  it('refuses a click point outside the window, and acts on an unmapped window never: nothing is injected', async () => {
    const driver = driverWith();
    const app = await fixture('Bounds Fixture');
    const channel = await channelOf(driver, app.pid);
    const addr = addrOf(channel);
    const xid = (channel.detail as { window: string }).window;
    const outside = await rejection(driver.invoke(addr, 'click', { x: 5000, y: 10 }, { interaction: 'visual_ui' }));
    expect(outside).toMatchObject({
      kind: 'Rejected',
      message: 'point outside the window',
      evidence: expect.stringMatching(/^\(5000, 10\) is outside \d+x\d+$/),
    });
    await run('xdotool', ['windowunmap', '--sync', xid], { env: session.env });
    try {
      for (const [op, args, interaction] of [
        ['click', { x: 50, y: 95 }, 'visual_ui'],
        ['type', { text: 'hidden' }, 'visual_ui'],
        ['set-text', { path: '//text[Name]', text: 'hidden' }, 'semantic_ui'],
      ] as const) {
        const error = await rejection(driver.invoke(addr, op, args, { interaction }));
        expect(error).toMatchObject({ kind: 'Rejected', message: 'target changed', evidence: expect.stringContaining(`window ${xid} is not mapped`) });
      }
    } finally {
      await run('xdotool', ['windowmap', '--sync', xid], { env: session.env });
    }
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(noInputSince(app, 0)).toBe(true);
  });

  it('refuses to resolve a window by its title: labels are not unique and outlive processes', async () => {
    const driver = driverWith();
    const app = await fixture('Label Fixture');
    const channel = await channelOf(driver, app.pid);
    const error = await rejection(driver.invoke('Label Fixture', 'observe', {}, { interaction: 'visual_ui' }));
    expect(error.kind).toBe('Invalid');
    expect(error.hint).toBe(`use ${channel.channel}`);
  });

  it('without a reachable accessibility bus the visual kind still works and doctor says why', async () => {
    const driver = driverWith({ env: { ...session.env, AT_SPI_BUS_ADDRESS: 'unix:path=/nonexistent/uplink-a11y-bus' } });
    const app = await fixture('No Bus Fixture');
    const channel = await channelOf(driver, app.pid);
    expect((channel.detail as { interactions: string[] }).interactions).toEqual(['visual_ui']);
    const error = await rejection(driver.invoke(addrOf(channel), 'tree', {}, { interaction: 'semantic_ui' }));
    expect(error).toMatchObject({ kind: 'Unavailable', message: expect.stringContaining('accessibility bus') });
    await driver.invoke(addrOf(channel), 'click', { x: 50, y: 95 }, { interaction: 'visual_ui' });
    await app.state((s) => s.clicks === 1, 'clicks = 1');
    const report = await driver.doctor();
    expect(report.ok).toBe(false);
    expect(report.lines.join('\n')).toMatch(/accessibility: accessibility bus unix:path=\/nonexistent\/uplink-a11y-bus unreachable/);
  });

  it('read_deny in the live config hides a window and refuses actions on it, even when already bound', async () => {
    const config: { read_deny?: string[] } = {};
    const driver = driverWith({ config: () => config });
    const app = await fixture('Deny Me Fixture');
    const channel = await channelOf(driver, app.pid);
    config.read_deny = ['Deny Me*'];
    expect((await driver.channels()).some((c) => c.channel === channel.channel)).toBe(false);
    const error = await rejection(driver.invoke(addrOf(channel), 'click', { x: 50, y: 95 }, { interaction: 'visual_ui' }));
    expect(error).toMatchObject({ kind: 'Rejected', message: `${channel.channel} is hidden by the desktop.read_deny config` });
    expect(app.stdout()).not.toContain('"event": "clicks"');
  });

  it('read_deny matches a title with / and an emoji with the shared glob (? is one code point)', async () => {
    const config: { read_deny?: string[] } = {};
    const driver = driverWith({ config: () => config });
    const app = await fixture('Notes 📝 a/b Fixture');
    const channel = await channelOf(driver, app.pid);
    config.read_deny = ['Notes ? a*Fixture'];
    expect((await driver.channels()).some((c) => c.channel === channel.channel)).toBe(false);
    config.read_deny = ['Notes ?? a*Fixture'];
    expect((await driver.channels()).some((c) => c.channel === channel.channel)).toBe(true);
  });

  it('a helper that cannot start yields Unavailable with a hint, and doctor says so', async () => {
    const driver = driverWith({ helperCommand: ['/nonexistent/python3', 'helper.py'] });
    const error = await rejection(driver.channels());
    expect(error).toMatchObject({ kind: 'Unavailable' });
    expect(error.hint).toMatch(/python3/);
    const report = await driver.doctor();
    expect(report.ok).toBe(false);
  });
});

/** A second driver instance used only to wait until an app is accessible. */
function createProbe(): DesktopDriver {
  return driverWith();
}
