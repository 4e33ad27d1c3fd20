/// <reference lib="dom" />
/**
 * The packaged Electron app loads the renderer from file:// with file://'s extra privileges fused
 * off (electron-builder.yml), which is how a plain Chromium treats file:// pages: every CORS
 * request fails, module scripts and `crossorigin` stylesheets included. This proves the built
 * renderer still starts there, with a stand-in for the preload's `window.uplink`.
 */
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './harness';

test('the built renderer runs from file:// without CORS, as the packaged Electron app loads it', async ({ page }) => {
  const index = join(ROOT, 'dist/renderer/index.html');
  const html = readFileSync(index, 'utf8');
  expect(html).not.toMatch(/type="module"|crossorigin/);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.addInitScript(() => {
    const settings = { approval_timeout_ms: 120_000, data_dir: '/data', version: '0.1.0' };
    const replies: Record<string, unknown> = {
      listPendingApprovals: [],
      listRules: [],
      listProviders: [],
      getSettings: settings,
      listChannels: { channels: [], health: [], errors: [] },
      queryTimeline: { events: [], next_before: null },
    };
    (window as unknown as { uplink: unknown }).uplink = new Proxy(
      {},
      { get: (_t, k: string) => (k === 'on' ? () => () => undefined : async () => structuredClone(replies[k])) },
    );
  });
  await page.goto(pathToFileURL(index).href);
  await expect(page.getByRole('navigation', { name: 'Views' })).toBeVisible();
  await expect(page.getByText('No agent is waiting for you')).toBeVisible();
  // The stylesheet applied (a dark page background from styles.css, not the default transparent).
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe('rgba(0, 0, 0, 0)');
  expect(errors).toEqual([]);
});
