/** The timeline's batching when the audit store fails: events wait for another try, within a bound. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuditStore } from '../../../src/main/hub/audit/store';
import { COMMIT_BATCH, Timeline } from '../../../src/main/hub/audit/timeline';
import type { AuditEntry } from '../../../src/main/hub';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A store whose commits fail while `failing` is set; records what it committed. */
function flakyStore(): { store: AuditStore; committed: Array<Omit<AuditEntry, 'id'>>; setFailing: (f: boolean) => void } {
  let failing = true;
  const committed: Array<Omit<AuditEntry, 'id'>> = [];
  const store = {
    appendMany(entries: Array<Omit<AuditEntry, 'id'>>): AuditEntry[] {
      if (failing) throw new Error('SQLITE_BUSY');
      committed.push(...entries);
      return entries.map((e, i) => ({ ...e, id: committed.length - entries.length + i + 1 }));
    },
  } as unknown as AuditStore;
  return { store, committed, setFailing: (f) => (failing = f) };
}

describe('Timeline', () => {
  it('queues a large output summarized, so a commit that waits (or keeps failing) holds no payload', () => {
    const { store, committed, setFailing } = flakyStore();
    const timeline = new Timeline(store);
    const screenshot = 'A'.repeat(1024 * 1024);
    timeline.record({ at: 1, type: 'event', kind: 'succeeded', invocation_id: 'a', output: { png_base64: screenshot } });
    setFailing(false);
    timeline.flush();
    const stored = committed[0]!.output as { png_base64: string };
    expect(stored.png_base64.length).toBeLessThan(300);
    expect(stored.png_base64).toContain('(1048576 chars, not stored)');
  });

  it('keeps events of a failed commit for the next one, in order', () => {
    const { store, committed, setFailing } = flakyStore();
    const timeline = new Timeline(store);
    timeline.record({ at: 1, type: 'event', kind: 'accepted', invocation_id: 'a' });
    timeline.flush();
    timeline.record({ at: 2, type: 'event', kind: 'started', invocation_id: 'a' });
    setFailing(false);
    vi.advanceTimersByTime(1000);
    expect(committed.map((e) => e.kind)).toEqual(['accepted', 'started']);
  });

  it('keeps only the newest 10,000 events while the store keeps failing', () => {
    const { store, committed, setFailing } = flakyStore();
    const timeline = new Timeline(store);
    for (let i = 0; i < 12_000; i++) timeline.record({ at: i, type: 'event', kind: 'progress', invocation_id: `inv-${i}` });
    setFailing(false);
    timeline.flush();
    expect(committed).toHaveLength(10_000);
    expect(committed[0]!.invocation_id).toBe('inv-2000');
    expect(committed.at(-1)!.invocation_id).toBe('inv-11999');
  });

  it('a decision that cannot be committed fails with the audit line and leaves the events queued before it', () => {
    const { store, committed, setFailing } = flakyStore();
    (store as unknown as { failure: () => string }).failure = () => 'SQLITE_FULL: database or disk is full';
    const timeline = new Timeline(store);
    timeline.record({ at: 1, type: 'event', kind: 'accepted', invocation_id: 'other-agent' });
    let thrown: unknown;
    try {
      timeline.record({ at: 2, type: 'decision', kind: 'decision', invocation_id: 'decided', granted: true }, true);
    } catch (e) {
      thrown = e;
    }
    expect((thrown as { rendered?: string }).rendered).toMatch(
      /^uplink error \[core:Unavailable\]: the audit log cannot be written \(SQLITE_FULL: database or disk is full\) — hint: /,
    );
    setFailing(false);
    vi.advanceTimersByTime(1000);
    // The other agent's event was not dropped with the decision; the decision did not take effect.
    expect(committed.map((e) => e.invocation_id)).toEqual(['other-agent']);
  });

  it('commits a full batch a turn after the event that filled it, a batch a turn, each commit ending on a journal line', () => {
    const commits: Array<{ n: number; seq: number | undefined }> = [];
    let seq = 0;
    let journaled = 0;
    const store = {
      appendMany(entries: Array<Omit<AuditEntry, 'id'>>, _durable: boolean, mark?: number): AuditEntry[] {
        commits.push({ n: entries.length, seq: mark });
        return entries.map((e, i) => ({ ...e, id: i + 1 }));
      },
      journal(entries: unknown[]): number {
        journaled += entries.length;
        return ++seq;
      },
    } as unknown as AuditStore;
    const timeline = new Timeline(store);
    // 40 calls of 3 events, each journaled before its reply (one line each): 120 entries.
    for (let call = 0; call < 40; call++) {
      for (const kind of ['accepted', 'started', 'succeeded'] as const) timeline.record({ at: call, type: 'event', kind, invocation_id: `inv-${call}` });
      expect(timeline.beforeReply()).toBe(true);
    }
    // Nothing committed inside a call's own turn.
    expect(commits).toEqual([]);
    expect(journaled).toBe(120);
    vi.advanceTimersToNextTimer();
    while (commits.reduce((a, c) => a + c.n, 0) < 120) vi.advanceTimersToNextTimer();
    // Whole lines (3 entries each) a turn, as many as a batch holds, each commit marking the last line it holds.
    const perCommit = Math.floor(COMMIT_BATCH / 3) * 3;
    expect(commits.length).toBe(Math.ceil(120 / perCommit));
    let lines = 0;
    for (const c of commits) {
      expect(c.n).toBe(Math.min(perCommit, 120 - lines * 3));
      lines += c.n / 3;
      expect(c.seq).toBe(lines);
    }
  });
});
