/**
 * The desktop driver against a real Xvfb, a real AT-SPI bus and real GTK applications: every
 * effect is proven by the application's own output, never by the driver's report alone.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { DriverError } from '../../../src/main/drivers/contract';
import { addrOf, channelOf, semanticChannelOf, startFixture, startZenity } from './apps';
import type { App } from './apps';
import { startSession, waitFor } from './session';
import type { DesktopSession } from './session';
import { validated } from '../../fixtures/validated-driver';

let session: DesktopSession;
let driver: DesktopDriver;
let app: App;
let addr: string;

interface TreeNode {
  role: string;
  name: string;
  path: string;
  states: string[];
  bounds: { x: number; y: number; width: number; height: number } | null;
  children: TreeNode[];
}
const flatten = (n: TreeNode): TreeNode[] => [n, ...n.children.flatMap(flatten)];

beforeAll(async () => {
  session = await startSession();
  driver = validated(createDesktopDriver({ env: session.env }));
  app = await startFixture(session, ['--title', 'Uplink Fixture', '--width', '420', '--height', '220']);
  addr = addrOf(await semanticChannelOf(driver, app.pid));
});

afterAll(async () => {
  await app?.stop();
  await driver?.dispose();
  await session?.stop();
});

describe('desktop driver on a real X display', () => {
  it('lists the fixture window as a channel with its pid, title, class, geometry and both interaction kinds', async () => {
    const channel = (await driver.channels()).find((c) => c.channel === `desktop:${addr}`)!;
    expect(channel.channel).toMatch(/^desktop:0x[0-9a-f]+$/);
    expect(channel.labels).toContain('Uplink Fixture');
    const detail = channel.detail as Record<string, unknown>;
    expect(detail.pid).toBe(app.pid);
    expect(detail.title).toBe('Uplink Fixture');
    expect(detail.class).toContain('gtk-counter.py');
    expect(detail.geometry).toMatchObject({ width: 420, height: 220 });
    expect(detail.interactions).toEqual(['semantic_ui', 'visual_ui']);
    expect(await driver.interactionsFor(addr)).toEqual(['semantic_ui', 'visual_ui']);
  });

  it('observe reports title, pid, geometry and interactions', async () => {
    const seen = (await driver.invoke(addr, 'observe', {}, { interaction: 'visual_ui' })) as Record<string, unknown>;
    expect(seen).toMatchObject({ title: 'Uplink Fixture', pid: app.pid, window: addr, interactions: ['semantic_ui', 'visual_ui'] });
  });

  it('tree shows the entry, the Count button and the label with roles, states, bounds and paths', async () => {
    const tree = (await driver.invoke(addr, 'tree', {}, { interaction: 'semantic_ui' })) as unknown as {
      nodes: TreeNode[];
      node_count: number;
      truncated: boolean;
    };
    const all = tree.nodes.flatMap(flatten);
    expect(tree.nodes[0]).toMatchObject({ role: 'frame', name: 'Uplink Fixture', path: '/' });
    const button = all.find((n) => n.role === 'push button' && n.name === 'Count')!;
    expect(button.states).toContain('sensitive');
    expect(button.bounds!.width).toBeGreaterThan(0);
    expect(all.some((n) => n.role === 'text' && n.states.includes('editable'))).toBe(true);
    expect(all.some((n) => n.role === 'label' && n.name === 'Clicks: 0')).toBe(true);
    expect(tree.truncated).toBe(false);
    const bounded = (await driver.invoke(addr, 'tree', { max_nodes: 2 }, { interaction: 'semantic_ui' })) as { node_count: number; truncated: boolean };
    expect(bounded).toMatchObject({ node_count: 2, truncated: true });
  });

  it('set-text through AT-SPI changes the entry, as the application itself reports', async () => {
    const { matches } = (await driver.invoke(addr, 'find', { role: 'text' }, { interaction: 'semantic_ui' })) as unknown as { matches: TreeNode[] };
    expect(matches).toHaveLength(1);
    const result = (await driver.invoke(addr, 'set-text', { path: matches[0]!.path, text: 'from atspi' }, { interaction: 'semantic_ui' })) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({ text: 'from atspi', confirmed: true });
    await app.state((s) => s.entry === 'from atspi', 'entry = "from atspi"');
  });

  it('type through AT-SPI inserts at the caret and reads back what the entry now contains', async () => {
    const result = (await driver.invoke(addr, 'type', { text: '!', path: '//text[Name]' }, { interaction: 'semantic_ui' })) as {
      text: string;
      confirmed: boolean;
    };
    expect(result.confirmed).toBe(true);
    expect(result.text).toContain('!');
    await app.state((s) => s.entry === result.text, `entry = ${result.text}`);
  });

  it('activate presses the Count button through its default action', async () => {
    const before = countOf(app);
    const result = (await driver.invoke(addr, 'activate', { path: '//push button[Count]' }, { interaction: 'semantic_ui' })) as Record<string, unknown>;
    expect(result).toMatchObject({ activated: true, action: 'click' });
    await app.state((s) => s.clicks === before + 1, `clicks = ${before + 1}`);
  });

  it('an element selector that matches several elements is refused, never guessed', async () => {
    const error = await driver.invoke(addr, 'activate', { path: '//label' }, { interaction: 'semantic_ui' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DriverError);
    expect((error as DriverError).kind).toBe('Rejected');
    expect((error as DriverError).message).toMatch(/ambiguous/);
  });

  it('click and type through X11 XTest reach the application', async () => {
    const { matches } = (await driver.invoke(addr, 'find', { role: 'push button', name: 'Count' }, { interaction: 'semantic_ui' })) as unknown as {
      matches: TreeNode[];
    };
    const b = matches[0]!.bounds!;
    const before = countOf(app);
    await driver.invoke(addr, 'click', { x: b.x + Math.floor(b.width / 2), y: b.y + Math.floor(b.height / 2) }, { interaction: 'visual_ui' });
    await app.state((s) => s.clicks === before + 1, `clicks = ${before + 1} after an X11 click`);

    const entry = ((await driver.invoke(addr, 'find', { role: 'text' }, { interaction: 'semantic_ui' })) as unknown as { matches: TreeNode[] }).matches[0]!
      .bounds!;
    await driver.invoke(addr, 'click', { x: entry.x + Math.floor(entry.width / 2), y: entry.y + Math.floor(entry.height / 2) }, { interaction: 'visual_ui' });
    await driver.invoke(addr, 'key', { chord: 'ctrl+a' }, { interaction: 'visual_ui' });
    const typed = (await driver.invoke(addr, 'type', { text: 'Typed via X11, ok?' }, { interaction: 'visual_ui' })) as { typed: number };
    expect(typed.typed).toBe(18);
    await app
      .state((s) => s.entry === 'Typed via X11, ok?', 'entry = "Typed via X11, ok?"')
      .catch((e: unknown) => {
        throw new Error(`${String(e)}\n${app.stdout().slice(-600)}`);
      });
    await driver.invoke(addr, 'key', { chord: 'Return' }, { interaction: 'visual_ui' });
    await app.state((s) => s.event === 'submit' && s.entry === 'Typed via X11, ok?', 'submit after Return');
  });

  it('types characters that are not on the keyboard map, and refuses unknown key names', async () => {
    await driver.invoke(addr, 'key', { chord: 'ctrl+a' }, { interaction: 'visual_ui' });
    await driver.invoke(addr, 'type', { text: 'Grüße €5 ✓' }, { interaction: 'visual_ui' });
    await app.state((s) => s.entry === 'Grüße €5 ✓', 'entry = "Grüße €5 ✓"');
    await expect(driver.invoke(addr, 'key', { chord: 'ctrl+NoSuchKey' }, { interaction: 'visual_ui' })).rejects.toMatchObject({ kind: 'Invalid' });
    await expect(driver.invoke(addr, 'key', { chord: 'ctrl++' }, { interaction: 'visual_ui' })).rejects.toMatchObject({ kind: 'Invalid' });
  });

  it('screenshot returns a PNG of the window, scaled to max_width', async () => {
    const shot = (await driver.invoke(addr, 'screenshot', {}, { interaction: 'visual_ui' })) as { png_base64: string; width: number; height: number };
    expect(shot).toMatchObject({ width: 420, height: 220 });
    const png = Buffer.from(shot.png_base64, 'base64');
    // ImageMagick decodes it: a valid PNG of the window's size.
    expect(await identify(png)).toBe('PNG 420 220');
    const small = (await driver.invoke(addr, 'screenshot', { max_width: 210 }, { interaction: 'visual_ui' })) as { width: number; height: number };
    expect(small).toMatchObject({ width: 210, height: 110 });
  });

  it('refuses an op through an interaction kind it does not support, without falling back', async () => {
    await expect(driver.invoke(addr, 'click', { x: 1, y: 1 }, { interaction: 'semantic_ui' })).rejects.toMatchObject({ kind: 'Invalid' });
    await expect(driver.invoke(addr, 'tree', {}, { interaction: 'visual_ui' })).rejects.toMatchObject({ kind: 'Invalid' });
    await expect(driver.invoke(addr, 'click', { x: 5000, y: 5 }, { interaction: 'visual_ui' })).rejects.toMatchObject({ kind: 'Rejected' });
  });

  it('the approval preview carries a fresh screenshot with the click point or element bounds marked', async () => {
    const click = (await driver.preview!(addr, 'click', { x: 100, y: 50 }))!;
    expect(click.text).toMatch(/left-click at \(100, 50\) in "Uplink Fixture"/);
    expect(click.image_png).toBeTruthy();
    expect(click.mark).toEqual({ x: 100, y: 50 });
    const small = validated(createDesktopDriver({ env: session.env, config: () => ({ preview_max_width: 210 }) }));
    try {
      const scaled = (await small.preview!(addr, 'click', { x: 100, y: 50 }))!;
      expect(scaled.mark).toEqual({ x: 50, y: 25 });
    } finally {
      await small.dispose();
    }
    const set = (await driver.preview!(addr, 'set-text', { path: '//text[Name]', text: 'x' }))!;
    expect(set.text).toMatch(/set the text of text "Name"/);
    expect(set.mark).toMatchObject({ width: expect.any(Number), height: expect.any(Number) });
  });

  it('the approval preview warns when another window is stacked over the target, and stops once it is gone', async () => {
    const before = (await driver.preview!(addr, 'click', { x: 100, y: 50 }))!;
    expect(before.warnings ?? []).not.toContainEqual(expect.stringMatching(/stacked above it/));
    const cover = await startFixture(session, ['--title', 'Cover', '--width', '200', '--height', '100']);
    try {
      const coverAddr = addrOf(await channelOf(driver, cover.pid));
      const covered = (await driver.preview!(addr, 'click', { x: 100, y: 50 }))!;
      expect(covered.image_png).toBeTruthy();
      expect(covered.warnings).toContainEqual(expect.stringMatching(new RegExp(`^window ${coverAddr} is stacked above it and covers \\d+% of it`)));
    } finally {
      await cover.stop();
    }
    await waitFor(
      'the cover to go',
      async () => !((await driver.preview!(addr, 'click', { x: 100, y: 50 }))!.warnings ?? []).some((w) => w.includes('stacked above it')),
    );
  });

  it('sensitive text reaches the app but never comes back in the result or the preview', async () => {
    const preview = (await driver.preview!(addr, 'set-text', { path: '//text[Name]', text: 'hunter2', sensitive: true }))!;
    expect(preview.text).toContain('7 characters (sensitive, hidden)');
    expect(preview.text).not.toContain('hunter2');
    const result = (await driver.invoke(addr, 'set-text', { path: '//text[Name]', text: 'hunter2', sensitive: true }, { interaction: 'semantic_ui' })) as {
      text: string;
      confirmed: boolean;
    };
    expect(result).toMatchObject({ confirmed: true, text: '•••• (sensitive, 7 chars)' });
    await app.state((s) => s.entry === 'hunter2', 'entry = the secret');
  });

  it('doctor reports the display, XTest, X-Resource and the accessibility bus', async () => {
    const report = await driver.doctor();
    expect(report.ok).toBe(true);
    expect(report.lines.join('\n')).toMatch(
      /display :\d+ reachable[\s\S]*XTEST extension present[\s\S]*X-Resource extension present[\s\S]*accessibility bus reachable \(\d+ applications\)/,
    );
    expect(report.lines.join('\n')).not.toMatch(/Wayland/);
  });

  it('doctor names a Wayland session running XWayland, and still serves its X11 clients', async () => {
    const xwayland = validated(createDesktopDriver({ env: { ...session.env, WAYLAND_DISPLAY: 'wayland-uplink-test' }, stateDir: false }));
    try {
      const report = await xwayland.doctor();
      expect(report.lines.join('\n')).toMatch(/Wayland session with XWayland: only X11 clients are listed[\s\S]*XTEST extension present/);
      expect((await xwayland.channels()).some((c) => (c.detail as { pid: number }).pid === app.pid)).toBe(true);
    } finally {
      await xwayland.dispose();
    }
  });

  it('drives zenity --entry to completion through X11: its printed result proves the text arrived', async () => {
    const zenity = startZenity(session, 'Uplink Zenity');
    try {
      const channel = await semanticChannelOf(driver, zenity.pid);
      const z = addrOf(channel);
      await driver.invoke(z, 'type', { text: 'hello zenity' }, { interaction: 'visual_ui' });
      await driver.invoke(z, 'key', { chord: 'Return' }, { interaction: 'visual_ui' });
      await waitFor('zenity to exit', () => zenity.child.exitCode !== null);
      expect(zenity.stdout().trim()).toBe('hello zenity');
    } finally {
      await zenity.stop();
    }
  });

  it('drives zenity --entry to completion through AT-SPI: set-text, then activate OK', async () => {
    const zenity = startZenity(session, 'Uplink Zenity 2');
    try {
      const z = addrOf(await semanticChannelOf(driver, zenity.pid));
      const { matches } = (await driver.invoke(z, 'find', { role: 'text' }, { interaction: 'semantic_ui' })) as unknown as { matches: TreeNode[] };
      expect(matches).toHaveLength(1);
      await driver.invoke(z, 'set-text', { path: matches[0]!.path, text: 'semantic zenity' }, { interaction: 'semantic_ui' });
      await driver.invoke(z, 'activate', { path: '//push button[OK]' }, { interaction: 'semantic_ui' });
      await waitFor('zenity to exit', () => zenity.child.exitCode !== null);
      expect(zenity.stdout().trim()).toBe('semantic zenity');
    } finally {
      await zenity.stop();
    }
  });
});

/** `identify` (ImageMagick) of an image given on stdin: "<format> <width> <height>". */
function identify(image: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('identify', ['-format', '%m %w %h', '-'], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(out.trim()));
    child.stdin.end(image);
  });
}

function countOf(a: App): number {
  const lines = a
    .stdout()
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  return (JSON.parse(lines[lines.length - 1]!) as { clicks?: number }).clicks ?? 0;
}
