/// <reference lib="dom" />
/**
 * The timeline's scrolling behaviour in Chromium, with an in-page PanelApi (the preload's
 * `window.uplink` shape) so the history can be large and exact: it follows the newest row,
 * pauses following when the operator scrolls up, and pages older history in from the audit
 * store when scrolled to the top without moving what the operator is looking at.
 */
import { expect, test } from '@playwright/test';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './harness';

test('auto-follow pauses on scroll-up and older history pages in at the top', async ({ page }) => {
  await page.addInitScript(() => {
    type Listener = (payload: unknown) => void;
    const listeners = new Map<string, Set<Listener>>();
    const calls: unknown[] = [];
    const ev = (cursor: number) => ({
      id: cursor,
      at: 1_700_000_000_000 + cursor,
      type: 'event',
      kind: 'succeeded',
      invocation_id: `inv-${cursor}`,
      sequence: 1,
      channel: 'tmux:%1',
      op: 'read',
      agent: { kind: 'mcp', agent_id: 'claude-code', name: 'claude-code' },
      state: 'succeeded',
      duration_ms: 3,
    });
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ev(from + i));
    const replies: Record<string, (p: { before?: number }) => unknown> = {
      listPendingApprovals: () => [],
      listRules: () => [],
      listProviders: () => [],
      listChannels: () => ({ channels: [], health: [], errors: [] }),
      getSettings: () => ({ approval_timeout_ms: 120_000, data_dir: '/data', version: '0.1.0' }),
      queryTimeline: (p) => (p.before === undefined ? { events: range(1001, 3000), next_before: 1001 } : { events: range(1, 1000), next_before: null }),
    };
    const w = window as unknown as Record<string, unknown>;
    w.__calls = calls;
    w.__emit = (event: string, payload: unknown) => listeners.get(event)?.forEach((l) => l(payload));
    w.__ev = ev;
    w.uplink = new Proxy(
      {},
      {
        get: (_t, k: string) =>
          k === 'on'
            ? (event: string, l: Listener) => {
                if (!listeners.has(event)) listeners.set(event, new Set());
                listeners.get(event)!.add(l);
                return () => listeners.get(event)!.delete(l);
              }
            : async (p: { before?: number } = {}) => {
                calls.push({ method: k, params: p });
                return replies[k]?.(p);
              },
      },
    );
  });
  await page.goto(pathToFileURL(join(ROOT, 'dist/renderer/index.html')).href);
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('button', { name: /^Timeline/ })
    .click();
  const grid = page.getByRole('grid', { name: /Invocations/ });
  await expect(page.getByText('2,000 invocations')).toBeVisible();
  const metrics = () => grid.evaluate((el) => ({ top: el.scrollTop, fromBottom: el.scrollHeight - el.scrollTop - el.clientHeight }));
  const emit = (cursor: number) =>
    page.evaluate(
      (c) =>
        (window as unknown as { __emit(e: string, p: unknown): void; __ev(c: number): unknown }).__emit(
          'runtimeEvent',
          (window as unknown as { __ev(c: number): unknown }).__ev(c),
        ),
      cursor,
    );

  // Follows the newest row, also when a live event arrives.
  await expect.poll(async () => (await metrics()).fromBottom).toBeLessThan(34);
  await emit(3001);
  await expect(page.getByText('2,001 invocations')).toBeVisible();
  await expect.poll(async () => (await metrics()).fromBottom).toBeLessThan(34);

  // Scrolling up pauses following: a live event does not move the view.
  await grid.evaluate((el) => el.scrollBy(0, -el.scrollHeight / 2));
  await expect(page.getByRole('button', { name: '↓ Follow newest' })).toBeVisible();
  const held = (await metrics()).top;
  await emit(3002);
  await expect(page.getByText('2,002 invocations')).toBeVisible();
  expect(Math.abs((await metrics()).top - held)).toBeLessThan(2);

  // At the top, the page before the oldest row comes in from the audit store, and the rows the
  // operator was looking at stay where they were (the scroll offset grows by the new rows).
  await grid.evaluate((el) => (el.scrollTop = 0));
  await expect(page.getByText('3,002 invocations')).toBeVisible();
  const calls = (await page.evaluate(() => (window as unknown as { __calls: Array<{ method: string; params: { before?: number } }> }).__calls)).filter(
    (c) => c.method === 'queryTimeline',
  );
  expect(calls.map((c) => c.params.before)).toContain(1001);
  expect((await metrics()).top).toBeGreaterThan(1000 * 34 - 200);
  await expect(page.getByText('Showing everything since the start of history')).toBeVisible();

  // "Follow newest" jumps back to the bottom and follows again.
  await page.getByRole('button', { name: '↓ Follow newest' }).click();
  await expect.poll(async () => (await metrics()).fromBottom).toBeLessThan(34);
  await emit(3003);
  await expect(page.getByText('3,003 invocations')).toBeVisible();
  await expect.poll(async () => (await metrics()).fromBottom).toBeLessThan(34);
});
