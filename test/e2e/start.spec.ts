/// <reference lib="dom" />
/**
 * `npm start` where Electron cannot start (here: no Electron binary, or no display): one line
 * says why, then the browser panel starts and prints its URL, which opens a working panel.
 */
import { expect, test } from '@playwright/test';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, cleanEnv, until } from './harness';

test('npm start falls back to the browser panel, says why in one line and prints the URL', async ({ page }) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-start-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ tmux: { socket: join(dataDir, 'no-tmux.sock') } }));
  const env = cleanEnv({ UPLINK_DATA_DIR: dataDir, UPLINK_START_SKIP_BUILD: '1' });
  // No display: Electron cannot start even where its binary exists.
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const proc = spawn(process.execPath, [join(ROOT, 'scripts/start.mjs'), '--port', '0'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  try {
    const url = await until(() => /panel: (http:\/\/127\.0\.0\.1:\d+\/#code=\S+)/.exec(out)?.[1] ?? '', 'the panel URL on stdout', 30_000);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^uplink: not starting the Electron app: .+ — starting the browser panel instead/);
    await page.goto(url);
    await expect(page.getByText('connected', { exact: true })).toBeVisible();
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
});
