/**
 * The audit store against a locked file and a full disk: a store error never turns a record into a
 * placeholder or drops it from a replay, no commit waits on the event loop for another process's
 * lock, what the agent heard of waits in the journal and reaches the table in the order it was
 * recorded, and a failing store finds out by itself that it can write again. Real SQLite; the
 * lock is a second connection holding BEGIN EXCLUSIVE, a full disk an insert failing with SQLITE_FULL.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { AuditStore } from '../../../src/main/hub/audit/store';
import { Timeline } from '../../../src/main/hub/audit/timeline';
import type { AuditEntry } from '../../../src/main/hub';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'uplink-audit-lock-')), 'audit.sqlite');

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0).reverse()) o.close();
});

function store(path: string): AuditStore {
  const s = new AuditStore(path);
  open.push(s);
  return s;
}

const call = (invocation: string, kind: 'accepted' | 'succeeded', text = 'x'): Omit<AuditEntry, 'id'> => ({
  at: Date.now(),
  type: 'event',
  kind,
  invocation_id: invocation,
  state: kind,
  channel: 'test:alpha',
  op: 'echo',
  ...(kind === 'accepted' ? { args: { text } } : {}),
});

/** The table as another process reads it: `invocation/kind`, or the placeholder's message, in id order. */
function table(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT invocation_id, kind, message FROM entries ORDER BY id').all() as Array<Record<string, string | null>>;
    return rows.map((r) => (r.message?.startsWith('<not stored') ? r.message : `${r.invocation_id}/${r.kind}`));
  } finally {
    db.close();
  }
}

/** Makes the next `n` inserts into `entries` fail as on a full disk; returns the undo. */
function failInserts(n: number): () => void {
  const mem = new Database(':memory:');
  const proto = Object.getPrototypeOf(mem.prepare('SELECT 1')) as { run: Statement['run'] };
  mem.close();
  const run = proto.run;
  let left = n;
  proto.run = function (this: Statement, ...args: unknown[]) {
    if (left > 0 && this.source.startsWith('INSERT INTO entries')) {
      left--;
      throw new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
    }
    return run.apply(this, args);
  } as Statement['run'];
  return () => {
    proto.run = run;
  };
}

/** A pid no process has now. */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
}

/** Holds the write lock of `path` from another connection, as another process would. */
function lock(path: string): { release(): void } {
  const db = new Database(path);
  db.exec('BEGIN EXCLUSIVE');
  return {
    release: () => {
      db.exec('COMMIT');
      db.close();
    },
  };
}

