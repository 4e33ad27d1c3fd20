/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The browser panel end to end: a real `uplink serve` with a real private tmux server, a real
 * MCP client over Streamable HTTP, and Debian Chromium. Screenshots of each view go to
 * test-results/screenshots/, so a test run never changes tracked files; `npm run screenshots`
 * writes them to docs/screenshots/ (the README shows approvals.png) on purpose.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PrivateTmux, ROOT, mcpClient, startServe, toolText, until } from './harness';
import type { Serve } from './harness';

const SHOTS = resolve(ROOT, process.env.UPLINK_SCREENSHOTS_DIR ?? 'test-results/screenshots');
const tmux = new PrivateTmux();
let serve: Serve;
let agent: Client;
let page: Page;
let pane: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  tmux.start('work', 'sh');
  pane = tmux.panes()[0]!;
  serve = await startServe({ tmux });
  agent = await mcpClient(serve, 'claude-code');
  page = await browser.newPage();
  await page.goto(serve.panelUrl);
});

test.afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await serve?.stop();
  tmux.stop();
  if (serve) rmSync(serve.dataDir, { recursive: true, force: true });
});

const view = (name: RegExp) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const channel = () => `tmux:${pane}`;
const act = (text: string) => agent.callTool({ name: 'channel_act', arguments: { channel: channel(), op: 'type', args: { text, enter: true } } });
const read = () => agent.callTool({ name: 'channel_observe', arguments: { channel: channel(), op: 'read', args: { lines: 20 } } });
const prompt = () => page.locator('article.approval').first();
/** Waits until the hub lists the pane with `label` (listing also refreshes the hub's cached listing). */
const labelled = (label: string) =>
  until(async () => {
    const listed = (await agent.callTool({ name: 'channel_list', arguments: {} })).structuredContent as {
      channels: Array<{ channel: string; labels: string[] }>;
    };
    return listed.channels.some((c) => c.channel === channel() && c.labels.includes(label));
  }, `${channel()} listed with the label ${label}`);
/** Screenshots without transient toasts. */
const shoot = async (name: string) => {
  await expect(page.locator('.toast')).toHaveCount(0, { timeout: 10_000 });
  await page.screenshot({ path: join(SHOTS, name) });
};

test('without a sign-in the panel says how to get in and shows no data; a fresh link pasted into the tab signs in', async ({ browser }) => {
  const stranger = await browser.newPage();
  // The agents' token, even in the old URL form, opens nothing.
  await stranger.goto(`${serve.url}/#token=${serve.token}`);
  await expect(stranger.getByRole('alert')).toContainText('open the URL that `uplink serve` printed, or run `uplink panel-url`');
  await expect(stranger.locator('.channel-item, article.approval')).toHaveCount(0);
  // Pasting a link into the same tab changes only the fragment: no reload, the panel signs in.
  const fresh = new URL(serve.freshPanelUrl());
  await stranger.evaluate((hash) => (window.location.hash = hash), fresh.hash);
  await expect(stranger.getByText('connected', { exact: true })).toBeVisible();
  expect(stranger.url()).not.toContain('code=');
  await stranger.close();
});

test('a used link is refused with the reason', async ({ browser }) => {
  const late = await browser.newPage();
  await late.goto(serve.panelUrl);
  await expect(late.getByRole('alert')).toContainText('this panel link is unknown, already used or expired — hint: run `uplink panel-url`');
  await late.close();
});

test('the code leaves the address bar, the panel connects, and a reload stays signed in', async () => {
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  expect(page.url()).not.toContain('code=');
  await page.reload();
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
});

test('the channels view lists the panes, and a human raises the tier', async () => {
  await view(/^Channels/).click();
  const item = page.locator('.channel-item', { hasText: channel() });
  await expect(item).toBeVisible();
  await item.click();
  await expect(page.getByRole('heading', { name: 'Ops' })).toBeVisible();
  await page.getByLabel(/^Tier/).selectOption('operator');
  await expect(item).toContainText('operator');
  await expect(page.getByLabel(/^Tier/)).toHaveValue('operator');
  await expect(page.locator('.pane-text')).toBeVisible();
  // Run an op as the operator through the form generated from its params_schema.
  const readOp = page.locator('details.op-card', { has: page.locator('.op-name', { hasText: /^read$/ }) });
  await readOp.locator('summary').click();
  await readOp.getByLabel(/^lines/).fill('5');
  await readOp.getByRole('button', { name: 'Run read' }).click();
  await expect(readOp.locator('.result')).toContainText('text');
  await shoot('channels.png');
});

