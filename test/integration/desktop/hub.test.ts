/**
 * The desktop driver inside a real hub: mutating ops wait for the operator, whose prompt carries a
 * fresh screenshot with the target marked and names the interaction kind the kernel chose; the
 * timeline records that kind; a changed target is refused after approval as well.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub, PendingApproval } from '../../../src/main/hub';
import { createDesktopDriver, desktopConfigSchema } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { addrOf, channelOf, semanticChannelOf, startFixture } from './apps';
import type { App } from './apps';
import { startSession } from './session';
import type { DesktopSession } from './session';
import { validated } from '../../fixtures/validated-driver';

let session: DesktopSession;
let hub: Hub;
let app: App;
let channel: string;
/** A second driver, only to wait until apps are listed and accessible. */
let probe: DesktopDriver;
const prompts: PendingApproval[] = [];
const agent = { kind: 'mcp' as const, name: 'test-agent', session: 's1' };

beforeAll(async () => {
  session = await startSession();
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-desktop-hub-'));
  hub = createHub({
    dataDir,
    drivers: {
      configSchemas: { desktop: desktopConfigSchema },
      create: (section) => [createDesktopDriver({ env: session.env, config: section('desktop') as () => undefined })],
    },
    watchConfig: false,
  });
  hub.attachPanel();
  hub.subscribeApprovals((e) => {
    if (e.type !== 'added') return;
    prompts.push(e.approval);
    void hub.decide(e.approval.approval_id, { kind: 'once', by: 'test-operator' });
  });
  app = await startFixture(session, ['--title', 'Hub Fixture']);
  probe = validated(createDesktopDriver({ env: session.env }));
  channel = (await semanticChannelOf(probe, app.pid)).channel;
  await hub.listChannels();
});

afterAll(async () => {
  await hub?.close();
  await probe?.dispose();
  await app?.stop();
  await session?.stop();
});

describe('desktop through the hub', () => {
  it('lists the window and runs read-only ops at once', async () => {
    const listed = (await hub.listChannels()).find((c) => c.channel === channel);
    expect(listed?.detail).toMatchObject({ pid: app.pid, title: 'Hub Fixture' });
    const tree = (await hub.invoke(channel, 'tree', { max_depth: 2 }, { agent })) as { node_count: number };
    expect(tree.node_count).toBeGreaterThan(1);
    expect(prompts).toHaveLength(0);
  });

  it('set-text waits for approval; the prompt shows a screenshot with the element marked and the semantic_ui kind', async () => {
    const result = await hub.invoke(channel, 'set-text', { path: '//text[Name]', text: 'approved text' }, { agent });
    expect(result).toMatchObject({ confirmed: true });
    await app.state((s) => s.entry === 'approved text', 'entry = "approved text"');
    const prompt = prompts.at(-1)!;
    expect(prompt).toMatchObject({ op: 'set-text', interaction: 'semantic_ui', provider_id: 'uplink/desktop-semantic' });
    expect(prompt.preview?.text).toMatch(/set the text of text "Name" \(\/0\/1\) to "approved text" in "Hub Fixture"/);
    expect(Buffer.from(prompt.preview!.image_png!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(prompt.preview?.mark).toMatchObject({ width: expect.any(Number), height: expect.any(Number) });
  });

  it('type constrained to visual_ui runs through XTest, and the timeline records the kind', async () => {
    await hub.invoke(channel, 'click', { x: 210, y: 54 }, { agent, interaction: 'visual_ui' });
    await hub.invoke(channel, 'key', { chord: 'ctrl+a' }, { agent });
    await hub.invoke(channel, 'type', { text: 'typed by pixels' }, { agent, interaction: 'visual_ui' });
    await app.state((s) => s.entry === 'typed by pixels', 'entry = "typed by pixels"');
    expect(prompts.at(-1)).toMatchObject({ op: 'type', interaction: 'visual_ui', provider_id: 'uplink/desktop-visual' });
    const kinds = hub
      .queryAudit({ channel, op: 'type' })
      .entries.filter((e) => e.kind === 'succeeded')
      .map((e) => e.interaction);
    expect(kinds).toContain('visual_ui');
    const setText = hub.queryAudit({ channel, op: 'set-text' }).entries.find((e) => e.kind === 'succeeded');
    expect(setText?.interaction).toBe('semantic_ui');
  });

  it('string bounds count code points: a chord of 100 emoji (200 UTF-16 units) reaches the helper, 101 do not', async () => {
    await expect(hub.invoke(channel, 'key', { chord: '😀'.repeat(100) }, { agent })).rejects.toMatchObject({
      kind: 'Invalid',
      message: expect.stringMatching(/unknown key|bad key chord/),
    });
    await expect(hub.invoke(channel, 'key', { chord: '😀'.repeat(101) }, { agent })).rejects.toMatchObject({
      kind: 'Invalid',
      message: expect.stringMatching(/params_schema.*\/args\/chord.*maxLength/),
    });
  });

  it('an op the constraint cannot serve is refused before any prompt', async () => {
    const before = prompts.length;
    await expect(hub.invoke(channel, 'click', { x: 1, y: 1 }, { agent, interaction: 'semantic_ui' })).rejects.toMatchObject({ kind: 'Invalid' });
    expect(prompts.length).toBe(before);
  });

  it("an element path that resolves to nothing is refused with the helper's NotFound before any prompt", async () => {
    const before = prompts.length;
    await expect(hub.invoke(channel, 'activate', { path: '/0/99/99' }, { agent })).rejects.toMatchObject({
      kind: 'NotFound',
      message: 'element /0/99/99 no longer exists',
      hint: expect.stringMatching(/run tree again/),
    });
    expect(prompts.length).toBe(before);
    expect(hub.queryAudit({ channel, op: 'activate', state: 'rejected' }).entries).toHaveLength(1);
  });

  it('after the app is replaced by one with the same title, the old channel never reaches the newcomer', async () => {
    await app.stop();
    app = await startFixture(session, ['--title', 'Hub Fixture']);
    await channelOf(probe, app.pid);
    const mark = app.stdout().length;
    const attempt = async (op: string, args: Record<string, string>): Promise<{ rendered: string; kind: string }> =>
      (await hub.invoke(channel, op, args, { agent }).then(
        () => ({ kind: 'none', rendered: 'the call succeeded' }),
        (e: unknown) => e,
      )) as { rendered: string; kind: string };
    // The X server usually hands the newcomer the same window id: then the old address is listed as
    // stale and refused with evidence; with a new id the old address is simply gone (NotFound).
    const before = prompts.length;
    const typed = await attempt('type', { text: 'must not arrive' });
    // `type` has two kinds, so the hub asks interactionsFor first: refused before any prompt.
    expect(typed.rendered).toMatch(/^uplink error \[desktop:(Rejected\]: target changed — hint: |NotFound\])/);
    expect(prompts.length).toBe(before);
    const set = await attempt('set-text', { path: '//text[Name]', text: 'must not arrive' });
    expect(set.rendered).toMatch(/^uplink error \[desktop:(Rejected\]: target changed — hint: |NotFound\])/);
    // The driver refuses a changed target before the operator is asked about it.
    expect(prompts.length).toBe(before);
    // A window: refused input must not arrive late.
    await new Promise((r) => setTimeout(r, 300));
    expect(app.stdout().slice(mark)).not.toContain('"event": "entry"');
    const listed = (await hub.listChannels()).find((c) => (c.detail as { pid: number }).pid === app.pid)!;
    expect(addrOf(listed)).not.toBe(channel.slice('desktop:'.length));
  });
});
