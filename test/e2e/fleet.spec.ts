/// <reference lib="dom" />
/**
 * Two `uplink serve` hubs in one fleet on a real `nats-server --auth <token>`, in Chromium: hub
 * alpha's panel lists both members, and a prompt of hub bravo (its own agent typing into its own
 * pane) shows on alpha's panel marked as bravo's, with only Approve once and Deny; approving it
 * there runs the call on bravo.
 */
import { expect, test } from '@playwright/test';
import type { Page } from '@playwright/test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateTmux, ROOT, mcpClient, startServe, toolText, until } from './harness';
import type { Serve } from './harness';

const NATS = '/usr/sbin/nats-server';
const TOKEN = 'fleet-e2e-token-7b2d';

const tmuxA = new PrivateTmux();
const tmuxB = new PrivateTmux();
const natsDir = mkdtempSync(join(tmpdir(), 'uplink-e2e-nats-'));
let nats: ChildProcess | undefined;
let alpha: Serve;
let bravo: Serve;
let agent: Client;
let page: Page;
let pane: string;

test.describe.configure({ mode: 'serial' });

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A data directory holding the fleet token (owner-only, as the hub requires). */
function memberDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-e2e-fleet-'));
  writeFileSync(join(dir, 'fleet.token'), `${TOKEN}\n`, { mode: 0o600 });
  return dir;
}

test.beforeAll(async ({ browser }) => {
  const port = await freePort();
  nats = spawn(NATS, ['-js', '-sd', natsDir, '-a', '127.0.0.1', '-p', String(port), '--auth', TOKEN], { stdio: 'ignore' });
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const s = tcpConnect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
      }),
    'nats-server to listen',
  );
  const fleet = (name: string) => ({ fleet: { url: `nats://127.0.0.1:${port}`, name, token_file: 'fleet.token' } });
  tmuxA.start('work', 'sh');
  tmuxB.start('work', 'sh');
  pane = tmuxB.panes()[0]!;
  alpha = await startServe({ tmux: tmuxA, dataDir: memberDir(), config: fleet('alpha') });
  bravo = await startServe({ tmux: tmuxB, dataDir: memberDir(), config: fleet('bravo') });
  bravo.cli('tier', `tmux:${pane}`, 'operator');
  agent = await mcpClient(bravo, 'claude-code');
  page = await browser.newPage();
  await page.goto(alpha.panelUrl);
  await expect(page.getByText('connected', { exact: true })).toBeVisible();
});

test.afterAll(async () => {
  await agent?.close().catch(() => undefined);
  for (const s of [alpha, bravo]) {
    if (!s) continue;
    await s.stop();
    rmSync(s.dataDir, { recursive: true, force: true });
  }
  nats?.kill('SIGKILL');
  tmuxA.stop();
  tmuxB.stop();
  rmSync(natsDir, { recursive: true, force: true });
});

const shot = (name: string) => join(ROOT, process.env.UPLINK_SCREENSHOTS_DIR ?? 'test-results/screenshots', name);
const view = (name: RegExp) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name });
const member = (hub: string) =>
  page
    .getByRole('table', { name: 'Fleet members' })
    .getByRole('row')
    .filter({ has: page.getByRole('cell', { name: hub, exact: true }) });

test('the Fleet view lists this hub and the other member, connected', async () => {
  await view(/^Fleet/).click();
  await expect(page.getByText(/This hub is/)).toContainText('alpha');
  await expect(member('alpha')).toContainText('this hub');
  await expect(member('bravo')).toContainText('connected');
  await page.screenshot({ path: shot('fleet.png') });
});

test('a prompt of hub bravo is approved once from hub alpha’s panel and runs on bravo', async () => {
  // The tmux driver wants the pane read before anything is typed into it.
  await agent.callTool({ name: 'channel_observe', arguments: { channel: `tmux:${pane}`, op: 'read', args: { lines: 5 } } });
  await view(/^Approvals/).click();
  const call = agent.callTool({
    name: 'channel_act',
    arguments: { channel: `tmux:${pane}`, op: 'type', args: { text: 'echo from-alpha-$((6*7))', enter: true } },
  });
  const card = page.locator('article.approval', { hasText: 'on hub bravo' });
  await expect(card).toBeVisible();
  await expect(card.getByRole('button')).toHaveText([/^Approve once/, /^Deny/]);
  await page.screenshot({ path: shot('fleet-approval.png') });
  await card.getByRole('button', { name: /^Approve once/ }).click();
  const result = await call;
  expect(result.isError ?? false, toolText(result)).toBe(false);
  await until(() => tmuxB.capture(pane).includes('from-alpha-42'), 'the command output in bravo’s pane');
  await expect(card).toHaveCount(0);
});