test('channel_act raises a prompt with agent, channel, op and text; approving delivers it', async () => {
  await read();
  await view(/^Approvals/).click();
  const call = act('echo approved-$((6*7))');
  await expect(prompt()).toBeVisible();
  await expect(prompt()).toContainText('claude-code');
  await expect(prompt()).toContainText(channel());
  await expect(prompt()).toContainText('type');
  await expect(prompt().locator('.args-line')).toHaveText('text: "echo approved-$((6*7))"  enter: true');
  // What the op will do, in words (the tmux driver's preview sentence).
  await expect(prompt().locator('.will-do')).not.toBeEmpty();
  await expect(page).toHaveTitle(/^\(1\) Uplink/);
  await expect(prompt()).toContainText(/waited \d+(\.\d)? s/); // the waited-time counter has ticked, for the screenshot
  await shoot('approvals.png');
  await page.emulateMedia({ colorScheme: 'light' });
  await shoot('approvals-light.png');
  await page.emulateMedia({ colorScheme: 'dark' });
  await prompt()
    .getByRole('button', { name: /^Approve once/ })
    .click();
  const result = await call;
  expect(result.isError ?? false).toBe(false);
  await until(() => tmux.capture(pane).includes('approved-42'), 'the command output in the pane');
  await expect(prompt()).toHaveCount(0);
  await expect(page).toHaveTitle('Uplink');
});

test('a busy queue: five cards fit an 860 px window, j moves the focus, A approves the focused card, deny all clears the agent', async () => {
  await read();
  expect(page.viewportSize()?.height).toBe(860);
  await view(/^Approvals/).click();
  const calls = [1, 2, 3, 4, 5, 6].map((n) => act(`echo queued-${n}`));
  await expect(page.locator('article.approval')).toHaveCount(6);
  const fifth = await page.locator('article.approval').nth(4).boundingBox();
  expect(fifth!.y + fifth!.height).toBeLessThanOrEqual(860);
  await expect(page.locator('article.approval').first()).toHaveAttribute('aria-current', 'true');
  await page.keyboard.press('j');
  const second = page.locator('article.approval').nth(1);
  await expect(second).toHaveAttribute('aria-current', 'true');
  // Prompts appear as their previews complete, so the queue's order is not the calls' order: take
  // the focused card's own request and check that exactly that one runs.
  const focused = /queued-\d/.exec((await second.locator('.args-line').textContent()) ?? '')?.[0];
  expect(focused, 'the focused card names its request').toBeDefined();
  await page.waitForTimeout(600); // shortcuts arm a moment after the focus moved (the page shows no sign of it)
  await page.keyboard.press('a');
  await until(() => tmux.capture(pane).includes(focused!), 'the focused request ran');
  expect(
    tmux
      .capture(pane)
      .match(/queued-\d/g)
      ?.filter((q) => q !== focused) ?? [],
  ).toEqual([]);
  await expect(page.locator('article.approval')).toHaveCount(5);
  await prompt().getByRole('button', { name: 'Deny all from default' }).click();
  const ask = page.getByRole('alertdialog', { name: 'Deny all from default' });
  await expect(ask).toContainText('Deny all 5 requests waiting from default?');
  await ask.getByLabel(/Reason for all 5 requests/).fill('runaway');
  await ask.getByRole('button', { name: 'Deny 5 requests' }).click();
  await expect(page.locator('article.approval')).toHaveCount(0);
  const results = await Promise.all(calls);
  expect(results.filter((r) => r.isError).map((r) => toolText(r))).toEqual(Array(5).fill(expect.stringContaining('runaway')));
});

