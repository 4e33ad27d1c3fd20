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

  it('commits a full batch in the turn that filled it; after a failure, the retry commits a batch a turn, each ending on a journal line', () => {
    const commits: Array<{ n: number; seq: number | undefined }> = [];
    let failing = false;
    let seq = 0;
    const store = {
      appendMany(entries: Array<Omit<AuditEntry, 'id'>>, _durable: boolean, mark?: number): AuditEntry[] {
        if (failing) throw new Error('SQLITE_BUSY');
        commits.push({ n: entries.length, seq: mark });
        return entries.map((e, i) => ({ ...e, id: i + 1 }));
      },
      journal: (): number => ++seq,
      failure: (): undefined => undefined,
    } as unknown as AuditStore;
    const timeline = new Timeline(store);
    // Calls of 3 events, each journaled before its reply (one line each).
    const call = (n: number): void => {
      for (const kind of ['accepted', 'started', 'succeeded'] as const) timeline.record({ at: n, type: 'event', kind, invocation_id: `inv-${n}` });
      expect(timeline.beforeReply()).toBe(true);
    };
    const calls = COMMIT_BATCH / 3;
    for (let n = 1; n < calls; n++) call(n);
    expect(commits).toEqual([]);
    // The event that fills the batch commits it at once, its own call's entries with it.
    for (const kind of ['accepted', 'started', 'succeeded'] as const) timeline.record({ at: 0, type: 'event', kind, invocation_id: 'inv-last' });
    expect(commits).toEqual([{ n: COMMIT_BATCH, seq: calls - 1 }]);
    expect(timeline.beforeReply()).toBe(true);

    // A store that fails keeps everything queued; once it recovers, the retry commits a batch a turn.
    commits.length = 0;
    failing = true;
    for (let n = 0; n < 40; n++) call(n);
    failing = false;
    vi.advanceTimersToNextTimer();
    while (commits.reduce((a, c) => a + c.n, 0) < 120) vi.advanceTimersToNextTimer();
    const perCommit = Math.floor(COMMIT_BATCH / 3) * 3;
    expect(commits.length).toBe(Math.ceil(120 / perCommit));
    let lines = 0;
    for (const c of commits) {
      expect(c.n).toBe(Math.min(perCommit, 120 - lines * 3));
      lines += c.n / 3;
      // The journal lines of this run follow the ones of the calls above (the last call had nothing left to journal).
      expect(c.seq).toBe(calls - 1 + lines);
    }
  });
});
