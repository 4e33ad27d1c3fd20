/**
 * The operator is asked only about calls that can run: a tmux write the driver would refuse (tier,
 * read-first, own pane) is refused before any prompt, with the driver's own error, and recorded as
 * rejected; a call that passes is asked about, and the driver checks again when it acts.
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

/**
 * A hub on a private tmux server, with a panel attached that records every prompt it is shown and,
 * unless `hold`, denies it at once (a prompt about a call bound to fail must not hang the test).
 */
function start(hold = false): { server: TmuxTestServer; hub: Hub; prompts: PendingApproval[] } {
  const server = TmuxTestServer.start('sh');
  cleanups.push(() => server.stop());
  const hub = createHub({
    dataDir: mkdtempSync(join(tmpdir(), 'uplink-precheck-')),
    drivers: [tmuxDriverForTest({ env: server.ownEnv(), config: () => ({}) })],
    watchConfig: false,
  });
  cleanups.push(() => hub.close());
  hub.attachPanel();
  const prompts: PendingApproval[] = [];
  hub.subscribeApprovals((e: ApprovalEvent) => {
    if (e.type !== 'added') return;
    prompts.push(e.approval);
    if (!hold) void hub.decide(e.approval.approval_id, { kind: 'deny', by: 'test-operator' });
  });
  return { server, hub, prompts };
}

async function refusal(promise: Promise<unknown>): Promise<HubError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof HubError) return e;
    throw e;
  }
  throw new Error('expected a refusal, but the call succeeded');
}

/** Resolves with the next prompt, or fails when none appears in time. */
function nextPrompt(hub: Hub, ms = 5000): Promise<PendingApproval> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no prompt appeared')), ms);
    const off = hub.subscribeApprovals((e) => {
      if (e.type !== 'added') return;
      clearTimeout(timer);
      off();
      resolve(e.approval);
    });
  });
}

describe('tmux writes the driver would refuse are refused before the operator is asked', () => {
  it('type on an observer pane is refused with the tier error, recorded as rejected, and no prompt appears', async () => {
    const { server, hub, prompts } = start();
    const peer = server.split('cat');
    await hub.invoke(`tmux:${peer}`, 'read', {}, { agent });
    const err = await refusal(hub.invoke(`tmux:${peer}`, 'type', { text: 'hello' }, { agent }));
    expect(err.rendered).toMatch(
      new RegExp(
        `^uplink error \\[tmux:Rejected\\]: type needs tier operator; pane ${peer} is observer \\(from default\\) — hint: ask the operator to grant operator on this pane in the Uplink panel`,
      ),
    );
    expect(prompts).toEqual([]);
    expect(hub.pendingApprovals()).toEqual([]);
    const rejected = hub.queryAudit({ op: 'type', state: 'rejected' }).entries;
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ channel: `tmux:${peer}`, error_kind: 'Rejected', message: expect.stringContaining('needs tier operator') });
    expect(hub.queryAudit({ op: 'type', type: 'decision' }).entries).toEqual([]);
  });

  it('type without a recent read is refused with the read-first hint and no prompt appears', async () => {
    const { server, hub, prompts } = start();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    const err = await refusal(hub.invoke(`tmux:${peer}`, 'type', { text: 'hello' }, { agent }));
    expect(err.kind).toBe('Rejected');
    expect(err.hint).toBe(`read first: invoke the read op on tmux:${peer}, then retry`);
    expect(prompts).toEqual([]);
  });

  it('send to the agent’s own pane is refused without a prompt', async () => {
    const { server, hub, prompts } = start();
    server.setOption(server.firstPane, '@uplink_profile', 'operator');
    const err = await refusal(hub.send(`tmux:${server.firstPane}`, { message: 'hi' }, { agent }));
    expect(err.message).toMatch(/own pane/);
    expect(prompts).toEqual([]);
  });

  it('after a read on an operator pane the prompt appears, and an approval given after the grant was taken back is held back', async () => {
    const { server, hub, prompts } = start(true);
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    expect((await refusal(hub.invoke(`tmux:${peer}`, 'type', { text: 'hello' }, { agent }))).hint).toMatch(/read first/);
    expect(prompts).toEqual([]);
    await hub.invoke(`tmux:${peer}`, 'read', {}, { agent });
    const prompt = nextPrompt(hub);
    const call = hub.invoke(`tmux:${peer}`, 'type', { text: 'hello' }, { agent });
    const pending = await prompt;
    expect(pending).toMatchObject({ channel: `tmux:${peer}`, op: 'type' });
    // While the prompt waits, a human takes the grant back: the approval is checked again and not applied.
    server.setOption(peer, '@uplink_profile', 'observer');
    const held = await refusal(hub.decide(pending.approval_id, { kind: 'once', by: 'test-operator' }));
    expect(held.message).toMatch(/^not approved: type on tmux:%\d+ would fail now: type needs tier operator; pane %\d+ is observer \(from pane option\)/);
    expect(hub.pendingApprovals().map((p) => p.approval_id)).toEqual([pending.approval_id]);
    await hub.decide(pending.approval_id, { kind: 'deny', by: 'test-operator' });
    expect((await refusal(call)).message).toMatch(/denied by the operator/);
  });
});
