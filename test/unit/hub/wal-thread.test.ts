/**
 * The audit's routine WAL checkpoint on its own thread: it copies every frame into the database
 * file while the writer keeps its connection, so the writer's next commit starts the WAL over; it
 * runs one checkpoint at a time; `settle` waits for one under way; a failure is reported, not thrown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WalThread } from '../../../src/main/hub/audit/wal-thread';
import type { WalThreadResult } from '../../../src/main/hub/audit/wal-thread';

const LIMIT = 1024 * 1024;
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

/** A WAL database as the audit store opens it, with a few MB committed and not checkpointed. */
function writer(): { db: Database.Database; path: string; wal: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-wal-thread-'));
  const path = join(dir, 'audit.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${LIMIT}`);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  for (let i = 0; i < 40; i++)
    db.transaction(() => {
      for (let j = 0; j < 10; j++) insert.run('z'.repeat(10_000));
    })();
  cleanup.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, path, wal: () => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0) };
}

function thread(path: string): { t: WalThread; results: WalThreadResult[]; next: () => Promise<WalThreadResult> } {
  const results: WalThreadResult[] = [];
  let wake: ((r: WalThreadResult) => void) | undefined;
  const t = new WalThread(path, (r) => {
    results.push(r);
    wake?.(r);
  });
  cleanup.push(() => t.close());
  return { t, results, next: () => new Promise((resolve) => (wake = resolve)) };
}

describe('the WAL thread', () => {
  it('copies every frame, so the writer’s next commit starts the WAL over within its size limit', async () => {
    const w = writer();
    expect(w.wal()).toBeGreaterThan(4 * LIMIT);
    const { t, next } = thread(w.path);
    const done = next();
    expect(t.request()).toBe(true);
    const r = await done;
    expect(r).toMatchObject({ busy: 0 });
    if ('error' in r) throw new Error(r.error);
    expect(r.log).toBeGreaterThan(0);
    expect(r.checkpointed).toBe(r.log);
    // The table is whole in the database file, and the next commit resets the WAL.
    w.db.prepare('INSERT INTO t (v) VALUES (?)').run('after');
    expect(w.wal()).toBeLessThanOrEqual(LIMIT);
    const copy = new Database(w.path, { readonly: true });
    expect((copy.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(401);
    copy.close();
  });

  it('runs one checkpoint at a time, and settle waits for the one under way', async () => {
    const w = writer();
    const { t, results, next } = thread(w.path);
    const done = next();
    expect(t.request()).toBe(true);
    expect(t.busy).toBe(true);
    expect(t.request()).toBe(true);
    t.settle();
    expect(t.busy).toBe(false);
    await done;
    await new Promise((r) => setTimeout(r, 50));
    expect(results).toHaveLength(1);
  });

  it('reports a database it cannot open as an error, and can be asked again', async () => {
    const { t, next } = thread(join(tmpdir(), 'uplink-wal-thread-missing', 'audit.sqlite'));
    const done = next();
    expect(t.request()).toBe(true);
    const r = await done;
    expect('error' in r && r.error).toMatch(/unable to open|directory does not exist|no such file/i);
    expect(t.request()).toBe(true);
    t.settle();
  });

  it('after close, asks nothing of the thread: the caller checkpoints itself', () => {
    const w = writer();
    const { t } = thread(w.path);
    t.close();
    expect(t.request()).toBe(false);
  });
});
