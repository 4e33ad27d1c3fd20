/**
 * Standing rules against a real tmux server: pane ids are reused (a new server starts at %0 again),
 * so a rule naming `tmux:%N` never matches, while a rule on the pane's `@name` label follows the
 * label; "Always" on an unlabelled pane is refused with how to label it, and the prompt stays open.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, ApprovalEvent, Hub, PendingApproval } from '../../../src/main/hub';
import { tmuxDriverForTest } from '../../fixtures/tmux-driver';
import { TmuxTestServer, eventually } from '../../fixtures/tmux-server';
import { tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';
import { validated } from '../../fixtures/validated-driver';
import { failure } from '../../fixtures/failure';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', session: 's1' };
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function hubOn(server: TmuxTestServer, rules: unknown[]): Hub {
  const dir = tmpDataDir();
  writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules } });
  const driver = validated(tmuxDriverForTest({ env: server.ownEnv(), config: () => ({ write_allow: [{ pattern: '*', tier: 'operator' }] }) }));
  const hub = createHub({ dataDir: dir, drivers: [driver] });
  cleanup.push(() => hub.close());
  return hub;
}

function start(): TmuxTestServer {
  const server = TmuxTestServer.start();
  cleanup.push(() => server.stop());
  return server;
}

/** The tmux driver types only into a pane read within the last minute. */
async function look(hub: Hub, channel: string): Promise<void> {
  await hub.invoke(channel, 'read', { lines: 5 }, { agent });
}

/** Waits until the hub's listing shows each pane with its label (a listing also refreshes the hub's cached one). */
async function labelled(hub: Hub, labels: Record<string, string>): Promise<void> {
  await eventually(
    async () => {
      const listed = await hub.listChannels();
      return Object.entries(labels).every(([pane, label]) => listed.find((c) => c.channel === `tmux:${pane}`)?.labels.includes(label));
    },
    10_000,
    `the labels ${JSON.stringify(labels)}`,
  );
}

describe('rules on tmux panes', () => {
  it('a rule on a pane id never matches; a rule on the @name label covers whichever pane carries it', async () => {
    const server = start();
    const pane = server.split('sh');
    const hub = hubOn(server, [
      { id: 'by-id', channel: `tmux:${pane}`, op: 'type' },
      { id: 'by-label', channel: 'tmux:build', op: 'type' },
    ]);
    await look(hub, `tmux:${pane}`);
    const byId = await failure(hub.invoke(`tmux:${pane}`, 'type', { text: 'echo BY-ID' }, { agent }));
    expect(byId.message).toContain('no Uplink panel is open');
    server.tmux('set-option', '-p', '-t', pane, '@name', 'build');
    await labelled(hub, { [pane]: 'build' });
    await look(hub, `tmux:${pane}`);
    await hub.invoke(`tmux:${pane}`, 'type', { text: 'echo BY-LABEL' }, { agent });
    await eventually(() => server.capture(pane).includes('BY-LABEL'), 10_000, 'the typed text');
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'rule:by-label', granted: true });
    // The label moves to another pane: the rule follows it, and the first pane is no longer covered.
    server.tmux('set-option', '-p', '-t', pane, '@name', 'scratch');
    const other = server.split('sh');
    server.tmux('set-option', '-p', '-t', other, '@name', 'build');
    await labelled(hub, { [pane]: 'scratch', [other]: 'build' });
    await look(hub, `tmux:${pane}`);
    await look(hub, 'tmux:build');
    await expect(hub.invoke(`tmux:${pane}`, 'type', { text: 'echo NOT-ME' }, { agent })).rejects.toThrow(/no Uplink panel is open/);
    await hub.invoke('tmux:build', 'type', { text: 'echo FOLLOWED' }, { agent });
    await eventually(() => server.capture(other).includes('FOLLOWED'), 10_000, 'the text in the newly labelled pane');
    expect((await hub.doctor()).warnings).toEqual([expect.stringContaining(`standing rule by-id names tmux:${pane}, a reusable id, and never matches`)]);
  });

  it('after a tmux restart reuses the pane id, the old id rule still covers nothing', async () => {
    const first = start();
    const pane = first.split('sh');
    first.stop();
    const second = start();
    const reused = second.split('sh');
    expect(reused).toBe(pane);
    const hub = hubOn(second, [{ id: 'old-pane', channel: `tmux:${pane}`, op: '*' }]);
    await look(hub, `tmux:${reused}`);
    await expect(hub.invoke(`tmux:${reused}`, 'type', { text: 'echo REUSED' }, { agent })).rejects.toThrow(/no Uplink panel is open/);
    expect(second.capture(reused)).not.toContain('REUSED');
  });

  it('"always" on an unlabelled pane is refused with how to label it; the prompt stays open', async () => {
    const server = start();
    const pane = server.split('sh');
    const hub = hubOn(server, []);
    hub.attachPanel();
    const prompt = new Promise<PendingApproval>((resolve) => {
      const off = hub.subscribeApprovals((e: ApprovalEvent) => {
        if (e.type === 'added') {
          off();
          resolve(e.approval);
        }
      });
    });
    await look(hub, `tmux:${pane}`);
    const call = hub.invoke(`tmux:${pane}`, 'type', { text: 'echo ONCE' }, { agent });
    const p = await prompt;
    const err = await failure(hub.decide(p.approval_id, { kind: 'always', by: 'alice' }));
    expect(err.rendered).toBe(
      `uplink error [core:Rejected]: cannot approve always on tmux:${pane}: it has no stable label, and its id can be reused by another target later — hint: label the pane (\`tmux set -p -t ${pane} @name <name>\`), or approve once or for the session instead`,
    );
    expect(hub.pendingApprovals()).toHaveLength(1);
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    await call;
    expect(hub.listRules()).toEqual([]);
  });
});
