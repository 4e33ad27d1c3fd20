/// <reference lib="dom" />
/**
 * Approvals and the live timeline as an operator meets them, in Chromium against one real
 * `uplink serve`: a reload with a prompt waiting, CLI calls arriving live, how the timeline words
 * a waiting, denied or timed-out call, a session approval covering a queued prompt, the stdio
 * command, and control characters on a card. Prompts arrive in any order, so cards are found by
 * what they ask, never by position.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { rmSync } from 'node:fs';
import { PrivateTmux, mcpClient, startServe, toolText, until } from './harness';
import type { Serve } from './harness';

const tmux = new PrivateTmux();
let serve: Serve;
let agent: Client;
let page: Page;
let pane: string;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  tmux.start('work', 'sh');
  pane = tmux.panes()[0]!;
  serve = await startServe({ tmux, drivers: 'approvals-drivers.ts' });
  serve.cli('tier', `tmux:${pane}`, 'operator');
  agent = await mcpClient(serve, 'claude-code');
  page = await browser.newPage();
  await page.goto(serve.panelUrl);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
});

test.afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await serve?.stop();
  tmux.stop();
  if (serve) rmSync(serve.dataDir, { recursive: true, force: true });
});

const view = (name: RegExp) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const channel = () => `tmux:${pane}`;
const read = (by = agent) => by.callTool({ name: 'channel_observe', arguments: { channel: channel(), op: 'read', args: { lines: 5 } } });
/** Types `text` into the pane, after the read the tmux driver asks for first. */
const act = async (text: string, by = agent) => {
  await read(by);
  return by.callTool({ name: 'channel_act', arguments: { channel: channel(), op: 'type', args: { text, enter: true } } });
};
/** The card asking for exactly this text. */
const card = (text: string) => page.locator('article.approval', { has: page.locator('.args-line', { hasText: `text: "${text}"` }) });
const detail = () => page.getByRole('complementary', { name: 'Invocation detail' });
const authorized = () => detail().locator('dt:text-is("Authorized") + dd');
const ok = (r: unknown) => expect((r as { isError?: boolean }).isError ?? false, toolText(r)).toBe(false);

test('the stdio command in Rules & settings names this hub’s data directory', async () => {
  await view(/^Rules/).click();
  await expect(page.getByText(/^claude mcp add uplink /)).toContainText(`-e UPLINK_DATA_DIR=${serve.dataDir} -- `);
});

test('control characters in a prompt’s args are shown as escapes', async () => {
  await view(/^Approvals/).click();
  const call = agent.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'a\u001b[2Jb\u0007c' } } });
  const escaped = page.locator('article.approval', { hasText: 'test:alpha' });
  await expect(escaped.locator('.args-line')).toHaveText('text: "a\\x1b[2Jb\\x07c"');
  await escaped.getByRole('button', { name: /^Approve once/ }).click();
  ok(await call);
});

test('a CLI call shows up in the open timeline without a reload', async () => {
  await view(/^Timeline/).click();
  const rows = page.locator('.tl-row', { hasText: 'read' }).filter({ hasText: 'uplink-cli' });
  await expect(page.locator('.tl-row').first()).toBeVisible();
  await expect(rows).toHaveCount(0);
  const out = serve.cli('invoke', channel(), 'read', '{"lines":3}', '--json');
  expect(out).toContain('text');
  await expect(rows).toHaveCount(1);
  await expect(rows.locator('.outcome')).toHaveText(/succeeded/);
});

test('a reload with a prompt waiting keeps the prompt, and approving it after the reload runs the call', async () => {
  await view(/^Approvals/).click();
  const call = act('echo after-reload-$((6*7))');
  await expect(card('echo after-reload-$((6*7))')).toBeVisible();
  await page.reload();
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
  await view(/^Approvals/).click();
  await expect(card('echo after-reload-$((6*7))')).toBeVisible();
  await card('echo after-reload-$((6*7))')
    .getByRole('button', { name: /^Approve once/ })
    .click();
  ok(await call);
  await until(() => tmux.capture(pane).includes('after-reload-42'), 'the approved command in the pane');
  await expect(card('echo after-reload-$((6*7))')).toHaveCount(0);
});

test('the timeline says a prompt is waiting for the operator, then that the operator denied it', async () => {
  await view(/^Approvals/).click();
  const call = act('echo wait-then-deny');
  await expect(card('echo wait-then-deny')).toBeVisible();
  await view(/^Timeline/).click();
  const waiting = page.locator('.tl-row', { hasText: 'waiting' });
  await expect(waiting).toHaveCount(1);
  await waiting.click();
  await expect(detail().getByText('echo wait-then-deny')).toBeVisible();
  await expect(authorized()).toHaveText('waiting for the operator');

  await view(/^Approvals/).click();
  await card('echo wait-then-deny').getByLabel('Reason').fill('not now');
  await card('echo wait-then-deny')
    .getByRole('button', { name: /^Deny(?! all)/ })
    .click();
  expect((await call).isError).toBe(true);
  await view(/^Timeline/).click();
  const denied = page.locator('.tl-row', { has: page.locator('.outcome-denied') });
  await expect(denied).toHaveCount(1);
  await expect(denied.locator('.outcome')).toHaveText(/denied/);
  await denied.click();
  await expect(detail().getByText('echo wait-then-deny')).toBeVisible();
  await expect(authorized()).toHaveText(/^denied by the operator \(.+\): “not now”$/);
});

test('"Approve for session" on one card also runs the same agent’s queued prompt for that channel and op', async () => {
  // Its own MCP session, so the grant covers no other test's calls.
  const other = await mcpClient(serve, 'codex');
  try {
    await view(/^Approvals/).click();
    const first = act('echo session-one', other);
    await expect(card('echo session-one')).toBeVisible();
    const second = act('echo session-two', other);
    await expect(card('echo session-two')).toBeVisible();
    await card('echo session-one')
      .getByRole('button', { name: /^Approve for session/ })
      .click();
    await expect(card('echo session-two')).toHaveCount(0);
    await expect(card('echo session-one')).toHaveCount(0);
    ok(await first);
    ok(await second);
    await until(() => tmux.capture(pane).includes('session-two'), 'the queued command in the pane');
  } finally {
    await other.close().catch(() => undefined);
  }
});

test('the timeline says an unanswered prompt timed out', async () => {
  await view(/^Rules/).click();
  await page.getByLabel('New timeout (seconds)').fill('2');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('2.0 s', { exact: true })).toBeVisible();
  await view(/^Approvals/).click();
  const call = act('echo too-late');
  await expect(card('echo too-late')).toBeVisible();
  const result = await call;
  expect(result.isError).toBe(true);
  await view(/^Timeline/).click();
  const late = page.locator('.tl-row', { has: page.locator('.outcome-timed_out') });
  await expect(late).toHaveCount(1);
  await expect(late.locator('.outcome')).toHaveText(/timed out$/);
  await late.click();
  await expect(detail().getByText('echo too-late')).toBeVisible();
  await expect(authorized()).toHaveText('timed out: the operator did not decide in time (auto-denied)');
  expect(tmux.capture(pane)).not.toContain('too-late');
});
