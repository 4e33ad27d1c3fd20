/**
 * `Uplink mcp`: the built Electron main bundle (`npm run build`) started with `mcp` serves MCP over stdio headless. No
 * Electron binary exists here, so the bundle runs under Node with a stand-in `electron` module
 * that records what the main process asks of it: it must open no window, take no
 * single-instance lock (that would hand the launch to the running panel) and print nothing on
 * stdout but the protocol. A real MCP SDK client drives it over stdio.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
/** The main-process bundle the app ships. */
const MAIN = join(ROOT, 'dist/electron/main.cjs');

/** The stand-in: every property access on `app` is recorded; BrowserWindow construction too. */
const STUB = `
const fs = require('node:fs');
const Module = require('node:module');
const log = (what) => fs.appendFileSync(process.env.UPLINK_STUB_LOG, what + '\\n');
// Unpackaged Electron runs \`electron main.cjs mcp\` with process.defaultApp set.
process.defaultApp = true;
const app = new Proxy({
  dock: { hide: () => log('dock.hide') },
  disableHardwareAcceleration: () => log('disableHardwareAcceleration'),
  exit: (code) => { log('exit ' + code); process.exit(code); },
}, { get(t, k) { if (k in t) return t[k]; log('app.' + String(k)); return () => true; } });
class BrowserWindow { constructor() { log('BrowserWindow'); } static getAllWindows() { return []; } }
const electron = { app, BrowserWindow, Notification: class {}, ipcMain: {}, session: {} };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) { return request === 'electron' ? 'electron' : resolve.call(this, request, ...rest); };
require.cache.electron = { id: 'electron', filename: 'electron', loaded: true, exports: electron };
`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'uplink-mcp-mode-'));
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing — run \`npm run build\` first`);
  writeFileSync(join(dir, 'electron-stub.cjs'), STUB);
  // A private tmux socket path that does not exist: the embedded hub never reaches the user's tmux.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ tmux: { socket: join(dir, 'no-tmux.sock') } }));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the Electron main started as `Uplink mcp`', () => {
  it('serves the MCP tools on stdio without a window or the single-instance lock', async () => {
    const logFile = join(dir, 'stub.log');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TMUX' && k !== 'TMUX_PANE') env[k] = v;
    Object.assign(env, { UPLINK_DATA_DIR: dir, UPLINK_STUB_LOG: logFile, NODE_PATH: join(ROOT, 'node_modules') });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--require', join(dir, 'electron-stub.cjs'), MAIN, 'mcp'],
      env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mcp-mode-test', version: '1.0.0' });
    await client.connect(transport);
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
    await client.close();
    const deadline = Date.now() + 20_000;
    while (!readFileSync(logFile, 'utf8').includes('exit ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const log = readFileSync(logFile, 'utf8').trim().split('\n');
    expect(log).toContain('exit 0');
    expect(log).not.toContain('BrowserWindow');
    expect(log).not.toContain('app.requestSingleInstanceLock');
    expect(log).not.toContain('app.whenReady');
  }, 60_000);
});
