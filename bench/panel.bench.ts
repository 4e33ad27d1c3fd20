/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Panel benchmarks in Debian Chromium (playwright-core):
 * 1. MCP `channel_act` request → approval prompt painted in the panel (real `uplink serve`, real
 *    tmux, real MCP client), median over N prompts; baseline: a `channel_observe` round trip.
 * 2. The timeline with 100,000 events (20,000 invocations × 5): ingest, first render, the longest
 *    frame while scrolling, and the page's JS heap. Events come from an in-page PanelApi (the
 *    preload's slot, `window.uplink`) so the figure is the renderer's alone.
 */
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import type { BenchReport, BenchRow } from './types';
import { median } from './types';
import { CHROMIUM, CHROMIUM_ARGS, PrivateTmux, mcpClient, startServe } from '../test/e2e/harness';

const PROMPTS = 15;
const INVOCATIONS = 20_000;
const BASELINE_INVOCATIONS = 1_000;

/** Records, in the page, when the first approval card is painted (next frame after insertion). */
async function armPromptProbe(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __promptAt?: number };
    w.__promptAt = undefined;
    const obs = new MutationObserver(() => {
      if (w.__promptAt === undefined && document.querySelector('article.approval')) {
        obs.disconnect();
        requestAnimationFrame(() => (w.__promptAt = Date.now()));
      }
    });
    obs.observe(document.body, { childList: true, subtree: true });
  });
}

