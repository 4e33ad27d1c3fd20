/**
 * The panel's history is paged by size as well as count: whatever `limit` asks, one page of
 * `queryTimeline` holds at most ~1 MiB of events, and its cursor continues where it stopped.
 * Through the real session handlers over a real hub and SQLite store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { closeHubs, openHub } from '../../integration/hub/helpers';

afterEach(closeHubs);

describe('queryTimeline', () => {
  it('returns at most ~1 MiB per page, and the cursor reaches every event', async () => {
    const { hub } = openHub();
    const agent = { kind: 'mcp' as const, name: 'big-agent' };
    for (let i = 0; i < 120; i++) await hub.invoke('test:alpha', 'echo', { text: `${i} ${'z'.repeat(15_000)}` }, { agent });
    const s = openPanelSession(hub, { version: '0.1.0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
    const total = hub.queryAudit({ limit: 1000 }).entries.length;
    const seen = new Set<number>();
    let before: number | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await s.handlers.queryTimeline({ limit: 1000, ...(before !== undefined ? { before } : {}) });
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThan(1024 * 1024 + 64 * 1024);
      expect(page.events.length).toBeGreaterThan(0);
      for (const e of page.events) seen.add(e.id);
      if (page.next_before === null) break;
      before = page.next_before;
    }
    expect(seen.size).toBe(total);
    s.close();
  });
});
