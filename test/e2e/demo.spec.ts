/// <reference lib="dom" />
/**
 * `uplink demo` end to end, as a presenter plays it: the demo on an empty data directory with a
 * private display, the panel in Chromium, "Approve once" on every prompt but the one the story
 * says to refuse, then the audit as `uplink log --json` reads it once the demo has exited.
 */
import { expect, test } from '@playwright/test';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, cleanEnv, until } from './harness';

const SHOTS = resolve(ROOT, process.env.UPLINK_SCREENSHOTS_DIR ?? 'test-results/screenshots');
const REFUSED = 'git push --force origin main';

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** The stage markers (`UPLINK_DEMO_STAGE=…`) of every live process that carries one. */
function stageMarkers(): Set<string> {
  const found = new Set<string>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${name}/stat`, 'utf8'))) continue;
      const marker = readFileSync(`/proc/${name}/environ`, 'latin1')
        .split('\0')
        .find((v) => v.startsWith('UPLINK_DEMO_STAGE='));
      if (marker) found.add(marker);
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

interface Entry {
  invocation_id?: string;
  channel?: string;
  op?: string;
  interaction?: string;
  type: string;
  authorized?: string;
  decision?: string;
  granted?: boolean;
  outcome?: string;
}

test('a presenter approves every prompt but the force-push; the demo exits 0 and the audit holds operator-approved tmux, semantic_ui and visual_ui calls', async ({
  page,
}) => {
  test.setTimeout(170_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-e2e-demo-'));
  const port = await freePort();
  const before = stageMarkers();
  const env = cleanEnv({ UPLINK_DATA_DIR: dataDir });
  const demo = spawn(process.execPath, [join(ROOT, 'bin/uplink'), 'demo', '--port', String(port), '--exit-when-done', '--headless'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  demo.stdout!.on('data', (d) => (out += String(d)));
  demo.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((r) => demo.once('exit', (code) => r(code)));
  try {
    const panelUrl = await until(() => /panel: (\S+)/.exec(out)?.[1] ?? '', "the demo's panel URL", 60_000).catch((e: Error) => {
      throw new Error(`${e.message}; the demo printed: ${out}`);
    });
    expect(panelUrl).toContain(`:${port}/`);
    await page.goto(panelUrl);
    const strip = page.getByRole('region', { name: 'Demo presenter' });
    // The story starts once this panel is attached, and its first steps stay long enough to be read.
    await expect(strip).toContainText('Step 1 of 8', { timeout: 30_000 });
    await expect(strip).toContainText('Step 2 of 8');

    let shot = false;
    let done = false;
    void exited.then(() => (done = true));
    const decided = new Set<string>();
    let named = 0;
    while (!done) {
      // The oldest prompt not yet decided, pinned by its id so a click never lands on the next one.
      const ids = await page.locator('article.approval[data-approval-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-approval-id') ?? ''));
      const id = ids.find((i) => i && !decided.has(i));
      if (!id) {
        await page.waitForTimeout(100);
        continue;
      }
      const card = page.locator(`article.approval[data-approval-id="${id}"]`);
      const text = (await card.textContent({ timeout: 2000 }).catch(() => '')) ?? '';
      if (!shot && text.includes('click')) {
        // The presenter strip with the live window, at the visual_ui step.
        await expect(strip.getByRole('img', { name: /Live view of desktop:/ })).toBeVisible();
        await page.screenshot({ path: join(SHOTS, 'demo-presenter.png') });
        shot = true;
      }
      // The strip names a pane as the prompt does (`tmux:%0 (builder)`), never by another name.
      const channel =
        (await card
          .locator('.channel')
          .first()
          .textContent({ timeout: 2000 })
          .catch(() => '')) ?? '';
      if (channel.startsWith('tmux:')) {
        const labels =
          (await card
            .locator('.labels')
            .first()
            .textContent({ timeout: 500 })
            .catch(() => '')) ?? '';
        await expect(strip).toContainText(` on ${channel}${labels}`);
        named += 1;
      }
      const refuse = text.includes(REFUSED);
      if (refuse) await expect(strip).toContainText('refuse');
      decided.add(id);
      await card
        .getByRole('button', { name: refuse ? /^Deny(?! all)/ : /^Approve once/ })
        .click({ timeout: 5000 })
        .catch(() => decided.delete(id));
    }
    expect({ code: await exited, out }).toMatchObject({ code: 0 });
    // type, ask and the force-push: each prompt on a pane was checked against the strip.
    expect(named).toBeGreaterThanOrEqual(3);
    // Nothing the demo started outlives it.
    expect([...stageMarkers()].filter((m) => !before.has(m))).toEqual([]);
    expect(out).toContain('the operator said no');
    // The app's own account: the form was saved and the sketch pad was clicked.
    expect(out).toContain('the app itself reports: saved Ada Lovelace <ada@example.com>, 1 click(s) in the sketch pad');

    // The demo's hub keeps its audit in its own data dir inside the one it was given.
    const log = execFileSync(process.execPath, [join(ROOT, 'bin/uplink'), 'log', '--json', '--limit', '5000'], {
      env: { ...env, UPLINK_DATA_DIR: join(dataDir, 'demo-stage') },
      encoding: 'utf8',
    });
    const entries = log
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Entry);
    const calls = new Map<string, Entry[]>();
    for (const e of entries) if (e.invocation_id) calls.set(e.invocation_id, [...(calls.get(e.invocation_id) ?? []), e]);
    const approved = [...calls.values()]
      .filter((es) => es.some((e) => e.outcome === 'succeeded') && es.some((e) => e.type === 'decision' && e.authorized === 'operator' && e.granted === true))
      .map((es) => ({
        channel: es.find((e) => e.channel)?.channel ?? '',
        op: es.find((e) => e.op)?.op,
        interaction: es.find((e) => e.interaction)?.interaction,
      }));
    expect(approved.some((c) => c.channel.startsWith('tmux:') && c.op === 'type')).toBe(true);
    expect(approved.some((c) => c.channel.startsWith('tmux:') && c.op === 'ask')).toBe(true);
    expect(approved.some((c) => c.channel.startsWith('desktop:') && c.interaction === 'semantic_ui')).toBe(true);
    expect(approved.some((c) => c.channel.startsWith('desktop:') && c.interaction === 'visual_ui' && c.op === 'click')).toBe(true);
    const refused = [...calls.values()].find((es) => es.some((e) => e.type === 'decision' && e.granted === false && e.authorized === 'operator'));
    expect(refused?.some((e) => e.outcome === 'denied')).toBe(true);
  } finally {
    if (demo.exitCode === null) demo.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
