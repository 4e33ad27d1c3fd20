/**
 * One conformance suite for every desktop helper: the Linux helper (Python, AT-SPI + X11) on a
 * private Xvfb with the GTK fixture, and the Win32 helper (HWND + MSAA + SendInput) under Wine
 * with the Win32 fixture. Both are spoken to over their raw stdio, line by line, exactly as
 * docs/desktop-helper-protocol.md describes; results are checked against the driver's op schemas
 * and every effect is proven by the fixture app's own output.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaValidator } from '../../../src/main/kernel/registry';
import { DESKTOP_OPS } from '../../../src/main/drivers/desktop';
import { locateHelperScript } from '../../../src/main/drivers/desktop/helper-path';
import { PYTHON, startFixture } from './apps';
import { startSession } from './session';
import { startWin32Fixture, startWineSession, wineTools } from './wine';

interface Reply {
  id: number | null;
  ok: boolean;
  result?: Record<string, unknown>;
  error?: { kind: string; message: string; hint?: string; evidence?: string };
}

/** A helper over its pipes: one line out, one line back. */
class RawHelper {
  #child: ChildProcessWithoutNullStreams;
  #buffer = '';
  #waiting: Array<(line: string) => void> = [];
  #lines: string[] = [];
  #id = 0;
  constructor(command: string[], env: NodeJS.ProcessEnv) {
    this.#child = spawn(command[0]!, command.slice(1), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stderr.resume();
    this.#child.stdout.setEncoding('utf8');
    this.#child.stdout.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        const w = this.#waiting.shift();
        if (w) w(line);
        else this.#lines.push(line);
      }
    });
  }
  raw(line: string): Promise<Reply> {
    this.#child.stdin.write(`${line}\n`);
    const next = this.#lines.shift();
    if (next !== undefined) return Promise.resolve(JSON.parse(next) as Reply);
    return new Promise((resolve) => this.#waiting.push((l) => resolve(JSON.parse(l) as Reply)));
  }
  async call(op: string, extra: Record<string, unknown> = {}): Promise<Reply> {
    const id = ++this.#id;
    const reply = await this.raw(JSON.stringify({ id, op, ...extra }));
    expect(reply.id).toBe(id);
    return reply;
  }
  /** The result of a call that must succeed. */
  async ok(op: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const reply = await this.call(op, extra);
    if (!reply.ok) throw new Error(`${op} failed: ${JSON.stringify(reply.error)}`);
    return reply.result!;
  }
  stop(): void {
    this.#child.kill('SIGKILL');
  }
}

/** What differs between the platforms' fixtures; everything else is the same test. */
interface Bench {
  helper: RawHelper;
  platform: string;
  pid: number;
  title: string;
  /** Selectors of the fixture's name entry and its button. */
  text: string;
  button: string;
  /** Resolves once the fixture itself reports the entry's text / the button's press. */
  sawText(text: string): Promise<unknown>;
  sawPress(): Promise<unknown>;
  stop(): Promise<void>;
}

const resultCheck = (op: string) => {
  const validate = schemaValidator(DESKTOP_OPS.find((o) => o.op === op)!.result_schema!);
  return (result: unknown): void => {
    const ok = validate(result);
    expect(ok, `${op} result against its schema: ${JSON.stringify(validate.errors)}`).toBe(true);
  };
};

/** Width, height and the raw scanlines of an 8-bit RGB PNG. */
function decodePng(b64: string): { width: number; height: number; raw: Buffer } {
  const png = Buffer.from(b64, 'base64');
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let at = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const len = png.readUInt32BE(at);
    const type = png.subarray(at + 4, at + 8).toString('latin1');
    const data = png.subarray(at + 8, at + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect([data[8], data[9]]).toEqual([8, 2]);
    }
    if (type === 'IDAT') idat.push(data);
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  expect(raw.length).toBe((width * 3 + 1) * height);
  return { width, height, raw };
}

async function linuxBench(): Promise<Bench> {
  const session = await startSession();
  const app = await startFixture(session, ['--title', 'Conformance GTK', '--width', '420', '--height', '220']);
  const helper = new RawHelper([PYTHON, locateHelperScript()], session.env);
  return {
    helper,
    platform: 'x11',
    pid: app.pid,
    title: 'Conformance GTK',
    text: '//text[Name]',
    button: '//push button[Count]',
    sawText: (text) => app.state((s) => s.entry === text, `entry = ${text}`),
    sawPress: () => app.state((s) => (s.clicks ?? 0) >= 1, 'a click'),
    async stop() {
      helper.stop();
      await app.stop();
      await session.stop();
    },
  };
}

async function win32Bench(): Promise<Bench> {
  const session = await startWineSession();
  const app = await startWin32Fixture(session, 'Conformance Win32');
  const helper = new RawHelper([session.wine, session.build.helper], session.env);
  return {
    helper,
    platform: 'win32',
    pid: app.pid,
    title: 'Conformance Win32',
    text: '//text[Name:]',
    button: '//push button[Submit]',
    sawText: (text) => app.state((s) => s.name === text, `name = ${text}`),
    sawPress: () => app.state((s) => s.event === 'submit', 'submit'),
    async stop() {
      helper.stop();
      await app.stop();
      await session.stop();
    },
  };
}

