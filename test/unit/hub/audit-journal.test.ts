/**
 * The audit journal: what a process journaled before its replies survives a kill -9 and is
 * replayed, once, by the next process that opens the store; live processes' journals are left
 * alone; torn and refused lines do not block the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import Database from 'better-sqlite3';
import { AuditJournal, journalDir } from '../../../src/main/hub/audit/journal';
import { AuditStore } from '../../../src/main/hub/audit/store';
import type { AuditEntry } from '../../../src/main/hub';
import { ROOT } from '../../fixtures/hub-build';
import { noTmpfs } from '../../fixtures/prerequisite';

let fixture: string;
const buildDir = join(ROOT, 'node_modules', '.cache', 'uplink-test-build', `audit-crash-${process.pid}`);

beforeAll(async () => {
  mkdirSync(buildDir, { recursive: true });
  fixture = join(buildDir, 'audit-crash.mjs');
  await build({
    entryPoints: [join(ROOT, 'test/fixtures/audit-crash.ts')],
    outfile: fixture,
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'warning',
  });
});

afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'uplink-journal-')), 'audit.sqlite');
const pendingFiles = (path: string): string[] => (existsSync(journalDir(path)) ? readdirSync(journalDir(path)) : []);

/** Runs the fixture scenario; resolves once it printed `ready` (and, unless `hold`, died). */
function scenario(path: string, name: string): Promise<{ kill: () => Promise<void> }> {
  const child = spawn(process.execPath, [fixture, path, name], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('ready')) return;
      if (name === 'hold') {
        resolve({
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      } else {
        void exited.then((signal) => (signal === 'SIGKILL' ? resolve({ kill: async () => undefined }) : reject(new Error(`fixture exited with ${signal}`))));
      }
    });
    child.once('error', reject);
  });
}

const calls = (store: AuditStore): string[] =>
  store
    .query({ limit: 1000 })
    .entries.reverse()
    .map((e) => `${e.invocation_id}/${e.kind}`);