async function promptLatency(rows: BenchRow[]): Promise<void> {
  const tmux = new PrivateTmux();
  tmux.start('bench', 'sh');
  const pane = `tmux:${tmux.panes()[0]}`;
  const serve = await startServe({ tmux, config: { tmux: { socket: tmux.socket, write_allow: [{ pattern: '*', tier: 'operator' }] } } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(serve.panelUrl);
    await page.getByText('connected', { exact: true }).waitFor();
    const agent = await mcpClient(serve, 'bench-agent');
    const latencies: number[] = [];
    const roundTrips: number[] = [];
    for (let i = 0; i < PROMPTS + 2; i++) {
      const r0 = Date.now();
      await agent.callTool({ name: 'channel_observe', arguments: { channel: pane, op: 'read', args: { lines: 5 } } });
      const readMs = Date.now() - r0;
      await armPromptProbe(page);
      const t0 = Date.now();
      const call = agent.callTool({ name: 'channel_act', arguments: { channel: pane, op: 'type', args: { text: `: bench ${i}`, enter: true } } });
      await page.waitForFunction(() => (window as unknown as { __promptAt?: number }).__promptAt !== undefined, undefined, { timeout: 20_000, polling: 5 });
      const seenAt = await page.evaluate(() => (window as unknown as { __promptAt: number }).__promptAt);
      await page.locator('article.approval').first().getByRole('button', { name: /^Approve once/ }).click();
      await call;
      if (i >= 2) {
        // The first two warm up the JIT, the SQLite statements and the driver's control client.
        latencies.push(seenAt - t0);
        roundTrips.push(readMs);
      }
    }
    await agent.close();
    const m = median([...latencies]);
    const base = median([...roundTrips]);
    rows.push({ name: 'channel_act → prompt painted (median)', value: m, unit: 'ms', note: `n=${latencies.length}, max ${Math.max(...latencies)} ms; target ≤ 100 ms` });
    rows.push({ name: 'baseline: channel_observe round trip (median)', value: base, unit: 'ms', note: `prompt/baseline = ${(m / Math.max(1, base)).toFixed(2)}×` });
  } finally {
    await browser.close();
    await serve.stop();
    tmux.stop();
    rmSync(serve.dataDir, { recursive: true, force: true });
  }
}

/** An in-page PanelApi (the preload's slot) with no data; the bench pushes events into it. */
const FAKE_PRELOAD = `(() => {
  const listeners = {};
  const empty = { listPendingApprovals: [], listChannels: { channels: [], health: [], errors: [] }, listRules: [], listProviders: [],
    getSettings: { approval_timeout_ms: 120000, data_dir: '/bench', version: 'bench' }, queryTimeline: { events: [], next_before: null } };
  const api = new Proxy({}, { get: (_t, name) => name === 'on'
    ? (event, fn) => { (listeners[event] ??= new Set()).add(fn); return () => listeners[event].delete(fn); }
    : async () => structuredClone(empty[name] ?? {}) });
  window.uplink = api;
  window.__emit = (event, payload) => { for (const fn of listeners[event] ?? []) fn(payload); };
})();`;

async function timeline(rows: BenchRow[]): Promise<void> {
  const tmux = new PrivateTmux();
  tmux.start('bench', 'sh');
  const serve = await startServe({ tmux });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
    await page.addInitScript(FAKE_PRELOAD);
    await page.goto(`${serve.url}/`);
    await page.getByText('connected', { exact: true }).waitFor();
    const cdp = await page.context().newCDPSession(page);
    const heap = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      return (await cdp.send('Runtime.getHeapUsage')).usedSize;
    };
    const heapBefore = await heap();

    /** Emits invocations [from, to) as 5 live events each; resolves with the time to ingest them. */
    const ingest = (from: number, to: number) =>
      page.evaluate(
        async ({ from, to }) => {
          const kinds = ['accepted', 'approval_requested', 'approval_granted', 'started', 'succeeded'];
          const states = ['accepted', 'accepted', 'accepted', 'running', 'succeeded'];
          const emit = (window as unknown as { __emit: (e: string, p: unknown) => void }).__emit;
          const t0 = performance.now();
          let cursor = from * 5;
          for (let i = from; i < to; i++) {
            for (let s = 0; s < 5; s++) {
              emit('runtimeEvent', {
                cursor: ++cursor, at: 1_700_000_000_000 + cursor * 7, type: 'event', kind: kinds[s], invocation_id: `inv-${i.toString(16).padStart(8, '0')}`,
                sequence: s + 1, channel: `tmux:%${i % 12}`, op: ['send', 'type', 'keys', 'read'][i % 4], agent: ['claude-code', 'codex'][i % 2],
                provider_id: 'uplink/tmux', interaction: 'typed', state: states[s], ...(s === 4 ? { duration_ms: 20 + (i % 300) } : {}),
              });
            }
          }
          // Live events are batched per frame; wait until the last row is in the store's order.
          await new Promise((r) => setTimeout(r, 50));
          return performance.now() - t0;
        },
        { from, to },
      );

    /** Switches to the timeline and resolves with the time until its rows are painted. */
    const openTimeline = () =>
      page.evaluate(async () => {
        const nav = (label: string) => [...document.querySelectorAll('nav button')].find((b) => b.textContent?.startsWith(label)) as HTMLButtonElement;
        nav('Approvals').click();
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        const t0 = performance.now();
        nav('Timeline').click();
        await new Promise<void>((resolve) => {
          const check = () => (document.querySelector('.tl-row') ? requestAnimationFrame(() => resolve()) : requestAnimationFrame(check));
          check();
        });
        return performance.now() - t0;
      });

    /** Frame intervals while scrolling for `ms`; `jumpEvery` > 0 adds a scrollbar-drag jump every N frames. */
    const scrollFrames = (ms: number, jumpEvery: number) =>
      page.evaluate(
        async ({ ms, jumpEvery }) => {
          const el = document.querySelector('.tl-scroll') as HTMLElement;
          el.scrollTop = 0;
          await new Promise((r) => requestAnimationFrame(r));
          const frames: number[] = [];
          const jumps: number[] = [];
          let last = performance.now();
          const start = last;
          let jumped = false;
          await new Promise<void>((resolve) => {
            const tick = (now: number) => {
              (jumped ? jumps : frames).push(now - last);
              last = now;
              jumped = jumpEvery > 0 && frames.length % jumpEvery === 0;
              const max = el.scrollHeight - el.clientHeight;
              el.scrollTop = jumped ? Math.random() * max : (el.scrollTop + 120) % max;
              if (now - start < ms) requestAnimationFrame(tick);
              else resolve();
            };
            requestAnimationFrame(tick);
          });
          frames.shift();
          const stats = (xs: number[]) => {
            xs.sort((a, b) => a - b);
            return { max: xs[xs.length - 1] ?? 0, p95: xs[Math.floor(xs.length * 0.95)] ?? 0, count: xs.length };
          };
          return { wheel: stats(frames), jump: stats(jumps) };
        },
        { ms, jumpEvery },
      );

    // Baseline in the same run: the same probes over 5,000 events (1,000 invocations).
    await ingest(0, BASELINE_INVOCATIONS);
    const baseRender = await openTimeline();
    const baseWheel = (await scrollFrames(3000, 0)).wheel;
    const baseJump = (await scrollFrames(3000, 20)).jump;

    const ingestMs = await ingest(BASELINE_INVOCATIONS, INVOCATIONS);
    const firstRenderMs = await openTimeline();
    const rowsInDom = await page.locator('.tl-row').count();
    const wheel = (await scrollFrames(3000, 0)).wheel;
    const jump = (await scrollFrames(3000, 20)).jump;
    const heapAfter = await heap();
    const load = `load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} CPUs`;
    const ratio = (a: number, b: number) => `${(a / Math.max(1, b)).toFixed(2)}×`;

    rows.push({ name: 'timeline: ingest 95,000 live events', value: Math.round(ingestMs), unit: 'ms', note: `${INVOCATIONS - BASELINE_INVOCATIONS} invocations × 5 events, batched per frame` });
    rows.push({ name: 'timeline: first render with 100,000 events', value: Math.round(firstRenderMs), unit: 'ms', note: `${rowsInDom} rows in the DOM; vs 5,000 events ${Math.round(baseRender)} ms = ${ratio(firstRenderMs, baseRender)}` });
    rows.push({ name: 'timeline: longest frame while scrolling (100k)', value: Math.round(wheel.max * 10) / 10, unit: 'ms', note: `p95 ${wheel.p95.toFixed(1)} ms over ${wheel.count} frames; 5k baseline max ${baseWheel.max.toFixed(1)} / p95 ${baseWheel.p95.toFixed(1)} ms; target ≤ 50 ms; ${load}` });
    rows.push({ name: 'timeline: longest frame on a scrollbar jump (100k)', value: Math.round(jump.max * 10) / 10, unit: 'ms', note: `p95 ${jump.p95.toFixed(1)} ms over ${jump.count} jumps; 5k baseline max ${baseJump.max.toFixed(1)} / p95 ${baseJump.p95.toFixed(1)} ms` });
    rows.push({ name: 'page JS heap with 100,000 events', value: Math.round((heapAfter / 1024 / 1024) * 10) / 10, unit: 'MiB', note: `empty panel ${(heapBefore / 1024 / 1024).toFixed(1)} MiB` });
  } finally {
    await browser.close();
    await serve.stop();
    tmux.stop();
    rmSync(serve.dataDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchReport> {
  const rows: BenchRow[] = [];
  await promptLatency(rows);
  await timeline(rows);
  return { title: 'panel (Chromium)', rows };
}