const BACKENDS: Array<{ name: string; start: () => Promise<Bench>; needs?: typeof wineTools }> = [
  { name: 'Linux helper (AT-SPI + X11)', start: linuxBench },
  { name: 'Win32 helper (MSAA + SendInput, under Wine)', start: win32Bench, needs: wineTools },
];

describe.each(BACKENDS)('$name speaks the desktop helper protocol', ({ start, needs }) => {
  let b: Bench;
  let target: Record<string, unknown>;

  beforeAll(async () => {
    if (needs?.skip) return;
    needs?.check();
    b = await start();
    // The app may take a moment to show its window (and, on Linux, to join the accessibility bus).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { windows } = (await b.helper.ok('windows')) as { windows: Array<Record<string, unknown>> };
      const win = windows.find((w) => w.pid === b.pid && (w.interactions as string[]).includes('semantic_ui'));
      if (win) {
        target = { window: win.window, pid: win.pid, start_time: win.start_time, ...(typeof win.image === 'string' ? { image: win.image } : {}) };
        break;
      }
      if (Date.now() > deadline) throw new Error(`no accessible window of pid ${b.pid}: ${JSON.stringify(windows)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 180_000);

  afterAll(async () => {
    await b?.stop();
  });

  it.skipIf(needs?.skip)('hello names the protocol version and the platform', async () => {
    expect(await b.helper.ok('hello')).toMatchObject({ protocol: 1, platform: b.platform, pid: expect.any(Number) });
  });

  it.skipIf(needs?.skip)('malformed requests are Invalid and say what is wrong, and the helper keeps serving', async () => {
    expect(await b.helper.raw('not json')).toMatchObject({
      id: null,
      ok: false,
      error: { kind: 'Invalid', message: expect.stringMatching(/^bad request: not JSON/) },
    });
    expect(await b.helper.raw('[1]')).toMatchObject({ ok: false, error: { kind: 'Invalid', message: 'bad request: not a JSON object' } });
    expect(await b.helper.raw('{"id": "x", "op": "hello"}')).toMatchObject({ id: null, ok: false, error: { message: 'bad request: id must be an integer' } });
    expect(await b.helper.call('click', { target, args: { x: 1 } })).toMatchObject({
      ok: false,
      error: { kind: 'Invalid', message: 'bad request: click needs argument y' },
    });
    expect(await b.helper.call('tree', { target, args: [] })).toMatchObject({ ok: false, error: { message: 'bad request: args must be an object' } });
    expect(await b.helper.call('tree', { target, interaction: 'telepathy' })).toMatchObject({
      ok: false,
      error: { message: 'bad request: interaction must be semantic_ui or visual_ui' },
    });
    expect(await b.helper.call('bogus', { target })).toMatchObject({ ok: false, error: { kind: 'Invalid', message: "unknown op 'bogus'" } });
    expect(await b.helper.call('observe')).toMatchObject({ ok: false, error: { kind: 'Invalid', message: "op 'observe' needs a target" } });
    expect(await b.helper.ok('hello')).toMatchObject({ protocol: 1 });
  });

  it.skipIf(needs?.skip)('windows lists the fixture with its binding facts; observe re-reads it through the binding', async () => {
    const listing = await b.helper.ok('windows');
    expect(listing).toHaveProperty('session');
    const win = (listing.windows as Array<Record<string, unknown>>).find((w) => w.window === target.window)!;
    expect(win).toMatchObject({
      title: b.title,
      pid: b.pid,
      start_time: expect.any(Number),
      class: expect.any(Array),
      geometry: { x: expect.any(Number), y: expect.any(Number), width: expect.any(Number), height: expect.any(Number) },
      focused: expect.any(Boolean),
      interactions: ['semantic_ui', 'visual_ui'],
    });
    const seen = await b.helper.ok('observe', { target });
    resultCheck('observe')(seen);
    expect(seen).toMatchObject({ window: target.window, title: b.title, pid: b.pid, interactions: ['semantic_ui', 'visual_ui'] });
  });

  it.skipIf(needs?.skip)('tree, find and element share one node shape, role names and paths', async () => {
    const tree = await b.helper.ok('tree', { target, args: {} });
    resultCheck('tree')(tree);
    const root = (tree.nodes as Array<Record<string, unknown>>)[0]!;
    expect(root).toMatchObject({ role: 'frame', name: b.title, path: '/' });
    const found = await b.helper.ok('find', { target, args: { role: 'push button' } });
    resultCheck('find')(found);
    expect(found.count).toBeGreaterThanOrEqual(1);
    const button = await b.helper.ok('element', { target, args: { path: b.button } });
    expect(button).toMatchObject({ role: 'push button', states: expect.arrayContaining(['enabled', 'sensitive', 'showing']) });
    const byPath = await b.helper.ok('element', { target, args: { path: button.path } });
    expect(byPath).toMatchObject({ role: 'push button', name: button.name, path: button.path });
    expect(button.actions).toEqual(expect.arrayContaining([expect.any(String)]));
    const text = await b.helper.ok('element', { target, args: { path: b.text } });
    expect(text).toMatchObject({ role: 'text', states: expect.arrayContaining(['editable']), value: expect.any(String), actions: expect.any(Array) });
    const bounded = await b.helper.ok('tree', { target, args: { max_nodes: 2 } });
    expect(bounded).toMatchObject({ node_count: 2, truncated: true });
  });

  it.skipIf(needs?.skip)('paths that name nothing, several things or nothing valid are NotFound, Rejected and Invalid', async () => {
    expect(await b.helper.call('element', { target, args: { path: '/99' } })).toMatchObject({ ok: false, error: { kind: 'NotFound' } });
    expect(await b.helper.call('element', { target, args: { path: '//no such role' } })).toMatchObject({ ok: false, error: { kind: 'NotFound' } });
    expect(await b.helper.call('element', { target, args: { path: 'zero' } })).toMatchObject({ ok: false, error: { kind: 'Invalid' } });
    const ambiguous = await b.helper.call('activate', { target, args: { path: '//label' } });
    if (!ambiguous.ok && ambiguous.error!.kind === 'Rejected') expect(ambiguous.error!.message).toMatch(/^ambiguous target: \d+ elements match \/\/label$/);
  });

  it.skipIf(needs?.skip)('set-text replaces the text and reads it back; activate presses the button; the app says so', async () => {
    const set = await b.helper.ok('set-text', { target, args: { path: b.text, text: 'conformant' }, interaction: 'semantic_ui' });
    resultCheck('set-text')(set);
    expect(set).toMatchObject({ text: 'conformant', confirmed: true });
    expect(await b.helper.ok('element', { target, args: { path: b.text } })).toMatchObject({ value: 'conformant' });
    await b.sawText('conformant');
    const typed = await b.helper.ok('type', { target, args: { path: b.text, text: '!' }, interaction: 'semantic_ui' });
    resultCheck('type')(typed);
    expect(typed).toMatchObject({ typed: 1, confirmed: true, text: expect.stringContaining('!') });
    const pressed = await b.helper.ok('activate', { target, args: { path: b.button }, interaction: 'semantic_ui' });
    resultCheck('activate')(pressed);
    expect(pressed).toMatchObject({ activated: true, action: expect.any(String) });
    await b.sawPress();
  });

  it.skipIf(needs?.skip)('screenshot is a PNG of the window, scaled on request', async () => {
    const { geometry } = (await b.helper.ok('observe', { target })) as { geometry: { width: number; height: number } };
    const shot = await b.helper.ok('screenshot', { target, args: {} });
    resultCheck('screenshot')(shot);
    const png = decodePng(shot.png_base64 as string);
    expect({ width: png.width, height: png.height }).toEqual({ width: geometry.width, height: geometry.height });
    expect(shot).toMatchObject({ width: geometry.width, height: geometry.height, scale: 1 });
    const small = await b.helper.ok('screenshot', { target, args: { max_width: 100 } });
    expect(small).toMatchObject({ width: 100, scale: expect.closeTo(100 / geometry.width, 3) });
    expect(decodePng(small.png_base64 as string).width).toBe(100);
  });

  it.skipIf(needs?.skip)('visual input refuses points outside the window and unknown keys before injecting anything', async () => {
    const outside = await b.helper.call('click', { target, args: { x: 5000, y: 5 }, interaction: 'visual_ui' });
    expect(outside).toMatchObject({ ok: false, error: { kind: 'Rejected', message: 'point outside the window' } });
    const key = await b.helper.call('key', { target, args: { chord: 'ctrl+NoSuchKey' }, interaction: 'visual_ui' });
    expect(key).toMatchObject({ ok: false, error: { kind: 'Invalid', message: expect.stringMatching(/^unknown key/) } });
    const sent = await b.helper.ok('key', { target, args: { chord: 'shift+Tab' }, interaction: 'visual_ui' });
    expect(sent).toEqual({ sent: 'shift+Tab' });
  });

  it.skipIf(needs?.skip)('a target whose process start time differs is refused: target changed, with evidence', async () => {
    const stale = { ...target, start_time: (target.start_time as number) - 1 };
    for (const op of ['observe', 'tree', 'screenshot']) {
      const r = await b.helper.call(op, { target: stale, args: {} });
      expect(r).toMatchObject({ ok: false, error: { kind: 'Rejected', message: 'target changed', evidence: expect.stringMatching(/start time|created at/) } });
    }
    if (typeof target.image === 'string') {
      // Win32 binds the image path too: the same pid and creation time running another program is another target.
      const r = await b.helper.call('observe', { target: { ...target, image: 'C:\\windows\\system32\\other.exe' } });
      expect(r).toMatchObject({ ok: false, error: { kind: 'Rejected', message: 'target changed', evidence: expect.stringMatching(/bound image is C:/) } });
    }
    const other = await b.helper.call('set-text', { target: { ...target, pid: b.pid + 100000 }, args: { path: b.text, text: 'never' } });
    expect(other).toMatchObject({ ok: false, error: { kind: 'Rejected', message: 'target changed' } });
  });
});