describe('audit store errors', () => {
  it('a store error on a row fails the whole commit instead of committing a placeholder for it; the retry stores the row whole, once', () => {
    const path = fresh();
    const s = store(path);
    const batch = [call('inv-1', 'accepted', 'kept'), call('inv-1', 'succeeded')];
    const seq = s.journal(batch);
    const undo = failInserts(1);
    try {
      expect(() => s.appendMany(batch, false, seq)).toThrow(/full/);
    } finally {
      undo();
    }
    expect(table(path)).toEqual([]);
    expect(s.failure()).toMatch(/^SQLITE_FULL: /);
    s.appendMany(batch, false, seq);
    expect(s.failure()).toBeUndefined();
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded']);
    // A restart replays nothing twice.
    s.close();
    store(path).close();
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded']);
  });

  it('a replay that meets a store error inserts nothing and keeps the file; the next inserts every line in order, and a rerun after a crash before the delete inserts none again', () => {
    const path = fresh();
    const s = store(path);
    const dir = journalDir(path);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${deadPid()}-0badcafe.jsonl`);
    const line = (seq: number, entries: unknown[]): string => `${JSON.stringify({ seq, entries })}\n`;
    writeFileSync(file, line(1, [call('inv-1', 'accepted'), call('inv-1', 'succeeded')]) + line(2, [call('inv-2', 'accepted')]));
    const undo = failInserts(1);
    try {
      expect(s.replayJournals()).toBe(0);
    } finally {
      undo();
    }
    expect(table(path)).toEqual([]);
    expect(existsSync(file)).toBe(true);
    const copy = `${file}.copy`;
    copyFileSync(file, copy);
    expect(s.replayJournals()).toBe(3);
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted']);
    expect(existsSync(file)).toBe(false);
    // The state a replay killed after its commit and before the delete leaves: rows, mark, file.
    const db = new Database(path);
    db.prepare('INSERT INTO journal_marks (file, seq) VALUES (?, 2)').run(file.slice(dir.length + 1));
    db.close();
    copyFileSync(copy, file);
    expect(s.replayJournals()).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted']);
  });

  it('a failing store with nothing queued finds out by itself, within a few seconds, that it can write again', async () => {
    const path = fresh();
    const s = store(path);
    const undo = failInserts(1);
    try {
      expect(() => s.appendMany([call('inv-1', 'accepted')])).toThrow(/full/);
    } finally {
      undo();
    }
    expect(s.failure()).toMatch(/^SQLITE_FULL/);
    await vi.waitFor(() => expect(s.failure()).toBeUndefined(), { timeout: 5000, interval: 50 });
  });

  it('a WAL grown past its limit is truncated by the next checkpoint', () => {
    const path = fresh();
    const s = store(path);
    const big = 'y'.repeat(15_000);
    for (let i = 0; i < 10; i++) s.appendMany(Array.from({ length: 50 }, (_, j) => call(`inv-${i}-${j}`, 'accepted', big)));
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(4 * 1024 * 1024);
    s.checkpoint();
    expect(statSync(`${path}-wal`).size).toBe(0);
    expect(table(path)).toHaveLength(500);
  });
});

describe('a reader that keeps the WAL from being reset', () => {
  it('stops commits once the WAL passes 64 MB (a failure naming the reader) instead of growing it without bound; they resume when it is gone', () => {
    // In memory where the machine has it: this writes 70 MB.
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const dir = mkdtempSync(join(base, 'uplink-audit-wal-'));
    // Closed last (afterEach closes in reverse): the 70 MB go once the store is closed.
    open.push({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const path = join(dir, 'audit.sqlite');
    const s = store(path);
    s.appendMany([call('inv-0', 'accepted')]);
    const reader = new Database(path, { readonly: true });
    open.push(reader);
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM entries').get();
    const big = 'w'.repeat(16_000);
    let refused: unknown;
    for (let i = 0; i < 200 && !refused; i++) {
      try {
        s.appendMany(Array.from({ length: 25 }, (_, j) => call(`inv-${i}-${j}`, 'accepted', big)));
      } catch (e) {
        refused = e;
      }
      s.checkpoint();
    }
    expect(String(refused)).toMatch(/its WAL is \d+ MB and cannot be reset while another program keeps a read transaction open on audit\.sqlite/);
    expect(s.failure()).toMatch(/its WAL is \d+ MB/);
    expect(statSync(`${path}-wal`).size).toBeLessThan(72 * 1024 * 1024);
    reader.exec('COMMIT');
    s.checkpoint();
    expect(statSync(`${path}-wal`).size).toBe(0);
    s.appendMany([call('inv-after', 'accepted')]);
    expect(s.failure()).toBeUndefined();
  });
});

describe('a locked audit file', () => {
  it('a commit fails within milliseconds and stores nothing; answers go on from the fsynced journal; once released, everything is in the table in the order it was recorded', async () => {
    const path = fresh();
    const s = store(path);
    const timeline = new Timeline(s);
    timeline.record(call('inv-0', 'accepted'));
    timeline.flush();
    const held = lock(path);
    let released = false;
    try {
      timeline.record(call('inv-1', 'accepted'));
      timeline.record(call('inv-1', 'succeeded'));
      expect(timeline.beforeReply()).toBe(true);
      const t0 = performance.now();
      expect(timeline.flush()).toBe(false);
      expect(performance.now() - t0).toBeLessThan(50);
      // A lock is not a failure: new calls are not refused.
      expect(s.failure()).toBeUndefined();
      timeline.record(call('inv-2', 'accepted'));
      expect(timeline.beforeReply()).toBe(true);
      // A decision is fsynced in the journal and takes effect.
      const t1 = performance.now();
      expect(() => timeline.record({ at: Date.now(), type: 'decision', kind: 'decision', invocation_id: 'inv-3', granted: true }, true)).not.toThrow();
      // An fsync, not a wait for the lock (which took 5 s): tens of ms on a loaded disk.
      expect(performance.now() - t1).toBeLessThan(1000);
      const pending = journalDir(path);
      const journaled = readdirSync(pending).map((f) => statSync(join(pending, f)).size);
      expect(journaled.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      // A kill -9 now: the next process finds all of it.
      const copy = fresh();
      copyFileSync(path, copy);
      if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
      mkdirSync(journalDir(copy));
      for (const f of readdirSync(pending)) copyFileSync(join(pending, f), join(journalDir(copy), f.replace(/^\d+-/, `${deadPid()}-`)));
      held.release();
      released = true;
      store(copy).close();
      expect(table(copy)).toEqual(['inv-0/accepted', 'inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted', 'inv-3/decision']);
    } finally {
      if (!released) held.release();
    }
    // Without a restart: the timeline's retry commits it all, once.
    await vi.waitFor(() => expect(table(path)).toEqual(['inv-0/accepted', 'inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted', 'inv-3/decision']), {
      timeout: 3000,
      interval: 50,
    });
    expect(s.failure()).toBeUndefined();
  });

  it('while the file is locked a reply waits for the journal to reach the disk (off the event loop); otherwise for nothing', async () => {
    const path = fresh();
    const s = store(path);
    const first = [call('inv-1', 'accepted')];
    const seq = s.journal(first);
    expect(s.journalSynced()).toBeUndefined();
    s.appendMany(first, false, seq);
    const held = lock(path);
    try {
      const batch = [call('inv-2', 'accepted')];
      const line = s.journal(batch);
      expect(() => s.appendMany(batch, false, line)).toThrow(/locked/);
      s.journal([call('inv-3', 'accepted')]);
      const synced = s.journalSynced();
      expect(synced).toBeInstanceOf(Promise);
      await synced;
      // Every line is on disk now: nothing more to wait for.
      expect(s.journalSynced()).toBeUndefined();
    } finally {
      held.release();
    }
  });

  it('a lock held past 30 s is a failure (new calls are refused, doctor says why) until it is released', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const path = fresh();
      const s = store(path);
      const held = lock(path);
      try {
        expect(() => s.appendMany([call('inv-1', 'accepted')])).toThrow(/locked/);
        expect(s.failure()).toBeUndefined();
        vi.setSystemTime(Date.now() + 31_000);
        expect(() => s.appendMany([call('inv-1', 'accepted')])).toThrow(/locked/);
        expect(s.failure()).toBe("SQLITE_BUSY: another process has held the audit's write lock for 31 s");
        expect(await s.health()).toMatchObject({ ok: false, error: expect.stringMatching(/^the audit log cannot be written \(SQLITE_BUSY: another process/) });
      } finally {
        held.release();
      }
      vi.setSystemTime(Date.now() + 200);
      s.appendMany([call('inv-1', 'accepted')]);
      expect(s.failure()).toBeUndefined();
      expect(table(path)).toEqual(['inv-1/accepted']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a journal retired while the store fails is replayed before any later batch: the table keeps the order entries were recorded in', async () => {
    const path = fresh();
    const s = store(path);
    const first = [call('inv-1', 'accepted'), call('inv-1', 'succeeded')];
    const seq = s.journal(first);
    const held = lock(path);
    try {
      expect(() => s.appendMany(first, false, seq)).toThrow(/locked/);
    } finally {
      held.release();
    }
    // The caller gave up holding them (too much queued): the journal has them.
    s.retireJournal();
    // A commit right after one that found the file locked fails without trying: the next is a while later.
    expect(() => s.appendMany([call('inv-x', 'accepted')])).toThrow(/locked/);
    await new Promise((r) => setTimeout(r, 150));
    const later = [call('inv-2', 'accepted')];
    s.appendMany(later, false, s.journal(later));
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted']);
    expect(s.replayJournals()).toBe(0);
    s.close();
    expect(readdirSync(journalDir(path))).toEqual([]);
  });
});

describe('closing while the audit file is locked', () => {
  it('journals what is queued for the next process and leaves no retry running against the closed store', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const path = fresh();
    const s = new AuditStore(path);
    const timeline = new Timeline(s);
    const held = lock(path);
    try {
      timeline.record(call('inv-1', 'accepted'));
      timeline.record(call('inv-1', 'succeeded'));
      timeline.close();
      s.close();
      // Neither the store's tick nor a retry of the timeline is left.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      held.release();
      vi.useRealTimers();
    }
    // The next process replays it.
    store(path).close();
    expect(table(path)).toEqual(['inv-1/accepted', 'inv-1/succeeded']);
  });
});
