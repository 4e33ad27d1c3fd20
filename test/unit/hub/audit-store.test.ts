/** The SQLite audit store: schema version, filters, paging, persistence across reopen. */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AuditStore } from '../../../src/main/hub/audit';
import { AUDIT_SCHEMA_VERSION } from '../../../src/main/hub/audit/migrations';
import { COLUMNS } from '../../../src/main/hub/audit/columns';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { quickCheckOffThread } from '../../../src/main/hub/audit/integrity-thread';
import { AUDIT_RECORD_SCHEMA } from '../../../src/shared/audit-record';
import type { JsonValue } from '../../../src/main/kernel/types';
import type { AuditEntry } from '../../../src/main/hub';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'uplink-audit-')), 'audit.sqlite');
/** What version 7 (the hash chain) added, taken out again: a file as version 6 left it. */
const UNCHAIN = 'ALTER TABLE entries DROP COLUMN hash; ALTER TABLE entries DROP COLUMN prev_hash; DROP TABLE audit_meta; DROP TABLE audit_checkpoints;';
const agent = { kind: 'mcp' as const, agent_id: 'builder', name: 'claude', version: '1' };

describe('AuditStore', () => {
  it('uses WAL and records its schema version', () => {
    const path = fresh();
    new AuditStore(path).close();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(AUDIT_SCHEMA_VERSION);
    db.close();
  });

  it('two stores on one file (a CLI beside a running hub) share it', () => {
    const path = fresh();
    const a = new AuditStore(path);
    const b = new AuditStore(path);
    a.append({ at: 1, type: 'event', kind: 'accepted' });
    b.append({ at: 2, type: 'event', kind: 'started' });
    expect(a.query({}).entries.map((e) => e.kind)).toEqual(['started', 'accepted']);
    a.close();
    b.close();
  });

  it('a fresh file gets the very tables, columns and indexes the migrations written out by hand used to make', () => {
    // The SQL of versions 1–6 as it stood before the migrations were derived from the audit record.
    const HISTORIC = [
      `CREATE TABLE entries (
         id INTEGER PRIMARY KEY,
         at INTEGER NOT NULL, type TEXT NOT NULL, kind TEXT NOT NULL,
         invocation_id TEXT, sequence INTEGER, channel TEXT, op TEXT, capability_id TEXT,
         agent_kind TEXT, agent_name TEXT, agent_version TEXT, agent_user TEXT,
         provider_id TEXT, interaction TEXT, state TEXT,
         error_code TEXT, error_kind TEXT, message TEXT, hint TEXT, detail TEXT,
         authorized TEXT, granted INTEGER, by_who TEXT, reason TEXT, args TEXT, duration_ms INTEGER);
       CREATE INDEX entries_channel ON entries(channel, id);
       CREATE INDEX entries_op ON entries(op, id);
       CREATE INDEX entries_agent ON entries(agent_name, id);
       CREATE INDEX entries_state ON entries(state, id);
       CREATE INDEX entries_invocation ON entries(invocation_id, id);
       CREATE TABLE rule_usage (rule_id TEXT PRIMARY KEY, last_used_at INTEGER NOT NULL, uses INTEGER NOT NULL);`,
      `ALTER TABLE entries ADD COLUMN output TEXT;`,
      `CREATE TABLE IF NOT EXISTS journal_marks (file TEXT PRIMARY KEY, seq INTEGER NOT NULL);`,
      `ALTER TABLE entries ADD COLUMN agent_id TEXT;
       CREATE INDEX entries_agent_id ON entries(agent_id, id);`,
      `ALTER TABLE entries ADD COLUMN decision TEXT;
       ALTER TABLE entries ADD COLUMN rule_id TEXT;`,
      `ALTER TABLE entries ADD COLUMN outcome TEXT;
       CREATE INDEX entries_outcome ON entries(outcome, id);`,
      `ALTER TABLE entries ADD COLUMN prev_hash TEXT;
       ALTER TABLE entries ADD COLUMN hash TEXT;
       CREATE TABLE audit_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
       CREATE TABLE audit_checkpoints (seq INTEGER PRIMARY KEY, count INTEGER NOT NULL, head TEXT NOT NULL, at INTEGER NOT NULL, last_id INTEGER NOT NULL, sig TEXT NOT NULL);`,
    ];
    const layout = (db: Database.Database) => {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
      const indexes = db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").all() as Array<{
        name: string;
      }>;
      return {
        tables: tables.map((t) => ({ name: t.name, columns: db.pragma(`table_info(${t.name})`) })),
        indexes: indexes.map((i) => ({ ...i, columns: db.pragma(`index_info(${i.name})`) })),
      };
    };
    const old = new Database(':memory:');
    for (const sql of HISTORIC) old.exec(sql);
    const path = fresh();
    new AuditStore(path).close();
    const derived = new Database(path, { readonly: true });
    expect(HISTORIC).toHaveLength(AUDIT_SCHEMA_VERSION);
    expect(layout(derived)).toEqual(layout(old));
    derived.close();
    old.close();
  });

  it('a file whose table lacks a column of the record is refused with what to do, not left to fail every write', () => {
    const path = fresh();
    new AuditStore(path).close();
    const db = new Database(path);
    db.exec('DROP INDEX entries_outcome; ALTER TABLE entries DROP COLUMN outcome');
    db.close();
    expect(() => new AuditStore(path)).toThrow(/the audit table has no column outcome — hint: .*add a step naming it/);
  });

  it('refuses a database from a newer schema', () => {
    const path = fresh();
    const db = new Database(path);
    db.pragma('user_version = 99');
    db.close();
    expect(() => new AuditStore(path)).toThrow(/newer Uplink/);
  });

  it('filters by channel, op, agent, state, type and text, and pages by cursor', () => {
    const s = new AuditStore(fresh());
    for (let i = 0; i < 25; i++) {
      s.append({
        at: 1000 + i,
        type: 'event',
        kind: 'succeeded',
        channel: i % 2 ? 'tmux:%1' : 'tmux:%2',
        op: i % 3 ? 'read' : 'send',
        agent,
        state: 'succeeded',
        args: { n: i, note: `item-${i}` },
      });
    }
    s.appendDurable({ at: 2000, type: 'decision', kind: 'decision', authorized: 'operator', by: 'alice', granted: false, reason: 'no 100% sure' });
    expect(s.query({ channel: 'tmux:%1' }).entries).toHaveLength(12);
    expect(s.query({ op: 'send' }).entries).toHaveLength(9);
    expect(s.query({ agent: 'builder', state: 'succeeded' }).entries).toHaveLength(25);
    // The agent filter is the authenticated id: a declared client name matches nothing.
    expect(s.query({ agent: 'claude' }).entries).toHaveLength(0);
    expect(s.query({ agent: 'builder' }).entries[0]!.agent).toEqual(agent);
    expect(s.query({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'operator', by: 'alice', granted: false });
    expect(s.query({ text: 'item-17' }).entries.map((e) => e.args)).toEqual([{ n: 17, note: 'item-17' }]);
    expect(s.query({ text: '100%' }).entries).toHaveLength(1);
    expect(s.query({ text: '_' }).entries).toHaveLength(0);
    // Backwards from the newest, then onwards with the cursor.
    const first = s.query({ limit: 10 });
    expect(first.entries.map((e) => e.id)).toEqual([26, 25, 24, 23, 22, 21, 20, 19, 18, 17]);
    const second = s.query({ limit: 10, before: first.next_cursor });
    expect(second.entries[0]!.id).toBe(16);
    const last = s.query({ limit: 10, before: 7 });
    expect(last.entries).toHaveLength(6);
    expect(last.next_cursor).toBeUndefined();
    // Forwards (follow).
    const fwd = s.query({ after: 20, limit: 100 });
    expect(fwd.entries.map((e) => e.id)).toEqual([21, 22, 23, 24, 25, 26]);
    expect(fwd.next_cursor).toBe(26);
    expect(s.query({ after: 26 }).next_cursor).toBe(26);
    s.close();
  });

  it('survives a reopen (restart) with entries and rule usage', () => {
    const path = fresh();
    const a = new AuditStore(path);
    a.append({ at: 1, type: 'rejected', kind: 'rejected', channel: 'x:1', agent, error_kind: 'NotFound', message: 'no channel x:1' });
    a.touchRule('r1', 10);
    a.touchRule('r1', 20);
    a.close();
    const b = new AuditStore(path);
    expect(b.query({}).entries[0]).toMatchObject({ type: 'rejected', channel: 'x:1', agent, error_kind: 'NotFound' });
    expect(b.ruleUsage().get('r1')).toEqual({ last_used_at: 20, uses: 2 });
    b.close();
  });

  it('keeps a succeeded output across reopen, with screenshots summarized instead of stored', () => {
    const path = fresh();
    const png = 'iVBOR'.padEnd(50_000, 'A');
    const a = new AuditStore(path);
    a.append({ at: 1, type: 'event', kind: 'succeeded', invocation_id: 'inv-1', output: { text: 'hello', png_base64: png, width: 800 } });
    a.close();
    const b = new AuditStore(path);
    const [entry] = b.query({ invocation_id: 'inv-1' }).entries;
    const output = entry!.output as { text: string; png_base64: string; width: number };
    expect(output.text).toBe('hello');
    expect(output.width).toBe(800);
    expect(output.png_base64).toMatch(/^iVBOR.*\(50000 chars, not stored\)$/);
    b.close();
  });

  it('migrates a version-1 database in place, keeping its entries', () => {
    const path = fresh();
    new AuditStore(path).close();
    const db = new Database(path);
    db.exec(
      UNCHAIN +
        'DROP INDEX entries_outcome; ALTER TABLE entries DROP COLUMN outcome; ALTER TABLE entries DROP COLUMN rule_id; ALTER TABLE entries DROP COLUMN decision; DROP INDEX entries_agent_id; ALTER TABLE entries DROP COLUMN agent_id; ALTER TABLE entries DROP COLUMN output',
    );
    db.pragma('user_version = 1');
    db.prepare("INSERT INTO entries (at, type, kind, invocation_id, agent_kind, agent_name) VALUES (5, 'event', 'accepted', 'old-1', 'mcp', 'claude')").run();
    db.close();
    const store = new AuditStore(path);
    expect(store.query({ invocation_id: 'old-1' }).entries.map((e) => e.kind)).toEqual(['accepted']);
    // A row from before agents authenticated keeps its declared name and claims no agent id.
    expect(store.query({ invocation_id: 'old-1' }).entries[0]!.agent).toEqual({ kind: 'mcp', name: 'claude' });
    store.append({ at: 6, type: 'event', kind: 'succeeded', invocation_id: 'old-1', output: { ok: true } });
    expect(store.query({ invocation_id: 'old-1' }).entries[0]!.output).toEqual({ ok: true });
    store.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(AUDIT_SCHEMA_VERSION);
    check.close();
  });

  it('migrating a version-5 database gives the entries that ended calls their outcome, as outcomeOf reads their invocation', () => {
    const path = fresh();
    new AuditStore(path).close();
    const db = new Database(path);
    db.exec(`${UNCHAIN} DROP INDEX entries_outcome; ALTER TABLE entries DROP COLUMN outcome`);
    db.pragma('user_version = 5');
    const insert = db.prepare('INSERT INTO entries (at, type, kind, invocation_id, state, error_code, error_kind, authorized) VALUES (1, ?, ?, ?, ?, ?, ?, ?)');
    insert.run('event', 'succeeded', 'ok', 'succeeded', null, null, null);
    insert.run('decision', 'decision', 'asked', null, null, null, 'timeout');
    insert.run('event', 'failed', 'asked', 'failed', 'policy_denied', 'Rejected', null);
    insert.run('event', 'failed', 'no', 'failed', 'policy_denied', 'Rejected', null);
    insert.run('event', 'failed', 'slow', 'failed', 'provider_failed', 'Timeout', null);
    insert.run('event', 'failed', 'broke', 'failed', 'provider_failed', 'Upstream', null);
    insert.run('event', 'cancelled', 'stop', 'cancelled', null, null, null);
    insert.run('rejected', 'rejected', null, 'rejected', 'input_schema_violation', 'Invalid', null);
    insert.run('event', 'started', 'running', 'running', null, null, null);
    db.close();
    const store = new AuditStore(path);
    try {
      const ended = store.query({ after: 0 }).entries.map((e) => `${e.invocation_id ?? '-'}:${e.outcome ?? '-'}`);
      expect(ended).toEqual([
        'ok:succeeded',
        'asked:-',
        'asked:timed_out',
        'no:denied',
        'slow:timed_out',
        'broke:failed',
        'stop:cancelled',
        '-:rejected',
        'running:-',
      ]);
      expect(store.query({ outcome: 'timed_out' }).entries.map((e) => e.invocation_id)).toEqual(['slow', 'asked']);
    } finally {
      store.close();
    }
  });

  it('stores every field of the record, the agent flattened and args/output as JSON, and reads the same record back', () => {
    const s = new AuditStore(fresh());
    const record = {
      at: 7,
      type: 'decision',
      kind: 'decision',
      invocation_id: 'inv-9',
      sequence: 3,
      channel: 'test:a',
      op: 'write',
      capability_id: 'test.write',
      agent: { kind: 'mcp', agent_id: 'builder', name: 'claude-code', version: '2.1.0', user: 'ann' },
      provider_id: 'uplink/test',
      interaction: 'typed',
      state: 'accepted',
      error_code: 'policy_denied',
      error_kind: 'Rejected',
      message: 'm',
      hint: 'h',
      detail: 'd',
      authorized: 'operator',
      granted: true,
      by: 'alice',
      reason: 'r',
      args: { text: 'x' },
      duration_ms: 12,
      output: { ok: true },
      decision: 'always',
      rule_id: 'rule_1',
      outcome: 'denied',
    } as const;
    // The fixture names every property of the schema, so a new one cannot be left unstored.
    expect(Object.keys(record).sort()).toEqual(
      Object.keys(AUDIT_RECORD_SCHEMA.properties)
        .filter((k) => k !== 'id')
        .sort(),
    );
    const stored = s.append(record);
    expect(s.query({}).entries).toEqual([{ ...record, id: stored.id }]);
    s.close();
    const db = new Database(s.path, { readonly: true });
    expect(db.prepare('SELECT agent_id, agent_name, by_who, granted, args, decision, rule_id FROM entries').get()).toEqual({
      agent_id: 'builder',
      agent_name: 'claude-code',
      by_who: 'alice',
      granted: 1,
      args: '{"text":"x"}',
      decision: 'always',
      rule_id: 'rule_1',
    });
    db.close();
  });

  it('a journal line written before schema 5 (agent_id in its last column) is replayed into the right columns', () => {
    const path = fresh();
    new AuditStore(path).close();
    const v4 = [
      5,
      'decision',
      'decision',
      'inv-old',
      null,
      'test:a',
      'write',
      'test.write',
      'mcp',
      'claude-code',
      '2.1.0',
      null,
      'uplink/test',
      'typed',
      'accepted',
      null,
      null,
      null,
      null,
      null,
      'operator',
      0,
      'alice',
      'not now',
      '{"text":"x"}',
      null,
      null,
      'builder',
    ];
    mkdirSync(journalDir(path), { recursive: true });
    // A pid no process has: the journal of a process that died before the upgrade.
    writeFileSync(join(journalDir(path), '2147483646-old.jsonl'), `${JSON.stringify({ seq: 1, rows: [v4] })}\n`, { mode: 0o600 });
    const s = new AuditStore(path);
    expect(s.query({}).entries[0]).toMatchObject({
      invocation_id: 'inv-old',
      agent: { kind: 'mcp', agent_id: 'builder', name: 'claude-code', version: '2.1.0' },
      authorized: 'operator',
      granted: false,
      by: 'alice',
      reason: 'not now',
      args: { text: 'x' },
    });
    s.close();
  });

  it('a journal line of column values (what versions before entries wrote) is replayed', () => {
    const path = fresh();
    new AuditStore(path).close();
    const cells: Record<string, string | number> = {
      at: 7,
      type: 'event',
      kind: 'succeeded',
      invocation_id: 'inv-rows',
      channel: 'test:a',
      state: 'succeeded',
      output: '{"ok":true}',
      outcome: 'succeeded',
    };
    const row = COLUMNS.map((c) => cells[c.name] ?? null);
    mkdirSync(journalDir(path), { recursive: true });
    writeFileSync(join(journalDir(path), '2147483646-rows.jsonl'), `${JSON.stringify({ seq: 1, rows: [row] })}\n`, { mode: 0o600 });
    const s = new AuditStore(path);
    expect(s.query({}).entries[0]).toMatchObject({
      at: 7,
      kind: 'succeeded',
      invocation_id: 'inv-rows',
      channel: 'test:a',
      output: { ok: true },
      outcome: 'succeeded',
    });
    s.close();
  });

  it('a replayed journal line stores its entries as a live commit would: what was cut is not cut again', () => {
    const path = fresh();
    const wide = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, 'v'.repeat(40)]));
    const entries: Array<Omit<AuditEntry, 'id'>> = [
      { at: 1, type: 'event' as const, kind: 'failed', invocation_id: 'inv-cut', message: 'm'.repeat(9000) },
      { at: 2, type: 'event' as const, kind: 'succeeded', invocation_id: 'inv-cut', output: wide },
      { at: 3, type: 'event' as const, kind: 'accepted', invocation_id: 'inv-cut', args: wide },
    ];
    const live = new AuditStore(fresh());
    live.appendMany(entries);
    const expected = live.query({}).entries.map(({ message, output, args }) => ({ message, output, args }));
    live.close();
    // A process that journaled them and was killed before its commit.
    const dying = new AuditStore(path);
    dying.journal(entries);
    const [file] = readdirSync(journalDir(path));
    renameSync(join(journalDir(path), file!), join(journalDir(path), '2147483646-dead.jsonl'));
    const s = new AuditStore(path);
    expect(s.query({}).entries.map(({ message, output, args }) => ({ message, output, args }))).toEqual(expected);
    s.close();
    dying.close();
  });

  it('checks the file for damage off the event loop (any agent can ask doctor): the loop turns while it runs', async () => {
    const s = new AuditStore(fresh());
    s.append({ at: 1, type: 'event', kind: 'accepted' });
    let turned = false;
    setImmediate(() => (turned = true));
    const damage = s.damage();
    expect(await damage).toBeUndefined();
    expect(turned).toBe(true);
    // Asked again within the interval: the last answer, without another check.
    expect(await s.damage()).toBeUndefined();
    s.close();
  });

  it('reports an integrity check that does not finish in time as unfinished, and ends it', async () => {
    const path = fresh();
    new AuditStore(path).close();
    expect(await quickCheckOffThread(path, 0)).toEqual({ error: 'the check did not finish within 0 s' });
    expect(await quickCheckOffThread(path)).toEqual({ lines: ['ok'] });
  });

  it('caps huge args', () => {
    const s = new AuditStore(fresh());
    const e = s.append({ at: 1, type: 'event', kind: 'accepted', args: { big: 'x'.repeat(100_000) } });
    const back = s.query({}).entries[0]!;
    expect(e.id).toBe(back.id);
    expect(typeof back.args).toBe('string');
    expect(String(back.args).length).toBeLessThan(17_000);
    s.close();
  });

  it('one entry that cannot be serialized or stored is contained to itself: a bounded placeholder, the rest of the batch commits', () => {
    const path = fresh();
    const s = new AuditStore(path);
    let deep: JsonValue = {};
    for (let i = 0; i < 6000; i++) deep = { a: deep };
    // A cycle nests without end: it is caught by the same bound.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    // SQLite refuses one row (as a full or damaged table would refuse one insert).
    const db = new Database(path);
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON entries WHEN NEW.message = 'poison' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END");
    db.close();
    const stored = s.appendMany([
      { at: 1, type: 'event', kind: 'accepted', invocation_id: 'deep', args: deep, output: deep },
      { at: 2, type: 'event', kind: 'accepted', invocation_id: 'cyclic', args: cyclic as unknown as JsonValue },
      { at: 3, type: 'rejected', kind: 'rejected', invocation_id: 'poison', message: 'poison' },
      { at: 4, type: 'event', kind: 'accepted', invocation_id: 'fine', args: { ok: true } },
    ]);
    // What the live stream gets is what was stored: bounded.
    expect(stored.map((e) => e.args)).toEqual(['<not stored: nesting deeper than 64>', '<not stored: nesting deeper than 64>', undefined, { ok: true }]);
    expect(() => JSON.stringify(stored)).not.toThrow();
    const back = s.query({ after: 0 }).entries;
    expect(back.map((e) => e.invocation_id)).toEqual(['deep', 'cyclic', 'poison', 'fine']);
    expect(back[0]).toMatchObject({ args: '<not stored: nesting deeper than 64>', output: '<not stored: nesting deeper than 64>' });
    expect(back[2]!.message).toBe('<not stored: refused by trigger>');
    s.close();
  });

  it('bounds every text field and the client identity on the record', () => {
    const s = new AuditStore(fresh());
    const huge = 'y'.repeat(1_000_000);
    s.append({
      at: 1,
      type: 'rejected',
      kind: 'rejected',
      channel: huge,
      op: huge,
      message: huge,
      hint: huge,
      detail: huge,
      reason: huge,
      agent: { kind: 'mcp', name: huge, version: huge },
    });
    const back = s.query({}).entries[0]!;
    expect(back.channel!.length).toBeLessThan(600);
    expect(back.op!.length).toBeLessThan(200);
    expect(back.agent!.name.length).toBeLessThan(300);
    expect(back.agent!.version!.length).toBeLessThan(300);
    for (const t of [back.message, back.hint, back.detail, back.reason]) expect(t!.length).toBeLessThan(8300);
    expect(back.message).toMatch(/… \(cut, 1000000 chars\)$/);
    s.close();
  });
});
