/**
 * A pure Wayland session (weston, headless): no client may see or type into other clients'
 * windows, so visual_ui is Unavailable with that reason, while semantic_ui still reaches the
 * application through AT-SPI. Channels are the accessible frames, bound to pid + start time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { addrOf, semanticChannelOf, startFixture } from './apps';
import type { App } from './apps';
import { hasWeston, startWaylandSession } from './session';
import type { DesktopSession } from './session';
import { validated } from '../../fixtures/validated-driver';
import { prerequisite } from '../../fixtures/prerequisite';

const weston = prerequisite('weston (/usr/bin/weston)', hasWeston(), 'apt-get install weston (or bash scripts/install-system-deps.sh)');

describe.skipIf(weston.skip)('desktop driver in a Wayland session', () => {
  let session: DesktopSession;
  let driver: DesktopDriver;
  let app: App;
  let addr: string;

  beforeAll(weston.check);
  beforeAll(async () => {
    session = await startWaylandSession();
    driver = validated(createDesktopDriver({ env: session.env }));
    app = await startFixture(session, ['--title', 'Wayland Fixture']);
    addr = addrOf(await semanticChannelOf(driver, app.pid));
  });

  afterAll(async () => {
    await app?.stop();
    await driver?.dispose();
    await session?.stop();
  });

  it('doctor reports the Wayland session and why visual input is unavailable', async () => {
    const report = await driver.doctor();
    expect(report.lines.join('\n')).toMatch(
      /Wayland session \(no DISPLAY\): visual_ui is unavailable because Wayland lets no client read other windows or inject input/,
    );
    expect(report.lines.join('\n')).toMatch(/accessibility bus reachable/);
  });

  it('lists the application window from its accessible frame, semantic only', async () => {
    const channel = (await driver.channels()).find((c) => c.channel === `desktop:${addr}`)!;
    expect(channel.channel).toMatch(/^desktop:a11y-\d+-\w+$/);
    expect(channel.detail).toMatchObject({ pid: app.pid, title: 'Wayland Fixture', interactions: ['semantic_ui'] });
    expect(await driver.interactionsFor(addr)).toEqual(['semantic_ui']);
  });

  it('set-text and activate work through AT-SPI, proven by the application', async () => {
    await driver.invoke(addr, 'set-text', { path: '//text[Name]', text: 'on wayland' }, { interaction: 'semantic_ui' });
    await app.state((s) => s.entry === 'on wayland', 'entry = "on wayland"');
    await driver.invoke(addr, 'activate', { path: '//push button[Count]' }, { interaction: 'semantic_ui' });
    await app.state((s) => s.clicks === 1, 'clicks = 1');
  });

  it('visual input is Unavailable with the Wayland reason', async () => {
    for (const [op, args] of [
      ['click', { x: 5, y: 5 }],
      ['type', { text: 'x' }],
      ['screenshot', {}],
    ] as const) {
      await expect(driver.invoke(addr, op, args, { interaction: 'visual_ui' })).rejects.toMatchObject({
        kind: 'Unavailable',
        message: 'visual input is not available in a Wayland session',
      });
    }
  });

  it('refuses to act once the application has exited', async () => {
    await app.stop();
    await expect(driver.invoke(addr, 'set-text', { path: '//text[Name]', text: 'gone' }, { interaction: 'semantic_ui' })).rejects.toMatchObject({
      kind: 'Rejected',
      message: 'target changed',
    });
  });
});
