/// <reference lib="dom" />
/**
 * The operator's afternoon, in Chromium against a real `uplink serve`: the open tab outlives a
 * restart of the hub (it reconnects by itself and approves the next prompt with no new link), a
 * prompt that arrives while no panel is open waits for one, and what timed out meanwhile is
 * listed under "While you were away".
 */
import { expect, test } from '@playwright/test';
import type { BrowserContext, Page } from '@playwright/test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrivateTmux, mcpClient, startServe, toolText, until } from './harness';
import type { Serve } from './harness';

const tmux = new PrivateTmux();
let serve: Serve;
let agent: Client;
let context: BrowserContext;
let page: Page;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  tmux.start('work', 'sh');
  serve = await startServe({ tmux, drivers: 'approvals-drivers.ts' });
  agent = await mcpClient(serve, 'claude-code');
  // One browser profile for the whole file: its cookie and storage are what a signed-in browser keeps.
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(serve.panelUrl);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
});

test.afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await context?.close().catch(() => undefined);
  await serve?.stop();
  tmux.stop();
  if (serve) rmSync(serve.dataDir, { recursive: true, force: true });
});

const view = (p: Page, name: RegExp) => p.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const write = (text: string) => agent.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text } } });
const card = (p: Page, text: string) => p.locator('article.approval', { has: p.locator('.args-line', { hasText: `text: "${text}"` }) });
const ok = (r: unknown) => expect((r as { isError?: boolean }).isError ?? false, toolText(r)).toBe(false);

test('a restart of the hub: the open tab shows reconnecting, then reconnects by itself and approves the next prompt without a new link', async () => {
  const port = Number(new URL(serve.url).port);
  await agent.close();
  await serve.stop();
  await expect(page.getByText('reconnecting…', { exact: true })).toBeVisible();
  await expect(page.getByText(/not signed in/)).toHaveCount(0);
  serve = await startServe({ tmux, drivers: 'approvals-drivers.ts', dataDir: serve.dataDir, port });
  agent = await mcpClient(serve, 'claude-code');
  await expect(page.getByText('connected', { exact: true })).toBeVisible({ timeout: 20_000 });
  await view(page, /^Approvals/).click();
  const call = write('after-restart');
  await card(page, 'after-restart')
    .getByRole('button', { name: /^Approve once/ })
    .click();
  ok(await call);
  // Nothing was signed in anew: the page's address never held a code again.
  expect(page.url()).not.toContain('code=');
});

test('a prompt that arrives while no panel is open waits, and a panel that opens decides it', async () => {
  await page.close();
  const call = write('while-closed');
  await until(() => serve.cli('approvals').includes('test:alpha'), 'the prompt pending with no panel');
  await new Promise((r) => setTimeout(r, 1000));
  expect(serve.cli('approvals')).toContain('write');
  // The same browser, no new link: its session survives the closed tab.
  page = await context.newPage();
  await page.goto(`${serve.url}/`);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  await view(page, /^Approvals/).click();
  await card(page, 'while-closed')
    .getByRole('button', { name: /^Approve once/ })
    .click();
  ok(await call);
});

test('While you were away lists a prompt that timed out with no panel open, until dismissed', async () => {
  const configPath = join(serve.dataDir, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(configPath, JSON.stringify({ ...config, approvals: { timeout_ms: 1000 } }, null, 2));
  // The hub follows config.json on its own (a debounced watch).
  await new Promise((r) => setTimeout(r, 1500));
  await page.close();
  const call = await write('nobody-answers');
  expect(call.isError).toBe(true);
  expect(toolText(call)).toMatch(/timed out/);
  page = await context.newPage();
  await page.goto(`${serve.url}/`);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  await view(page, /^Approvals/).click();
  const away = page.getByRole('region', { name: 'While you were away' });
  await expect(away).toBeVisible();
  await expect(away.locator('li')).toHaveCount(1);
  await expect(away.locator('li')).toContainText('write on test:alpha');
  await expect(away.locator('li .outcome')).toHaveText(/timed out/);
  await away.getByRole('button', { name: 'Dismiss' }).click();
  await expect(away).toHaveCount(0);
});
