/// <reference lib="dom" />
/**
 * The Electron app end to end (Playwright's `_electron`). Runs only where an Electron binary
 * exists; elsewhere it is skipped, also under CI, and says why (the browser panel e2e covers the renderer).
 */
import { _electron as electron, expect, test } from '@playwright/test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PANEL_METHODS } from '../../src/shared/panel-channels';
import { electronBinary } from '../../scripts/electron-binary.mjs';
import { ROOT, cleanEnv } from './harness';
import { prerequisite } from '../fixtures/prerequisite';

const found = electronBinary();
// The one prerequisite that skips under CI too: no Electron binary can be installed there.
if (found.why) console.log(`electron e2e skipped: ${found.why}`);
const hasDisplay = process.platform !== 'linux' || !!process.env.DISPLAY || !!process.env.WAYLAND_DISPLAY;
// Only asked where the binary exists (without one these tests skip anyway).
const display = prerequisite('a display server ($DISPLAY or $WAYLAND_DISPLAY)', !!found.why || hasDisplay, 'run under xvfb-run (apt-get install xvfb)');

test.describe('Electron app', () => {
  test.skip(!!found.why, found.why ?? '');
  test.skip(display.skip, display.missing ?? '');
  test.beforeAll(display.check);

  test('opens a hardened window whose preload exposes exactly the PanelApi', async () => {
    const app = await electron.launch({
      executablePath: found.bin!,
      args: [ROOT],
      env: cleanEnv({ UPLINK_DATA_DIR: mkdtempSync(join(tmpdir(), 'uplink-electron-')) }) as Record<string, string>,
    });
    try {
      const win = await app.firstWindow();
      await expect(win).toHaveTitle(/Uplink/);
      const surface = await win.evaluate(() => ({
        keys: Object.keys((window as unknown as { uplink: object }).uplink).sort(),
        require: typeof (window as unknown as { require?: unknown }).require,
        process: typeof (window as unknown as { process?: unknown }).process,
        opened: window.open('https://example.com') === null,
      }));
      expect(surface.keys).toEqual([...PANEL_METHODS, 'on'].sort());
      expect(surface.require).toBe('undefined');
      expect(surface.process).toBe('undefined');
      expect(surface.opened).toBe(true);
      await win.evaluate(() => {
        window.location.href = 'https://example.com/';
      });
      // A window: the blocked navigation must not happen late.
      await win.waitForTimeout(500);
      expect(win.url()).toMatch(/^file:.*index\.html/);
      await expect(win.getByText('connected', { exact: true })).toBeVisible();
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const w = BrowserWindow.getAllWindows()[0]!;
        return (w.webContents as unknown as { getLastWebPreferences(): Record<string, unknown> | null }).getLastWebPreferences();
      });
      expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false });
    } finally {
      await app.close();
    }
  });

  test('started as `mcp` it serves MCP on stdio, headless (how agents reach a packaged app)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'uplink-electron-mcp-'));
    // A private tmux socket that does not exist: never the user's tmux server.
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ tmux: { socket: join(dataDir, 'no-tmux.sock') } }));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(cleanEnv({ UPLINK_DATA_DIR: dataDir }))) if (v !== undefined) env[k] = v;
    const client = new Client({ name: 'electron-mcp-e2e', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: found.bin!, args: [ROOT, 'mcp'], env, stderr: 'pipe' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('channel_act');
    } finally {
      await client.close();
    }
  });
});
