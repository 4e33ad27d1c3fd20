/**
 * The panel's timeline search, through the real session handlers over a real hub and SQLite
 * store: a call is found by what it was sent (args), what came back (output) and why it ended
 * (a denial's reason), with every record of the call, in bounded pages a cursor walks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentIdentity, Hub, PendingApproval } from '../../../src/main/hub';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { closeHubs, failure, openHub } from './helpers';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', session: 's1' };

afterEach(closeHubs);

function nextPrompt(hub: Hub): Promise<PendingApproval> {
  return new Promise((resolve) => {
    const off = hub.subscribeApprovals((e) => {
      if (e.type !== 'added') return;
      off();
      resolve(e.approval);
    });
  });
}

const session = (hub: Hub) => openPanelSession(hub, { version: '0.1.0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());

describe('searchTimeline', () => {
  it('finds a call by its args, its output and a denial reason, with all its records', async () => {
    const { hub } = openHub();
    await hub.invoke('test:alpha', 'echo', { text: 'git push origin main' }, { agent });
    await hub.invoke('test:alpha', 'echo', { text: 'ls -la' }, { agent });
    const s = session(hub);
    const prompt = nextPrompt(hub);
    const denied = failure(hub.invoke('test:alpha', 'write', { text: 'rm build' }, { agent }));
    await hub.decide((await prompt).approval_id, { kind: 'deny', by: 'alice', reason: 'not on a friday' });
    await denied;

    const byArgs = await s.handlers.searchTimeline({ filter: { text: 'git push' } });
    expect(byArgs.matches).toBe(1);
    const kinds = byArgs.events.map((e) => e.kind);
    // The whole call, not only the record whose args matched: it shows how the call ended.
    expect(kinds[0]).toBe('accepted');
    expect(kinds).toContain('succeeded');
    expect(new Set(byArgs.events.map((e) => e.invocation_id)).size).toBe(1);

    const byReason = await s.handlers.searchTimeline({ filter: { text: 'friday' } });
    expect(byReason.matches).toBe(1);
    expect(byReason.events.some((e) => e.outcome === 'denied')).toBe(true);
    // The call's own filters apply to the call, not to the record that matched.
    expect((await s.handlers.searchTimeline({ filter: { text: 'friday', outcome: 'denied' } })).matches).toBe(1);
    expect((await s.handlers.searchTimeline({ filter: { text: 'friday', outcome: 'succeeded' } })).matches).toBe(0);
    expect((await s.handlers.searchTimeline({ filter: { text: 'nothing like this' } })).matches).toBe(0);
    s.close();
  });

  it('finds a call by its output', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const s = session(hub);
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'abc' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'once', by: 'alice' });
    await call;
    const page = await s.handlers.searchTimeline({ filter: { text: 'written' } });
    expect(page.matches).toBe(1);
    expect(page.events.find((e) => e.kind === 'succeeded')?.op).toBe('write');
    s.close();
  });

  it('pages: a bounded number of calls per page, the cursor reaches every match once', async () => {
    const { hub } = openHub();
    for (let i = 0; i < 25; i++) await hub.invoke('test:alpha', 'echo', { text: `needle ${i}` }, { agent });
    await hub.invoke('test:alpha', 'echo', { text: 'hay' }, { agent });
    const s = session(hub);
    const found = new Set<string>();
    let before: number | undefined;
    let pages = 0;
    for (; pages < 10; pages++) {
      const page = await s.handlers.searchTimeline({ filter: { text: 'needle' }, limit: 10, ...(before !== undefined ? { before } : {}) });
      expect(page.matches).toBeLessThanOrEqual(10);
      for (const e of page.events) if (e.invocation_id) found.add(e.invocation_id);
      if (page.next_before === null) break;
      before = page.next_before;
    }
    expect(found.size).toBe(25);
    expect(pages).toBeGreaterThanOrEqual(2);
    s.close();
  });

  it('refuses a page bigger than the bound', async () => {
    const { hub } = openHub();
    const { dispatchCall } = await import('../../../src/main/edges/panel/dispatch');
    const s = session(hub);
    const out = await dispatchCall(s.handlers, 'searchTimeline', { filter: { text: 'x' }, limit: 100_000 });
    expect(out.ok).toBe(false);
    s.close();
  });
});
