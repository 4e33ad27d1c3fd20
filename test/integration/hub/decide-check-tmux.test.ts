/**
 * An approval is checked when it is given: a guard that held when the prompt was raised (the
 * agent's recent read of the pane) may have lapsed by the time the operator approves. The hub
 * runs the driver's precheck again, holds the approval back with the reason, keeps the prompt
 * pending and marks it `would_fail`; it checks waiting prompts again on its own, so the card says
 * so beforehand. The operator's own fresh look never stands for the agent's read.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { ApprovalEvent, Hub, PendingApproval } from '../../../src/main/hub';
import { HubError } from '../../../src/main/hub/errors';
import { tmuxDriverForTest } from '../../fixtures/tmux-driver';
import { TmuxTestServer } from '../../fixtures/tmux-server';

const agent = { kind: 'mcp' as const, name: 'test-agent', session: 's1' };
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A hub on a private tmux server whose driver reads the clock `clock.t`; one operator pane; a panel attached. */
function start(recheckMs = 0): { hub: Hub; pane: string; clock: { t: number } } {
  const server = TmuxTestServer.start('sh');
  cleanups.push(() => server.stop());
  const clock = { t: Date.now() };
  const hub = createHub({
    dataDir: mkdtempSync(join(tmpdir(), 'uplink-decide-check-')),
    drivers: [tmuxDriverForTest({ env: server.ownEnv(), config: () => ({}), now: () => clock.t })],
    watchConfig: false,
    recheckMs,
  });
  cleanups.push(() => hub.close());
  hub.attachPanel();
  const pane = server.split('cat');
  server.setOption(pane, '@uplink_profile', 'operator');
  return { hub, pane, clock };
}

function next(hub: Hub, type: ApprovalEvent['type'], ms = 5000): Promise<PendingApproval> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} event`)), ms);
    const off = hub.subscribeApprovals((e) => {
      if (e.type !== type || !('approval' in e)) return;
      clearTimeout(timer);
      off();
      resolve(e.approval);
    });
  });
}

async function refusal(promise: Promise<unknown>): Promise<HubError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof HubError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('an approval is checked when it is given', () => {
  it('approving a type 64 s after the read is held back with the reason; the prompt stays pending, marked would_fail', async () => {
    const { hub, pane, clock } = start();
    await hub.invoke(`tmux:${pane}`, 'read', {}, { agent });
    const added = next(hub, 'added');
    const call = hub.invoke(`tmux:${pane}`, 'type', { text: 'hello' }, { agent });
    const prompt = await added;
    clock.t += 64_000;
    const held = await refusal(hub.decide(prompt.approval_id, { kind: 'once', by: 'op' }));
    expect(held.rendered).toBe(
      `uplink error [core:Rejected]: not approved: type on tmux:${pane} would fail now: type needs a read of ${pane} within the last 60 s (look before you type)` +
        ` — hint: the prompt is still pending (the driver says: read first: invoke the read op on tmux:${pane}, then retry); approve it again once that holds, or deny it telling the agent what to do first`,
    );
    const still = hub.pendingApprovals().find((p) => p.approval_id === prompt.approval_id);
    expect(still?.would_fail).toMatchObject({ reason: expect.stringContaining(`needs a read of ${pane}`), hint: expect.stringContaining('read first') });
    // Nothing was approved: no granting decision in the audit, and the call is still waiting.
    expect(hub.queryAudit({ type: 'decision' }).entries.filter((e) => e.granted === true)).toEqual([]);
    // "Ask the agent to read again": a denial with that reason reaches the agent.
    await hub.decide(prompt.approval_id, { kind: 'deny', by: 'op', reason: `read ${pane} again, then retry` });
    expect((await refusal(call)).message).toContain(`read ${pane} again, then retry`);
  });

  it('a waiting prompt is checked again: would_fail appears when the read lapses and clears once the agent reads again', async () => {
    const { hub, pane, clock } = start(40);
    await hub.invoke(`tmux:${pane}`, 'read', {}, { agent });
    const added = next(hub, 'added');
    const call = hub.invoke(`tmux:${pane}`, 'type', { text: 'hello' }, { agent });
    const prompt = await added;
    expect(prompt.would_fail).toBeUndefined();
    const lapsed = next(hub, 'updated');
    clock.t += 61_000;
    expect((await lapsed).would_fail?.reason).toMatch(/needs a read of %\d+ within the last 60 s/);
    const cleared = next(hub, 'updated');
    await hub.invoke(`tmux:${pane}`, 'read', {}, { agent });
    expect((await cleared).would_fail).toBeUndefined();
    await hub.decide(prompt.approval_id, { kind: 'once', by: 'op' });
    expect(await call).toMatchObject({ typed: 5 });
  });

  it("the operator's fresh preview is audited and does not stand for the agent's read", async () => {
    const { hub, pane, clock } = start();
    await hub.invoke(`tmux:${pane}`, 'read', {}, { agent });
    const added = next(hub, 'added');
    const call = hub.invoke(`tmux:${pane}`, 'type', { text: 'hello' }, { agent });
    const prompt = await added;
    clock.t += 64_000;
    const fresh = await hub.refreshApproval(prompt.approval_id, 'op');
    expect(fresh.would_fail?.reason).toMatch(/needs a read of/);
    expect(fresh.preview?.text).toMatch(/^type "hello"/);
    expect(hub.queryAudit({ type: 'decision' }).entries.some((e) => e.by === 'op' && e.reason === 'operator refreshed the preview')).toBe(true);
    expect((await refusal(hub.decide(prompt.approval_id, { kind: 'once', by: 'op' }))).message).toMatch(/^not approved/);
    await hub.decide(prompt.approval_id, { kind: 'deny', by: 'op' });
    await refusal(call);
  });
});
