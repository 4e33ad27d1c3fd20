/// <reference lib="dom" />
/**
 * The Timeline against a real `uplink serve` in Chromium: the search box finds a call by what it
 * typed (the hub searches the audit), the export downloads the filtered view, and a tab signed in
 * to one hub that is handed another hub's link (a new hub on the same address) shows only the new
 * hub's rows.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { readFileSync, rmSync } from 'node:fs';
import { PrivateTmux, startServe } from './harness';
import type { Serve } from './harness';

const tmux = new PrivateTmux();
let serve: Serve | undefined;
let other: Serve | undefined;
let page: Page;
let pane: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  tmux.start('work', 'sh');
  pane = tmux.panes()[0]!;
  serve = await startServe({ tmux });
  // Calls from the CLI run on its own authority: no prompt to answer first.
  serve.cli('tier', `tmux:${pane}`, 'operator');
  // The tmux driver types only into a pane read within the last minute.
  serve.cli('invoke', `tmux:${pane}`, 'read', JSON.stringify({ lines: 3 }));
  serve.cli('invoke', `tmux:${pane}`, 'type', JSON.stringify({ text: 'git push origin main' }));
  page = await browser.newPage();
  await page.goto(serve.panelUrl);
});

test.afterAll(async () => {
  for (const s of [serve, other]) {
    await s?.stop();
    if (s) rmSync(s.dataDir, { recursive: true, force: true });
  }
  tmux.stop();
});

const view = (name: RegExp) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const searchBox = () => page.getByRole('search').getByRole('searchbox');

test('the search finds `git push` by its args, and the row says what was typed', async () => {
  await view(/^Timeline/).click();
  await expect(page.locator('.tl-row').first()).toBeVisible();
  await searchBox().fill('git push');
  await expect(page.locator('.view-timeline .view-head')).toContainText('1 match');
  const rows = page.locator('.tl-row');
  await expect(rows).toHaveCount(1);
  await expect(rows.first().locator('.tl-summary')).toHaveText('git push origin main');
  await expect(rows.first().locator('.tl-op')).toHaveText('type');
  await expect(rows.first().locator('.tl-state')).toContainText('succeeded');
});

test('export downloads the filtered view as CSV and JSON Lines and says how many', async () => {
  const csv = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const file = await csv;
  expect(file.suggestedFilename()).toMatch(/^uplink-timeline-.*\.csv$/);
  const text = readFileSync((await file.path())!, 'utf8');
  const lines = text.trimEnd().split('\r\n');
  expect(lines[0]).toMatch(/^id,at,type,kind,invocation_id,/);
  expect(text).toContain('git push origin main');
  expect(text).not.toContain('"lines"');
  await expect(page.locator('.toast').last()).toContainText(`exported ${lines.length - 1} records of 1 call as CSV`);

  const jsonl = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export JSONL' }).click();
  const records = readFileSync((await (await jsonl).path())!, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { op?: string; args?: { text?: string } });
  expect(records.length).toBe(lines.length - 1);
  expect(records.every((r) => r.op === 'type')).toBe(true);
  expect(records.some((r) => r.args?.text === 'git push origin main')).toBe(true);
});

test("another hub's link in the same tab shows only that hub's rows", async () => {
  await searchBox().fill('');
  await expect(page.locator('.tl-row', { hasText: 'git push origin main' })).toHaveCount(1);
  // Hub A stops; hub B (its own data directory) comes up on the same address, and its link is
  // opened in this tab: the page is not reloaded, the tab signs in again.
  const port = Number(new URL(serve!.url).port);
  await serve!.stop();
  other = await startServe({ tmux, port });
  other.cli('tier', `tmux:${pane}`, 'operator');
  other.cli('invoke', `tmux:${pane}`, 'read', JSON.stringify({ lines: 3 }));
  other.cli('invoke', `tmux:${pane}`, 'type', JSON.stringify({ text: 'echo from hub B' }));
  await page.goto(other.panelUrl);
  await expect(page.locator('.tl-row', { hasText: 'echo from hub B' })).toHaveCount(1);
  await expect(page.locator('.tl-row', { hasText: 'git push origin main' })).toHaveCount(0);
  // Hub B's own tier change, read and type; none of hub A's three.
  await expect(page.locator('.tl-row')).toHaveCount(3);
});
