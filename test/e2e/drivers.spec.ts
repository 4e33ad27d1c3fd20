/// <reference lib="dom" />
/**
 * The driver debugger in Chromium against a real `uplink serve` whose config has the notes driver
 * (a plain Node program speaking the driver protocol) in `external_drivers`, not yet trusted: the
 * operator trusts it in the panel, its channels appear, the live trace shows the calls with the
 * sensitive arg masked, and "Restart driver" starts a new process, saying each step. A second copy
 * (`stubborn`, admitted by config) ignores SIGTERM and the end of stdin, so its restart takes seconds.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PrivateTmux, ROOT, startServe } from './harness';
import type { Serve } from './harness';

const DRIVER = join(ROOT, 'test', 'fixtures', 'external', 'notes-driver.mjs');
const SHA = createHash('sha256').update(readFileSync(DRIVER)).digest('hex');
const tmux = new PrivateTmux();
let serve: Serve;
let page: Page;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async ({ browser }) => {
  tmux.start('work', 'sh');
  serve = await startServe({
    tmux,
    config: {
      external_drivers: [
        { id: 'notes', command: [process.execPath, DRIVER] },
        { id: 'stubborn', command: [process.execPath, DRIVER, '--id', 'stubborn', '--stubborn'], integrity: { file: DRIVER, sha256: SHA } },
      ],
    },
  });
  page = await browser.newPage();
  await page.goto(serve.panelUrl);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
});

test.afterAll(async () => {
  await serve?.stop();
  tmux.stop();
  if (serve) rmSync(serve.dataDir, { recursive: true, force: true });
});

const view = (name: RegExp) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const card = () => page.getByRole('article', { name: 'driver notes' });

test('an untrusted driver is pointed at from Channels and trusted in Drivers with the hash shown; its channels appear', async () => {
  await view(/^Channels/).click();
  await expect(page.getByText('notes waits for your trust before it runs.')).toBeVisible();
  await page.getByRole('button', { name: 'Open Drivers' }).click();
  await expect(page.getByRole('heading', { name: 'Drivers' })).toBeVisible();
  await expect(page.getByRole('article', { name: 'driver tmux' })).toContainText('in-process');
  const prompt = page.getByRole('group', { name: 'Trust notes' });
  await expect(prompt).toContainText(DRIVER);
  const hash = (await prompt.getByTestId('trust-hash').textContent())!;
  expect(hash).toMatch(/^[0-9a-f]{64}$/);
  await prompt.getByRole('button', { name: 'Trust notes' }).click();
  await expect(prompt).toHaveCount(0);
  await expect(card()).toContainText('running');
  await expect(card()).toContainText('admitted');
  await view(/^Channels/).click();
  await expect(page.getByRole('listbox', { name: 'notes channels' })).toContainText('notes:todo');
  await expect(page.getByText(/waits for your trust/)).toHaveCount(0);
});

test('the live trace shows the calls as they happen, filtered by channel and op, the secret masked', async () => {
  await view(/^Drivers/).click();
  serve.cli('invoke', 'notes:todo', 'write', JSON.stringify({ text: 'buy bread', secret: 'hunter2' }));
  serve.cli('invoke', 'notes:ideas', 'read');
  const trace = card().getByRole('table', { name: 'notes protocol trace' });
  await expect(trace).toContainText('buy bread');
  await expect(trace).toContainText('"secret":"••••"');
  await expect(trace).not.toContainText('hunter2');
  await card().getByLabel('notes trace channel').selectOption('notes:ideas');
  await expect(trace.locator('tbody tr')).toHaveCount(2);
  await expect(trace).not.toContainText('buy bread');
  await card().getByLabel('notes trace channel').selectOption('');
  await card().getByLabel('notes trace op').selectOption('write');
  await expect(trace.locator('tbody tr')).toHaveCount(2);
  await expect(trace.locator('tbody tr').first()).toContainText('response');
});

test('"Restart driver" starts a new process', async () => {
  const pidOf = async () => (await card().locator('dt:text-is("pid") + dd').textContent())!;
  const before = await pidOf();
  await card().getByRole('button', { name: 'Restart driver' }).click();
  await expect.poll(pidOf).not.toBe(before);
  await expect(card()).toContainText('running');
  await expect(card().locator('dt:text-is("Restarts") + dd')).toContainText('1');
});

test('"Restart driver" is busy while it runs, says each step, then the outcome', async () => {
  const stubborn = page.getByRole('article', { name: 'driver stubborn' });
  serve.cli('channels'); // starts it
  await expect(stubborn.getByText('running', { exact: true })).toBeVisible();
  const button = stubborn.getByRole('button', { name: /^Restart/ });
  await button.click();
  // It ignores the end of stdin and SIGTERM: the stop takes about 4 s, shown as it happens.
  await expect(button).toHaveText('Restarting…');
  await expect(button).toBeDisabled();
  const progress = stubborn.getByRole('status', { name: 'stubborn restart' });
  await expect(progress).toHaveText('stopping stubborn…');
  await expect(stubborn.locator('.driver-head')).toContainText('stopping');
  await expect(progress).toHaveText(/^restarted: running, pid \d+$/, { timeout: 15_000 });
  await expect(button).toHaveText('Restart driver');
  await expect(button).toBeEnabled();
});

test("an external driver's channel page opens with its preview and no error, and records no call refused in the operator's name", async () => {
  await view(/^Channels/).click();
  await page
    .getByRole('listbox', { name: 'notes channels' })
    .getByRole('button', { name: /notes:ideas/ })
    .click();
  await expect(page.getByRole('heading', { name: 'Ops' })).toBeVisible();
  const preview = page.getByRole('region', { name: 'Preview' });
  await expect(preview.getByLabel('Recent text')).toHaveText('a driver per tool');
  await expect(page.locator('.channel-page').getByRole('alert')).toHaveCount(0);
  const entries = serve
    .cli('log', '--json', '--channel', 'notes:ideas')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; op?: string; outcome?: string });
  expect(entries.filter((e) => e.type === 'rejected' || e.outcome === 'rejected')).toEqual([]);
  expect(entries.filter((e) => e.op !== 'read')).toEqual([]);
});