test('deny with a reason returns that reason to the agent as a rejection', async () => {
  await read();
  const call = act('echo should-not-run');
  await expect(prompt()).toBeVisible();
  await prompt().getByLabel('Reason').fill('wrong pane, use the build window');
  await prompt()
    .getByRole('button', { name: /^Deny(?! all)/ })
    .click();
  const result = await call;
  expect(result.isError).toBe(true);
  expect(toolText(result)).toContain('wrong pane, use the build window');
  expect(toolText(result)).toMatch(/uplink error \[tmux:Rejected\]/);
  expect(tmux.capture(pane)).not.toContain('should-not-run');
});

test('a keyboard shortcut approves the oldest prompt', async () => {
  await read();
  const call = act('echo by-keyboard');
  await expect(prompt()).toBeVisible();
  await page.waitForTimeout(600); // shortcuts arm after the prompt has been visible a moment (the page shows no sign of it)
  await page.keyboard.press('a');
  expect((await call).isError ?? false).toBe(false);
});

test('an unanswered prompt times out (auto-denied)', async () => {
  await view(/^Rules/).click();
  await page.getByLabel('New timeout (seconds)').fill('2');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('2.0 s', { exact: true })).toBeVisible();
  await read();
  await view(/^Approvals/).click();
  const call = act('echo too-late');
  await expect(prompt()).toBeVisible();
  const result = await call;
  expect(result.isError).toBe(true);
  // The countdown said "auto-deny in …": the agent hears a timeout, in the same words.
  expect(toolText(result)).toMatch(/uplink error \[tmux:Timeout\]: type on tmux:%\d+: timed out: the operator did not decide within 2 s \(auto-denied\)/);
  await expect(prompt()).toHaveCount(0);
  expect(tmux.capture(pane)).not.toContain('too-late');
  await view(/^Rules/).click();
  await page.getByLabel('New timeout (seconds)').fill('120');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('2 min 00 s', { exact: true })).toBeVisible();
});

test('"always" with config.json broken shows why, the card stays, and the call can still be approved once', async () => {
  tmux.tmux('set-option', '-p', '-t', pane, '@name', 'e2e-target');
  await labelled('e2e-target');
  await read();
  await view(/^Approvals/).click();
  const call = act('echo once-after-refusal');
  await expect(prompt()).toBeVisible();
  // What "always" would cover is on the card before the click.
  await expect(prompt().getByRole('button', { name: /^Always/ })).toHaveAttribute('title', /covers type on tmux:e2e-target for /);
  await prompt().getByRole('button', { name: 'Scope' }).click();
  await expect(prompt().getByRole('region', { name: 'What session and always cover' })).toContainText('Always: type on tmux:e2e-target');
  // Each check box sits on its label's line, beside its words (not stacked above them).
  const only = prompt().getByRole('checkbox', { name: 'Only these args' });
  await only.check();
  for (const box of await prompt().locator('.scope-args label').all()) {
    const [b, l] = await Promise.all([box.locator('input').boundingBox(), box.boundingBox()]);
    expect(b!.height).toBeGreaterThan(l!.height / 2);
    expect(b!.y + b!.height / 2).toBeCloseTo(l!.y + l!.height / 2, -1);
  }
  await only.uncheck();
  const file = join(serve.dataDir, 'config.json');
  const good = readFileSync(file, 'utf8');
  writeFileSync(file, '{ "approvals": ');
  try {
    await prompt()
      .getByRole('button', { name: /^Always/ })
      .click();
    await expect(page.locator('.toast-error')).toContainText(/cannot save the standing rule .*config.json is broken/);
    await expect(prompt()).toBeVisible();
    await expect(prompt().getByRole('button', { name: /^Approve once/ })).toBeEnabled();
  } finally {
    writeFileSync(file, good);
  }
  await prompt()
    .getByRole('button', { name: /^Approve once/ })
    .click();
  expect((await call).isError ?? false).toBe(false);
  await until(() => tmux.capture(pane).includes('once-after-refusal'), 'the approved command in the pane');
  await expect(prompt()).toHaveCount(0);
});

