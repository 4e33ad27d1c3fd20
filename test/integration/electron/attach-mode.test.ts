/**
 * Attach mode: the built Electron main bundle (`npm run build`) started with a panel URL shows
 * that running hub's panel and is nothing else — no hub, no data directory, no IPC, no preload,
 * no single-instance lock — with requests held to that hub and its CSP. A URL that is not a
 * loopback panel is refused in one line. The one-time sign-in code is never printed. No Electron
 * binary exists here, so the bundle runs under Node with a stand-in `electron` module that
 * records what the main process asks of it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = join(ROOT, 'dist/electron/main.cjs');
let dir: string;

/** The stand-in: records calls; the window's load and the session's guards are exercised. */
const STUB = `
const fs = require('node:fs');
const Module = require('node:module');
const log = (what) => fs.appendFileSync(process.env.UPLINK_STUB_LOG, what + '\\n');
process.defaultApp = true;
const app = new Proxy({
  on: () => undefined,
  whenReady: () => Promise.resolve(),
  getAppPath: () => process.env.UPLINK_STUB_ROOT,
  setPath: (name, path) => { log('setPath ' + name); log('profile ' + path); },
  exit: (code) => { log('exit ' + code); process.exit(code); },
}, { get(t, k) { if (k in t) return t[k]; log('app.' + String(k)); return () => true; } });
const probe = (fn, url) => new Promise((r) => fn({ url }, (d) => r(d)));
const webRequest = {
  async onBeforeRequest(fn) {
    for (const url of ['http://127.0.0.1:7420/assets/x.js', 'ws://127.0.0.1:7420/panel/ws', 'https://example.com/x.js', 'file:///etc/passwd']) log('request ' + url + ' ' + ((await probe(fn, url)).cancel ? 'cancelled' : 'allowed'));
  },
  onHeadersReceived(fn) { fn({ responseHeaders: {} }, (d) => log('csp ' + d.responseHeaders['Content-Security-Policy'][0])); },
};
const session = { defaultSession: { setPermissionRequestHandler() {}, setPermissionCheckHandler() {}, webRequest } };
class BrowserWindow {
  constructor(o) { log('BrowserWindow ' + JSON.stringify(o.webPreferences)); this.webContents = {}; }
  once() {} on() {}
  loadURL(url) { log('loadURL ' + url); return Promise.resolve(); }
}
const electron = { app, BrowserWindow, Notification: class {}, ipcMain: new Proxy({}, { get(_t, k) { log('ipcMain.' + String(k)); return () => undefined; } }), session };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) { return request === 'electron' ? 'electron' : resolve.call(this, request, ...rest); };
require.cache.electron = { id: 'electron', filename: 'electron', loaded: true, exports: electron };
`;

const CODE = 'one-time-s3cret';

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing — run \`npm run build\` first`);
  dir = mkdtempSync(join(tmpdir(), 'uplink-attach-mode-'));
  writeFileSync(join(dir, 'electron-stub.cjs'), STUB);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the bundle until it loads a page (then stops it) or exits; returns its log and output. */
async function run(name: string, args: string[], url?: string): Promise<{ log: string[]; out: string; code: number | null }> {
  const logFile = join(dir, `${name}.log`);
  writeFileSync(logFile, '');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'UPLINK_ATTACH_URL') env[k] = v;
  Object.assign(env, { UPLINK_DATA_DIR: join(dir, `${name}-data`), UPLINK_STUB_LOG: logFile, UPLINK_STUB_ROOT: ROOT, NODE_PATH: join(ROOT, 'node_modules') });
  if (url) env.UPLINK_ATTACH_URL = url;
  const child = spawn(process.execPath, ['--require', join(dir, 'electron-stub.cjs'), MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  // Loaded: the CSP is set and the guards' four async request probes are logged.
  const loaded = (): boolean => {
    const text = readFileSync(logFile, 'utf8');
    return text.includes('csp ') && (text.match(/^request /gm) ?? []).length >= 4;
  };
  const deadline = Date.now() + 20_000;
  while (child.exitCode === null && !loaded() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGKILL');
  const code = await exited;
  const log = readFileSync(logFile, 'utf8').trim().split('\n');
  // Killed outright, it could not remove its throwaway profile.
  for (const l of log) if (l.startsWith('profile ')) rmSync(l.slice('profile '.length), { recursive: true, force: true });
  return { log, out, code };
}

describe('the Electron main in attach mode', () => {
  it("shows the running hub's panel with the same guards, and starts nothing of its own", async () => {
    const url = `http://127.0.0.1:7420/#code=${CODE}`;
    const { log, out } = await run('env', [], url);
    expect(log).toContain(`loadURL ${url}`);
    const prefs = JSON.parse(log.find((l) => l.startsWith('BrowserWindow '))!.slice('BrowserWindow '.length)) as Record<string, unknown>;
    expect(prefs).not.toHaveProperty('preload');
    expect(prefs).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, webviewTag: false });
    expect(log).toEqual(
      expect.arrayContaining([
        'request http://127.0.0.1:7420/assets/x.js allowed',
        'request ws://127.0.0.1:7420/panel/ws allowed',
        'request https://example.com/x.js cancelled',
        'request file:///etc/passwd cancelled',
        'setPath userData',
      ]),
    );
    expect(log.find((l) => l.startsWith('csp '))).toContain("connect-src 'self' ws://127.0.0.1:7420");
    expect(log).not.toContain('app.requestSingleInstanceLock');
    expect(log.filter((l) => l.startsWith('ipcMain.'))).toEqual([]);
    expect(existsSync(join(dir, 'env-data'))).toBe(false);
    expect(out).not.toContain(CODE);
  }, 30_000);

  it('takes the URL from `--attach <url>` too', async () => {
    const url = `http://[::1]:7420/#code=${CODE}`;
    const { log, out } = await run('argv', ['--attach', url]);
    expect(log).toContain(`loadURL ${url}`);
    expect(out).not.toContain(CODE);
  }, 30_000);

  it('refuses a URL that is not a loopback panel in one line, without the code, before any window', async () => {
    const { log, out, code } = await run('refused', [], `http://192.168.1.5:7420/#code=${CODE}`);
    expect(code).toBe(2);
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(out).toMatch(/^uplink error \[core:Invalid\]: attach mode loads only a loopback panel URL .* — hint: /);
    expect(out).not.toContain(CODE);
    expect(log.some((l) => l.startsWith('BrowserWindow'))).toBe(false);
  }, 30_000);
});
