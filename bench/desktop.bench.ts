/**
 * Desktop driver latency on a private Xvfb + D-Bus session: `screenshot` of an 800×600 window,
 * `tree` of the GTK fixture, `type` of 100 characters through each interaction kind — beside
 * Debian's `import -window` and `xdotool type`, measured in the same run on the same window.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDesktopDriver } from '../src/main/drivers/desktop';
import { startSession, stopChild, waitFor } from '../test/integration/desktop/session';
import { median } from './types';
import type { BenchReport, BenchRow } from './types';
import { validated } from '../test/fixtures/validated-driver';

const exec = promisify(execFile);
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const TEXT = 'The quick brown fox jumps over the lazy dog; 0123456789. Pack my box with five dozen liquor jugs!!'.padEnd(100, '.');

async function timeIt(n: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

export async function run(): Promise<BenchReport> {
  const session = await startSession();
  const fixture = spawn(PYTHON, [join(process.cwd(), 'test', 'fixtures', 'gtk-counter.py'), '--title', 'Bench Fixture', '--width', '800', '--height', '600'], {
    env: session.env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  fixture.stdout.setEncoding('utf8');
  fixture.stdout.on('data', (c: string) => (out += c));
  const driver = validated(createDesktopDriver({ env: session.env }));
  try {
    const channel = await waitFor('the fixture channel', async () =>
      (await driver.channels()).find((c) => {
        const d = c.detail as { pid?: number; interactions?: string[] };
        return d.pid === fixture.pid && (d.interactions ?? []).includes('semantic_ui');
      }),
    );
    const addr = channel.channel.slice('desktop:'.length);
    // `import` wants the X window id; an address may carry a `-<n>` generation suffix.
    const xid = (channel.detail as { window: string }).window;
    const sem = { interaction: 'semantic_ui' as const };
    const vis = { interaction: 'visual_ui' as const };
    const xenv = { env: session.env, maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' as const };

    // Warm up both paths (helper start, AT-SPI connection, X connection).
    await driver.invoke(addr, 'tree', {}, sem);
    await driver.invoke(addr, 'screenshot', {}, vis);

    const shot = await timeIt(20, () => driver.invoke(addr, 'screenshot', {}, vis));
    const importShot = await timeIt(10, () => exec('import', ['-window', xid, 'png:-'], xenv));
    const tree = await timeIt(20, () => driver.invoke(addr, 'tree', {}, sem));
    const observe = await timeIt(20, () => driver.invoke(addr, 'observe', {}, vis));

    const reset = (): Promise<unknown> => driver.invoke(addr, 'set-text', { path: '//text[Name]', text: '' }, sem);
    const typeSem = await medianOf(10, async () => {
      await reset();
      const t0 = performance.now();
      await driver.invoke(addr, 'type', { text: TEXT, path: '//text[Name]' }, sem);
      return performance.now() - t0;
    });
    // Visual typing goes to the focused widget: put the caret in the entry first.
    await driver.invoke(addr, 'click', { x: 400, y: 54 }, vis);
    const typeVis = await medianOf(5, async () => {
      await reset();
      const t0 = performance.now();
      await driver.invoke(addr, 'type', { text: TEXT }, vis);
      return performance.now() - t0;
    });
    await waitFor('the visual text in the entry', () => out.includes(JSON.stringify(TEXT).slice(1, -1)));
    const xdoDefault = await medianOf(3, async () => {
      await reset();
      const t0 = performance.now();
      await exec('xdotool', ['type', TEXT], { env: session.env });
      return performance.now() - t0;
    });
    const xdoFast = await medianOf(5, async () => {
      await reset();
      const t0 = performance.now();
      await exec('xdotool', ['type', '--delay', '0', TEXT], { env: session.env });
      return performance.now() - t0;
    });

    const rows: BenchRow[] = [
      { name: 'screenshot 800×600 (visual_ui)', value: shot, unit: 'ms', note: 'median of 20, PNG' },
      { name: 'import -window (ImageMagick)', value: importShot, unit: 'ms', note: 'median of 10, PNG' },
      { name: 'screenshot ratio uplink / import', value: shot / importShot, unit: '×' },
      { name: 'tree of the fixture (semantic_ui)', value: tree, unit: 'ms', note: 'median of 20' },
      { name: 'observe (per-call floor)', value: observe, unit: 'ms', note: 'median of 20' },
      { name: 'type 100 chars (semantic_ui)', value: typeSem, unit: 'ms', note: 'median of 10, AT-SPI insert + read-back' },
      { name: 'type 100 chars (visual_ui)', value: typeVis, unit: 'ms', note: 'median of 5, XTest, focus checked per key' },
      { name: 'xdotool type (default 12 ms delay)', value: xdoDefault, unit: 'ms', note: 'median of 3' },
      { name: 'xdotool type --delay 0', value: xdoFast, unit: 'ms', note: 'median of 5' },
      { name: 'type ratio visual / xdotool default', value: typeVis / xdoDefault, unit: '×' },
      { name: 'type ratio visual / xdotool --delay 0', value: typeVis / xdoFast, unit: '×' },
      { name: 'type ratio semantic / xdotool --delay 0', value: typeSem / xdoFast, unit: '×' },
    ];
    return { title: 'desktop driver (Xvfb, GTK 3 fixture)', rows };
  } finally {
    await driver.dispose();
    await stopChild(fixture);
    await session.stop();
  }
}

async function medianOf(n: number, sample: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < n; i++) values.push(await sample());
  return median(values);
}