test('"always" skips the next prompt and the rule appears in settings', async () => {
  // "Always" names the pane by a stable label, never by its reusable id.
  tmux.tmux('set-option', '-p', '-t', pane, '@name', 'e2e-target');
  await labelled('e2e-target');
  await read();
  await view(/^Approvals/).click();
  const first = act('echo always-1');
  await expect(prompt()).toBeVisible();
  await prompt()
    .getByRole('button', { name: /^Always/ })
    .click();
  expect((await first).isError ?? false).toBe(false);
  await read();
  const second = await act('echo always-2');
  expect(second.isError ?? false).toBe(false);
  await until(() => tmux.capture(pane).includes('always-2'), 'the second command in the pane');
  await expect(page.getByRole('navigation', { name: 'Views' }).getByLabel(/pending/)).toHaveCount(0);
  await view(/^Rules/).click();
  const rules = page.getByRole('table', { name: 'Standing rules' });
  await expect(rules).toContainText('tmux:e2e-target');
  await expect(rules).toContainText('type');
  await expect(rules).toContainText(/ago \(1×\)/);
  // The stdio command an agent runs: this checkout's launcher (a packaged app names itself).
  await expect(page.getByText(/^claude mcp add uplink -e UPLINK_DATA_DIR=\S+ -- \S+\/bin\/uplink mcp$/)).toBeVisible();
  await shoot('settings.png');
});

test('the timeline shows each invocation’s events in sequence order', async () => {
  await view(/^Timeline/).click();
  const rows = page.locator('.tl-row');
  await expect(rows.filter({ hasText: 'type' }).first()).toBeVisible();
  const sequences = await rows.evaluateAll((els) => els.map((el) => [...el.querySelectorAll('.ev b')].map((b) => Number(b.textContent))));
  expect(sequences.length).toBeGreaterThan(5);
  for (const seq of sequences) expect(seq).toEqual([...seq].sort((a, b) => a - b));
  const approved = rows.filter({ hasText: 'type' }).first();
  await approved.click();
  const detail = page.getByRole('complementary', { name: 'Invocation detail' });
  await expect(detail).toContainText(/approved (once |for the session |always )?by the operator/);
  const kinds = await detail.locator('table.events tbody tr').evaluateAll((trs) => trs.map((tr) => tr.children[1]?.textContent));
  // In words, the record that ends the call by its outcome.
  expect(kinds).toEqual(expect.arrayContaining(['accepted', 'asked', 'approved', 'started', 'succeeded']));
  // The request's arguments and the op's output, as the audit store kept them.
  await expect(detail.getByRole('heading', { name: 'Arguments' })).toBeVisible();
  await expect(detail.getByRole('heading', { name: 'Output' })).toBeVisible();
  await shoot('timeline.png');
  // Keyboard: Escape closes the detail, arrows select rows and open theirs.
  const grid = page.getByRole('grid', { name: /Invocations/ });
  await grid.focus();
  await page.keyboard.press('Escape');
  await expect(detail).toHaveCount(0);
  await page.keyboard.press('ArrowUp');
  await expect(detail).toBeVisible();
  await expect(page.locator('.tl-row[aria-selected="true"]')).toHaveCount(1);
});

test('providers and the selection preview', async () => {
  await view(/^Providers/).click();
  await expect(page.getByRole('cell', { name: 'uplink/tmux' })).toBeVisible();
  await page.getByLabel('Capability').fill('tmux.type');
  await page.getByRole('button', { name: 'Explain' }).click();
  await expect(page.locator('.explanation')).toBeVisible();
  await shoot('providers.png');
});

test('after restarting serve the history is still there', async () => {
  const before = await page
    .locator('.tl-row')
    .count()
    .catch(() => 0);
  void before;
  await serve.stop();
  await expect(page.getByRole('alert').filter({ hasText: 'reconnecting' })).toBeVisible();
  serve = await startServe({ tmux, dataDir: serve.dataDir });
  await agent.close().catch(() => undefined);
  agent = await mcpClient(serve, 'claude-code');
  await page.goto(serve.panelUrl);
  await view(/^Timeline/).click();
  const rows = page.locator('.tl-row');
  await expect(rows.filter({ hasText: 'type' }).first()).toBeVisible();
  await expect(rows.filter({ hasText: 'set-tier' }).first()).toBeVisible();
  await page.getByLabel('Search').fill('wrong pane');
  await expect(rows).toHaveCount(1);
  // The operator's denial reads as one: denied, never also failed.
  await expect(rows.first()).toContainText('denied');
  await expect(rows.first()).not.toContainText('failed');
});
