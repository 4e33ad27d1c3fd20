/**
 * The audit's hash chain and signed checkpoints, against real SQLite files manipulated the way an
 * intruder with write access would (better-sqlite3 directly): `uplink audit verify` names what
 * was deleted, altered, reordered or cut off; `doctor` and the running store notice a deleted
 * file; a version-6 file is chained when it is migrated.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AuditStore } from '../../../src/main/hub/audit';
import type { AuditCheckpoint } from '../../../src/main/hub/audit';
import { canonicalRecord, genesisHash, linkHash } from '../../../src/main/hub/audit/chain';
import { checkpointsPath, keyPath } from '../../../src/main/hub/audit/checkpoints';
import { verifyAudit } from '../../../src/main/hub/audit/verify';
import type { AuditFinding } from '../../../src/main/hub/audit/verify';
import { main } from '../../../src/main/edges/cli/main';
import { closeHubs, openHub } from './helpers';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'uplink-chain-')), 'audit.sqlite');

/** A store with `n` entries and a checkpoint over all of them, closed. */
function filled(n: number, path = fresh()): string {
  const store = new AuditStore(path);
  for (let i = 1; i <= n; i++) store.append({ at: 1000 + i, type: 'event', kind: 'accepted', invocation_id: `inv-${i}`, message: `entry ${i}` });
  store.close();
  return path;
}

const kinds = (findings: AuditFinding[]): string[] => findings.map((f) => f.kind);

/** Runs the CLI in this process; returns its exit code and what it printed. */
async function cli(dataDir: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  const before = process.env.UPLINK_DATA_DIR;
  process.env.UPLINK_DATA_DIR = dataDir;
  try {
    const code = await main(argv);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    if (before === undefined) delete process.env.UPLINK_DATA_DIR;
    else process.env.UPLINK_DATA_DIR = before;
  }
}

afterEach(closeHubs);

