/**
 * A full disk under the audit (a real one: a small tmpfs): calls are refused while nothing can be
 * written, and once space is freed the hub answers again within a few seconds, without a restart,
 * its WAL truncated rather than grown into the freed space; every call it answered is in the audit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AgentIdentity } from '../../../src/main/hub';
import { auditRowsIfKilledNow, closeHubs, openHub } from './helpers';
import { noTmpfs } from '../../fixtures/prerequisite';

/** Calls as big as the audit keeps (its args are cut at 16 KiB): the table grows by pages per call. */
const PAD = 'p'.repeat(12 * 1024);
const agent: AgentIdentity = { kind: 'mcp', name: 'full-agent', version: '1' };
const mounts: string[] = [];

afterEach(async () => {
  await closeHubs();
  for (const m of mounts.splice(0)) {
    try {
      execFileSync('umount', ['-l', m]);
    } catch {
      // already gone
    }
    rmSync(m, { recursive: true, force: true });
  }
});

/** A directory on its own tmpfs of `size`, or undefined where mounting is not allowed. */
function smallDisk(size: string): string | undefined {
  const m = join(tmpdir(), `uplink-full-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(m);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', m], { stdio: 'ignore' });
  } catch {
    rmSync(m, { recursive: true, force: true });
    return undefined;
  }
  mounts.push(m);
  return m;
}

/** Fills the disk with one file, to the last byte; returns it. */
function fill(disk: string): string {
  const path = join(disk, 'filler');
  const fd = openSync(path, 'w');
  try {
    for (const size of [64 * 1024, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch {
        // ENOSPC at this chunk size
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

const free = (disk: string): number => {
  const s = statfsSync(disk);
  return s.bavail * s.bsize;
};
const walBytes = (dir: string): number => (existsSync(join(dir, 'audit.sqlite-wal')) ? statSync(join(dir, 'audit.sqlite-wal')).size : 0);

describe('a full disk under the audit', () => {
  it('its WAL does not grow into space freed while it cannot be checkpointed; once enough is freed the hub answers again within a few seconds and the WAL is truncated', async (ctx) => {
    const disk = smallDisk('16m');
    if (!disk) return noTmpfs().need(ctx);
    const dir = join(disk, 'data');
    const { hub } = openHub({ dir });
    const answered: string[] = [];
    const call = async (text: string): Promise<boolean> => {
      try {
        await hub.invoke('test:alpha', 'echo', { text: `${text}|${PAD}` }, { agent });
        answered.push(text);
        return true;
      } catch (e) {
        expect((e as { rendered: string }).rendered).toMatch(/^uplink error \[core:Unavailable\]: the audit log cannot be written/);
        return false;
      }
    };
    // A reader of its own keeps the WAL from being reset while the calls go in, so the disk fills
    // with a big WAL in place (however the hub batches its commits): one that cannot be taken into
    // the database file until there is room for it.
    const reader = new Database(join(dir, 'audit.sqlite'), { readonly: true });
    reader.prepare('BEGIN').run();
    reader.prepare('SELECT COUNT(*) FROM entries').get();
    for (let i = 0; i < 300; i++) expect(await call(`before ${i}`)).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    reader.prepare('COMMIT').run();
    reader.close();
    expect(walBytes(dir)).toBeGreaterThan(2 * 1024 * 1024);
    // The space comes back in two steps: first 2 MB, set aside before the disk was filled.
    const spare = join(disk, 'spare');
    const fd = openSync(spare, 'w');
    writeSync(fd, Buffer.alloc(2 * 1024 * 1024, 1));
    closeSync(fd);
    const filler = fill(disk);
    // Calls keep coming while the disk is full (every retry of the hub meets it too).
    let refused = 0;
    for (const until = Date.now() + 3000; Date.now() < until;) {
      if (!(await call(`full ${answered.length} ${refused}`))) refused++;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(refused).toBeGreaterThan(0);
    // 2 MB: the WAL does not grow into it (the database file needs that room to take the WAL in).
    const walFull = walBytes(dir);
    rmSync(spare);
    for (const until = Date.now() + 3000; Date.now() < until;) {
      await call(`some ${answered.length} ${refused}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(walBytes(dir)).toBeLessThanOrEqual(walFull + 64 * 1024);
    // The rest: the hub answers again within a few seconds, by itself.
    rmSync(filler);
    const freed = free(disk);
    const t0 = Date.now();
    let back = false;
    while (!back && Date.now() - t0 < 30_000) {
      back = await call(`back ${Date.now() - t0}`);
      if (!back) await new Promise((r) => setTimeout(r, 100));
    }
    const took = Date.now() - t0;
    expect(back).toBe(true);
    expect(took).toBeLessThan(5000);
    for (let i = 0; i < 20; i++) expect(await call(`after ${i}`)).toBe(true);
    // The hub's checkpoints give the WAL's space back (truncated), rather than keep it.
    await new Promise((r) => setTimeout(r, 4500));
    expect(walBytes(dir)).toBeLessThan(4 * 1024 * 1024);
    expect(free(disk)).toBeGreaterThan(freed / 2);
    const rows = auditRowsIfKilledNow(dir);
    const texts = new Set(rows.filter((r) => r.kind === 'accepted').map((r) => (JSON.parse(r.args as string) as { text: string }).text.split('|')[0]));
    for (const t of answered) expect(texts).toContain(t);
  });
});