describe('audit journal', () => {
  it('a process killed after journaling its calls loses nothing: the next store replays them, once', async () => {
    const path = fresh();
    await scenario(path, 'journaled');
    expect(pendingFiles(path)).toHaveLength(1);
    const store = new AuditStore(path);
    expect(calls(store)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted', 'inv-2/succeeded']);
    const inv2 = store.query({ invocation_id: 'inv-2' }).entries[0]!;
    expect(inv2).toMatchObject({
      agent: { kind: 'mcp', name: 'crash-journaled', version: '1' },
      channel: 'test:alpha',
      args: { text: 'naïve – ünïcode ✓' },
      state: 'succeeded',
    });
    expect(pendingFiles(path)).toEqual([]);
    store.close();
    const again = new AuditStore(path);
    expect(calls(again)).toHaveLength(4);
    again.close();
  });

  it('lines already committed (with their mark) are not inserted again', async () => {
    const path = fresh();
    await scenario(path, 'committed');
    expect(pendingFiles(path)).toHaveLength(1);
    const store = new AuditStore(path);
    expect(calls(store)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted', 'inv-2/succeeded']);
    expect(pendingFiles(path)).toEqual([]);
    store.close();
  });

  it('only the lines above the mark are replayed', async () => {
    const path = fresh();
    await scenario(path, 'mixed');
    const store = new AuditStore(path);
    expect(calls(store)).toEqual(['inv-1/accepted', 'inv-1/succeeded', 'inv-2/accepted', 'inv-2/succeeded']);
    store.close();
  });

  it('a line torn by the crash is skipped; the whole ones count', async () => {
    const path = fresh();
    await scenario(path, 'torn');
    const store = new AuditStore(path);
    expect(calls(store)).toEqual(['inv-1/accepted', 'inv-1/succeeded']);
    expect(pendingFiles(path)).toEqual([]);
    store.close();
  });

  it("a live process's journal is left alone, and replayed once that process is gone", async () => {
    const path = fresh();
    const holder = await scenario(path, 'hold');
    const store = new AuditStore(path);
    expect(calls(store)).toEqual([]);
    expect(pendingFiles(path)).toHaveLength(1);
    await holder.kill();
    expect(store.replayJournals()).toBe(2);
    expect(calls(store)).toEqual(['inv-1/accepted', 'inv-1/succeeded']);
    store.close();
  });

  it('two stores on one file in one process never replay each other', () => {
    const path = fresh();
    const a = new AuditStore(path);
    const batch: Array<Omit<AuditEntry, 'id'>> = [{ at: 1, type: 'event', kind: 'accepted', invocation_id: 'inv-a' }];
    const seq = a.journal(batch);
    const b = new AuditStore(path);
    expect(b.replayJournals()).toBe(0);
    a.appendMany(batch, false, seq);
    expect(calls(b)).toEqual(['inv-a/accepted']);
    a.close();
    expect(pendingFiles(path)).toEqual([]);
    b.close();
  });

  it('a row SQLite refuses even as a placeholder is left out; the rest of the batch commits with its mark', () => {
    const path = fresh();
    const store = new AuditStore(path);
    // SQLite refuses every row of this invocation, even the placeholder the store falls back to.
    const db = new Database(path);
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON entries WHEN NEW.invocation_id = 'inv-bad' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END");
    db.close();
    const good: Omit<AuditEntry, 'id'> = { at: 1, type: 'event', kind: 'accepted', invocation_id: 'inv-good' };
    const refused: Omit<AuditEntry, 'id'> = { at: 1, type: 'event', kind: 'accepted', invocation_id: 'inv-bad' };
    const batch = [good, refused];
    const seq = store.journal(batch);
    expect(store.appendMany(batch, false, seq).map((e) => e.invocation_id)).toEqual(['inv-good']);
    expect(calls(store)).toEqual(['inv-good/accepted']);
    const next: Array<Omit<AuditEntry, 'id'>> = [{ at: 2, type: 'event', kind: 'accepted', invocation_id: 'inv-next' }];
    store.appendMany(next, false, store.journal(next));
    expect(store.replayJournals()).toBe(0);
    expect(calls(store)).toEqual(['inv-good/accepted', 'inv-next/accepted']);
    store.close();
    expect(pendingFiles(path)).toEqual([]);
  });

  it('journal files are private (0600) and hold no more than the store does (sensitive args redacted before)', () => {
    const path = fresh();
    const store = new AuditStore(path);
    // A live agent carries more than its record (the session its grants are keyed by, where it runs).
    const agent = {
      kind: 'mcp',
      agent_id: 'builder',
      name: 'claude-code',
      session: 'grants-key-1',
      caller: { tmux: '/tmp/tmux-0/default,1,0', tmux_pane: '%3' },
    } as AuditEntry['agent'];
    store.journal([{ at: 1, type: 'event', kind: 'accepted', agent, args: { big: 'x'.repeat(100_000) } }]);
    const dir = journalDir(path);
    const [file] = readdirSync(dir);
    expect(statSync(join(dir, file!)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const text = readFileSync(join(dir, file!), 'utf8');
    expect(text.length).toBeLessThan(17_000);
    expect(text).toContain('"agent_id":"builder"');
    expect(text).not.toMatch(/grants-key-1|tmux_pane/);
    store.close();
  });

  it('a write the full disk cut short leaves no partial line: the next line after space is freed replays whole', (ctx) => {
    const mnt = mkdtempSync(join(tmpdir(), 'uplink-journal-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { stdio: 'ignore' });
    } catch {
      rmSync(mnt, { recursive: true, force: true });
      return noTmpfs().need(ctx);
    }
    try {
      const journal = new AuditJournal(join(mnt, 'audit.pending'));
      journal.append([{ at: 1, message: 'first' }]);
      const filler = join(mnt, 'filler');
      try {
        writeFileSync(filler, Buffer.alloc(2 * 1024 * 1024));
      } catch {
        // ENOSPC: the disk is full now.
      }
      expect(() => journal.append([{ at: 2, message: 'x'.repeat(64 * 1024) }])).toThrow(/ENOSPC/);
      rmSync(filler);
      journal.append([{ at: 3, message: 'after' }]);
      const name = journal.name!;
      journal.close();
      expect(journal.read(name)!.map((r) => (r.entries![0] as { message: string }).message)).toEqual(['first', 'after']);
    } finally {
      execFileSync('umount', ['-l', mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});