describe('audit hash chain', () => {
  it('links every row to the one before it from a genesis of the audit id, in the one canonical form', () => {
    const path = filled(3);
    const db = new Database(path, { readonly: true });
    const id = (db.prepare("SELECT value FROM audit_meta WHERE key = 'audit_id'").get() as { value: string }).value;
    const rows = db.prepare('SELECT * FROM entries ORDER BY id').all() as Array<Record<string, unknown>>;
    db.close();
    let prev = genesisHash(id);
    for (const row of rows) {
      expect(row.prev_hash).toBe(prev);
      expect(row.hash).toBe(linkHash(prev, canonicalRecord(row)));
      prev = row.hash as string;
    }
    // Sorted keys, no whitespace, NULL columns and the link left out.
    expect(canonicalRecord({ type: 'event', id: 1, at: 5, message: null, hash: 'x', prev_hash: 'y' })).toBe('{"at":5,"id":1,"type":"event"}');
    // Strings and numbers exactly as JSON.stringify writes them, whatever they hold.
    const odd = { b: 'quote " backslash \\ newline \n tab \t nul \u0000 emoji \ud83d\ude00 sep \u2028', a: -1.5, c: 1e21, d: 'é' };
    expect(canonicalRecord(odd)).toBe(JSON.stringify({ a: odd.a, b: odd.b, c: odd.c, d: odd.d }));
    expect(verifyAudit({ path })).toMatchObject({ ok: true, records: 3, findings: [], head: rows[2]!.hash });
  });

  it('names a deleted record', () => {
    const path = filled(6);
    new Database(path).prepare('DELETE FROM entries WHERE id = 3').run();
    const r = verifyAudit({ path });
    expect(r.ok).toBe(false);
    expect(r.findings[0]).toMatchObject({ kind: 'deleted', id: 4 });
    expect(r.findings[0]!.message).toMatch(/record 3 was deleted/);
  });

  it('names an altered record', () => {
    const path = filled(6);
    new Database(path).prepare("UPDATE entries SET message = 'nothing to see' WHERE id = 2").run();
    const r = verifyAudit({ path });
    expect(kinds(r.findings)).toEqual(['altered']);
    expect(r.findings[0]).toMatchObject({ id: 2, position: 2 });
  });

  it('names reordered records', () => {
    const path = filled(6);
    const db = new Database(path);
    db.exec('UPDATE entries SET id = 100 WHERE id = 4; UPDATE entries SET id = 4 WHERE id = 5; UPDATE entries SET id = 5 WHERE id = 100;');
    db.close();
    const r = verifyAudit({ path });
    expect(r.ok).toBe(false);
    expect(kinds(r.findings)).toEqual(['reordered']);
    expect(r.findings[0]).toMatchObject({ id: 4, message: expect.stringMatching(/^records 4–6 are out of order: record 4 was recorded after record 5/) });
  });

  it('names a tail cut off after a checkpoint (in the database and in the side file)', () => {
    const path = filled(8);
    new Database(path).prepare('DELETE FROM entries WHERE id > 5').run();
    const r = verifyAudit({ path });
    expect(kinds(r.findings)).toEqual(['truncated']);
    expect(r.findings[0]!.message).toMatch(/holds 5 records, but a checkpoint .* says it held 8: the last 3 were removed/);
    // The intruder also empties the checkpoint table: the side file still says it.
    new Database(path).exec('DELETE FROM audit_checkpoints');
    expect(verifyAudit({ path }).findings[0]).toMatchObject({ kind: 'truncated', source: 'side file' });
  });

  it('says a truncated file is damaged, and the CLI exits 1', async () => {
    const path = filled(400);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const r = verifyAudit({ path });
    expect(r.ok).toBe(false);
    expect(kinds(r.findings)).toContain('damaged');
    expect((await cli(join(path, '..'), 'audit', 'verify')).code).toBe(1);
  });

  it('a chain recomputed without the key no longer matches the signed checkpoints', () => {
    const path = filled(5);
    const db = new Database(path);
    db.prepare("UPDATE entries SET message = 'rewritten' WHERE id = 2").run();
    // Recompute every link from the row altered onwards, as an intruder without the key can.
    const rows = db.prepare('SELECT * FROM entries WHERE id >= 2 ORDER BY id').all() as Array<Record<string, unknown> & { id: number }>;
    let prev = (db.prepare('SELECT hash FROM entries WHERE id = 1').get() as { hash: string }).hash;
    for (const row of rows) {
      const hash = linkHash(prev, canonicalRecord(row));
      db.prepare('UPDATE entries SET prev_hash = ?, hash = ? WHERE id = ?').run(prev, hash, row.id);
      prev = hash;
    }
    db.close();
    expect(kinds(verifyAudit({ path }).findings)).toEqual(['rewritten']);
  });

  it('a checkpoint whose signature does not match (altered count, forged signature) is named', () => {
    const path = filled(5);
    const db = new Database(path);
    db.prepare('UPDATE audit_checkpoints SET count = 4').run();
    db.close();
    const r = verifyAudit({ path });
    expect(r.findings.some((f) => f.kind === 'signature' && f.source === 'database')).toBe(true);
    // A forged line in the side file, signed with another key, is named too.
    const side = checkpointsPath(path);
    const line = JSON.parse(readFileSync(side, 'utf8').trim().split('\n').pop()!) as Record<string, unknown>;
    appendFileSync(side, `${JSON.stringify({ ...line, at: 1, sig: Buffer.alloc(64, 7).toString('base64') })}\n`);
    expect(verifyAudit({ path }).findings.some((f) => f.kind === 'signature' && f.source === 'side file')).toBe(true);
  });

  it('a replaced key file is named, and signatures are still checked with the key the database kept', () => {
    const path = filled(2);
    rmSync(keyPath(path));
    const store = new AuditStore(path); // makes a new key: the database keeps the first one's public half
    store.append({ at: 9, type: 'event', kind: 'accepted' });
    store.close();
    const r = verifyAudit({ path });
    expect(kinds(r.findings)).toContain('key');
    expect(kinds(r.findings)).toContain('signature');
  });

  it('the key file is private, and every checkpoint reaches onCheckpoint', () => {
    const path = fresh();
    const store = new AuditStore(path);
    const heard: AuditCheckpoint[] = [];
    const off = store.onCheckpoint((c) => heard.push(c));
    store.append({ at: 1, type: 'event', kind: 'accepted' });
    const c = store.takeCheckpoint();
    expect(store.takeCheckpoint()).toBeUndefined(); // nothing new since
    off();
    store.close();
    expect(statSync(keyPath(path)).mode & 0o777).toBe(0o600);
    expect(statSync(checkpointsPath(path)).mode & 0o777).toBe(0o600);
    expect(heard).toEqual([c]);
    expect(c).toMatchObject({ count: 1, head: verifyAudit({ path }).head });
    expect(Object.keys(c!).sort()).toEqual(['at', 'count', 'head']);
  });

  it("checks a fleet witness's checkpoints: one the chain no longer reaches, or whose head differs", async () => {
    const path = filled(4);
    const { head } = verifyAudit({ path });
    const dir = join(path, '..');
    const witness = join(dir, 'witness.jsonl');
    writeFileSync(witness, `${JSON.stringify({ count: 4, head, at: 5 })}\n`);
    expect(verifyAudit({ path, witness: [witness] })).toMatchObject({ ok: true, checkpoints: { witness: 1 } });
    writeFileSync(witness, `${JSON.stringify({ count: 4, head: 'f'.repeat(64), at: 5 })}\n${JSON.stringify({ count: 9, head, at: 6 })}\n`);
    const r = verifyAudit({ path, witness: [witness] });
    expect(r.findings.map((f) => [f.kind, f.source])).toEqual([
      ['truncated', witness],
      ['rewritten', witness],
    ]);
    const run = await cli(dir, 'audit', 'verify', '--witness', witness);
    expect(run.code).toBe(1);
    expect(run.out.split('\n').filter(Boolean)).toHaveLength(3);
    writeFileSync(witness, 'not json\n');
    const bad = await cli(dir, 'audit', 'verify', '--witness', witness);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/witness.jsonl:1 is not JSON — hint: /);
  });

  it('a database deleted and recreated is named by the checkpoints the side file kept', async () => {
    const path = filled(3);
    for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    expect(verifyAudit({ path }).findings[0]).toMatchObject({ kind: 'truncated' });
    expect((await cli(join(path, '..'), 'audit', 'verify')).code).toBe(1);
    filled(1, path);
    const r = verifyAudit({ path });
    expect(kinds(r.findings)).toEqual(['replaced']);
    expect(r.findings[0]!.message).toMatch(/another audit .* 3 records/);
  });

  it('the CLI: exit 0 and one line when whole, --json a report, 2 with a hint when there is no audit', async () => {
    const path = filled(2);
    const dir = join(path, '..');
    const ok = await cli(dir, 'audit', 'verify');
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.out).toMatch(/^ok audit .*: the chain is whole \(2 records/);
    const json = await cli(dir, 'audit', 'verify', '--json');
    expect(JSON.parse(json.out)).toMatchObject({ ok: true, records: 2, findings: [], checkpoints: { database: 2, side_file: 2, witness: 0 } });
    const none = await cli(mkdtempSync(join(tmpdir(), 'uplink-chain-')), 'audit', 'verify');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/there is no audit at .* — hint: /);
    expect((await cli(dir, 'audit')).code).toBe(2);
  });

  it('signs a checkpoint within seconds of activity, and none while the audit is idle', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const store = new AuditStore(fresh());
      const heard: AuditCheckpoint[] = [];
      store.onCheckpoint((c) => heard.push(c));
      store.append({ at: 1, type: 'event', kind: 'accepted' });
      vi.advanceTimersByTime(2500);
      expect(heard.map((c) => c.count)).toEqual([1]);
      vi.advanceTimersByTime(10_000);
      expect(heard).toHaveLength(1);
      store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('two stores writing one file (a CLI beside the hub) keep one chain', () => {
    const path = fresh();
    const a = new AuditStore(path);
    const b = new AuditStore(path);
    for (let i = 0; i < 10; i++) (i % 2 ? a : b).appendMany([{ at: i, type: 'event', kind: 'accepted' }]);
    a.append({ at: 11, type: 'event', kind: 'accepted' });
    b.close();
    a.close();
    expect(verifyAudit({ path })).toMatchObject({ ok: true, records: 11 });
  });

  it('verifies beside a running store (read-only), and its rows written meanwhile', () => {
    const path = fresh();
    const store = new AuditStore(path);
    store.appendMany([1, 2, 3].map((i) => ({ at: i, type: 'event' as const, kind: 'accepted' as const })));
    expect(verifyAudit({ path })).toMatchObject({ ok: true, records: 3 });
    store.append({ at: 4, type: 'event', kind: 'accepted' });
    expect(verifyAudit({ path })).toMatchObject({ ok: true, records: 4 });
    store.close();
  });

  it('migrating a version-6 database chains the rows it holds', () => {
    const path = fresh();
    const db = new Database(path);
    // A version-6 file: the schema as it stood, with two rows.
    new AuditStore(path).close();
    db.exec('ALTER TABLE entries DROP COLUMN hash; ALTER TABLE entries DROP COLUMN prev_hash; DROP TABLE audit_meta; DROP TABLE audit_checkpoints;');
    db.pragma('user_version = 6');
    db.prepare("INSERT INTO entries (at, type, kind, message) VALUES (1, 'event', 'accepted', 'before the chain')").run();
    db.prepare("INSERT INTO entries (at, type, kind, message) VALUES (2, 'event', 'succeeded', 'also before')").run();
    db.close();
    rmSync(checkpointsPath(path), { force: true });
    const store = new AuditStore(path);
    store.append({ at: 3, type: 'event', kind: 'accepted', message: 'after' });
    store.close();
    const r = verifyAudit({ path });
    expect(r).toMatchObject({ ok: true, records: 3 });
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT COUNT(*) AS n FROM entries WHERE hash IS NULL').get()).toEqual({ n: 0 });
    check.close();
  });

  it('doctor reports an audit file deleted under the running hub, and the hub refuses calls from then on', async () => {
    const { hub, dir } = openHub();
    await hub.invoke('test:alpha', 'login', { user: 'u', password: 'p' }, { agent: { kind: 'cli', name: 'test' } } as never).catch(() => undefined);
    expect((await hub.doctor()).audit.ok).toBe(true);
    for (const f of ['audit.sqlite', 'audit.sqlite-wal', 'audit.sqlite-shm']) rmSync(join(dir, f), { force: true });
    const doctor = await hub.doctor();
    expect(doctor.ok).toBe(false);
    expect(doctor.audit.error).toMatch(/the audit file .*audit\.sqlite was deleted while the hub runs/);
    expect(hub.auditFailure()).toMatch(/was deleted while the hub runs/);
    expect(doctor.audit.error).toMatch(/new calls are refused — hint: restart the hub/);
    const refused = await hub
      .invoke('test:alpha', 'login', { user: 'u', password: 'p' }, { agent: { kind: 'cli', name: 'test' } } as never)
      .catch((e: Error) => e);
    expect(String((refused as Error).message)).toMatch(/the audit log cannot be written \(the audit file .* was deleted while the hub runs/);
    expect((refused as { hint?: string }).hint).toMatch(/^restart the hub/);
  });

  it('the store notices on its own that its file was replaced, and says so to the panel', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const path = filled(2);
      const store = new AuditStore(path);
      const told: Array<string | undefined> = [];
      store.onFailureChange = (f) => told.push(f);
      rmSync(path);
      writeFileSync(path, '');
      vi.advanceTimersByTime(2500);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/was replaced while the hub runs/);
      expect(store.failure()).toBe(told[0]);
      store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('doctor finds a row deleted after the newest checkpoint, and random bytes over the file', async () => {
    const path = filled(5);
    const store = new AuditStore(path);
    expect(await store.health()).toMatchObject({ ok: true });
    store.close();
    new Database(path).prepare('DELETE FROM entries WHERE id = 5').run();
    const after = new AuditStore(path);
    expect((await after.health()).error).toMatch(/the audit's chain is broken: record 5, which a checkpoint .* vouched for, is gone/);
    after.close();
    const damaged = filled(50);
    const live = new AuditStore(damaged);
    expect((await live.health()).ok).toBe(true);
    const size = statSync(damaged).size;
    writeFileSync(damaged, Buffer.alloc(size, 0x5a), { flag: 'r+' });
    // The check after the next interval sees the disk, not what this connection cached.
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 60_000);
    try {
      expect(await live.health()).toMatchObject({ ok: false });
    } finally {
      vi.restoreAllMocks();
    }
    live.close();
    expect(existsSync(damaged)).toBe(true);
  });
});
