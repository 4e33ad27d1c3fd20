/**
 * The audit store: an append-only SQLite table (better-sqlite3, WAL) of every kernel event,
 * approval decision and rejected request. Ordinary entries commit with `synchronous=NORMAL`
 * (durable against a process crash: WAL frames are in the OS before the call returns); decisions
 * commit with `synchronous=FULL` (fsynced) before they take effect. A call's entries can instead be
 * journaled before its reply and committed with a later batch (`journal`, audit-journal.ts);
 * opening a store replays the journals of processes that died in between. Nothing secret is stored: the
 * hub redacts sensitive args before they get here.
 */
import Database from 'better-sqlite3';
import type { Database as Db, Statement } from 'better-sqlite3';
import type { JsonValue } from '../../kernel';
import { AuditJournal, journalDir } from './journal';
import { createPrivate, tightenFiles } from '../data-dir';
import { wellFormed } from '../../../shared/escape';
import { AUDIT_RECORD_SCHEMA, outcomeOf, pickRecord, RECORD_AGENT_SCHEMA } from '../../../shared/audit-record';
import type { OutcomeFacts, RecordAgent } from '../../../shared/audit-record';
import type { JournalRow } from './journal';
import type { AuditEntry, AuditPage, AuditQuery } from '../types';
import { cut, deepPlaceholder, MAX_CHANNEL_CHARS, MAX_CLIENT_CHARS, MAX_DEPTH, MAX_OP_CHARS, MAX_TEXT_CHARS, nestsDeeperThan } from '../bounds';

/** Bumped when the table layout changes; migrations run from the stored `user_version`. */
export const AUDIT_SCHEMA_VERSION = 6;

/** How often the WAL is checkpointed into the database file. */
const CHECKPOINT_EVERY_MS = 2000;

/** Least time between two integrity checks (`doctor` can be asked for often). */
const INTEGRITY_EVERY_MS = 10_000;

/** Longest args/output JSON kept per entry; longer is cut (the audit is a log, not a payload store). */
const MAX_ARGS_CHARS = 16 * 1024;
/** Longest single string kept inside a stored output (screenshots are summarized, not stored). */
const MAX_OUTPUT_STRING = 2048;

/** How a record field is stored: text, integer, a boolean as 0/1, or JSON text. */
type Codec = 'text' | 'integer' | 'boolean' | 'json';
/** A column: the record field it holds (`sub` for the agent's fields) and how. */
interface Column {
  name: string;
  field: string;
  sub?: string;
  codec: Codec;
  /** Enums (type, kind, state…) are short: cut where free text would not be. */
  short: boolean;
}

/** SQL names where the record's would not do (`by` is an SQL keyword; `agent_id` is already prefixed). */
const SQL_NAMES: Record<string, string> = { by: 'by_who', 'agent.agent_id': 'agent_id' };

function codecOf(schema: { type?: string }): Codec {
  if (schema.type === 'string') return 'text';
  if (schema.type === 'integer' || schema.type === 'number') return 'integer';
  if (schema.type === 'boolean') return 'boolean';
  return 'json';
}

/**
 * The stored columns, generated from the record's schema in its property order (the id is the
 * row id; an object's fields are flattened as `<field>_<sub>`). That order is the journal's line
 * format, so it only ever grows at its end.
 */
export const COLUMNS: readonly Column[] = Object.entries(AUDIT_RECORD_SCHEMA.properties).flatMap(([field, schema]): Column[] => {
  if (field === 'id') return [];
  const nested = (schema as { properties?: Record<string, { type?: string; enum?: unknown }> }).properties;
  if (!nested) return [{ name: SQL_NAMES[field] ?? field, field, codec: codecOf(schema as { type?: string }), short: 'enum' in schema }];
  return Object.entries(nested).map(([sub, s]) => ({ name: SQL_NAMES[`${field}.${sub}`] ?? `${field}_${sub}`, field, sub, codec: codecOf(s), short: 'enum' in s }));
});
const COLUMN_NAMES = COLUMNS.map((c) => c.name);
const at = (name: string): number => COLUMN_NAMES.indexOf(name);

/** An entry as the journal holds it: bounded, its agent reduced to the record's fields. */
function recorded(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  const bounded = boundedEntry(entry);
  return bounded.agent ? { ...bounded, agent: pickRecord<RecordAgent>(RECORD_AGENT_SCHEMA, bounded.agent) } : bounded;
}

/**
 * The columns journal lines written before schema 5 hold, in their order (a journal left by a
 * process that died before an upgrade is replayed through it).
 */
const V4_JOURNAL_COLUMNS = [
  'at', 'type', 'kind', 'invocation_id', 'sequence', 'channel', 'op', 'capability_id',
  'agent_kind', 'agent_name', 'agent_version', 'agent_user', 'provider_id', 'interaction', 'state',
  'error_code', 'error_kind', 'message', 'hint', 'detail', 'authorized', 'granted', 'by_who', 'reason',
  'args', 'duration_ms', 'output', 'agent_id',
];

/** NOT NULL columns: what is stored when the entry lacks a usable value. */
const FALLBACK: Record<string, string | number> = { at: 0, type: 'event', kind: 'event' };

type Row = Record<string, string | number | null> & { id: number };

const MIGRATIONS: string[] = [
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
  // v2: the result of a succeeded invocation, so the timeline's detail can show it after restart.
  `ALTER TABLE entries ADD COLUMN output TEXT;`,
  // v3: per journal file, the highest line committed with its rows (replay inserts only above it).
  `CREATE TABLE IF NOT EXISTS journal_marks (file TEXT PRIMARY KEY, seq INTEGER NOT NULL);`,
  // v4: the authenticated agent (agent_name is what the client declared); agent filters use it.
  `ALTER TABLE entries ADD COLUMN agent_id TEXT;
   CREATE INDEX entries_agent_id ON entries(agent_id, id);`,
  // v5: the operator's answer (once/session/always/deny) and the rule an `always` created.
  `ALTER TABLE entries ADD COLUMN decision TEXT;
   ALTER TABLE entries ADD COLUMN rule_id TEXT;`,
  // v6: how a call ended, in one word, on the entry that ends it (filled in for older rows by `fillOutcomes`).
  `ALTER TABLE entries ADD COLUMN outcome TEXT;
   CREATE INDEX entries_outcome ON entries(outcome, id);`,
];

/** The rows that ended a call before the hub stored `outcome`: given the one `outcomeOf` derives. */
function fillOutcomes(db: Db): void {
  const rows = db.prepare(`SELECT id, type, state, error_code, error_kind, invocation_id FROM entries WHERE outcome IS NULL AND (type = 'rejected' OR state IN ('succeeded', 'failed', 'cancelled'))`).all() as Array<OutcomeFacts & { id: number; invocation_id: string | null }>;
  const timedOut = db.prepare(`SELECT 1 FROM entries WHERE invocation_id = ? AND type = 'decision' AND authorized = 'timeout' LIMIT 1`);
  const set = db.prepare('UPDATE entries SET outcome = ? WHERE id = ?');
  for (const r of rows) {
    const decision: OutcomeFacts[] = r.error_code === 'policy_denied' && r.invocation_id && timedOut.get(r.invocation_id) ? [{ type: 'decision', authorized: 'timeout' }] : [];
    const outcome = outcomeOf([...decision, r]);
    if (outcome) set.run(outcome, r.id);
  }
}

/**
 * JSON text of a value, cut to `MAX_ARGS_CHARS` (still valid JSON: a string saying what was cut).
 * Never throws: a value that cannot be serialized is stored as a placeholder saying why.
 */
function boundedJson(value: JsonValue): string {
  const text = jsonText(value);
  return text.length > MAX_ARGS_CHARS ? JSON.stringify(cutJson(text)) : text;
}

/** `value` as it is kept on a record: itself, or when its JSON is too long, a string saying what was cut. */
function capped(value: JsonValue): JsonValue {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'null';
  } catch (e) {
    return notStored(e);
  }
  return text.length > MAX_ARGS_CHARS ? cutJson(text) : value;
}

/** The JSON text of a value; one that cannot be serialized is a placeholder saying why. */
function jsonText(value: JsonValue): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (e) {
    return JSON.stringify(notStored(e));
  }
}

const notStored = (e: unknown): string => `<not stored: ${cut(String((e as Error)?.message ?? e), 200)}>`;

const cutJson = (text: string): string => `${text.slice(0, MAX_ARGS_CHARS)}… (cut, ${text.length} chars)`;

/** Whether a value holds a string too long to store (most outputs do not: no copy is made then). */
function hasLongString(value: JsonValue): boolean {
  if (typeof value === 'string') return value.length > MAX_OUTPUT_STRING;
  if (Array.isArray(value)) return value.some(hasLongString);
  if (value && typeof value === 'object') {
    for (const k in value) if (hasLongString(value[k]!)) return true;
  }
  return false;
}

/** An output with long strings (base64 screenshots, big captures) replaced by what they were. */
function summarizeOutput(value: JsonValue): JsonValue {
  return hasLongString(value) ? summarized(value) : value;
}

function summarized(value: JsonValue): JsonValue {
  if (typeof value === 'string') return value.length > MAX_OUTPUT_STRING ? `${value.slice(0, 200)}… (${value.length} chars, not stored)` : value;
  if (Array.isArray(value)) return value.map(summarized);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, summarized(v)]));
  return value;
}

/**
 * A text column bounded to `max` characters (anything that is not a string is stored as null).
 * The default is a backstop above every limit of `boundedEntry` (whose cut text it keeps whole).
 */
function text(value: unknown, max = MAX_TEXT_CHARS + 64): string | null {
  return typeof value === 'string' ? cut(value, max) : null;
}

/**
 * The entry as it is stored and streamed: text fields, client identity, args and output bounded
 * (nesting first, so nothing below recurses deeper than `MAX_DEPTH`). The entry itself when it is
 * already within bounds (the usual case: no copy).
 */
export function boundedEntry(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  let out = entry;
  const set = <K extends keyof AuditEntry>(k: K, v: AuditEntry[K]): void => {
    if (out === entry) out = { ...entry };
    (out as AuditEntry)[k] = v;
  };
  for (const [k, max] of TEXT_LIMITS) {
    const v = entry[k];
    if (typeof v === 'string' && v.length > max) set(k, cut(v, max));
  }
  const agent = entry.agent;
  const long = (v: string | undefined): boolean => typeof v === 'string' && v.length > MAX_CLIENT_CHARS;
  if (agent && (long(agent.name) || long(agent.version) || long(agent.user) || long(agent.session))) {
    const bound = (v: string | undefined): string | undefined => (v === undefined ? v : cut(v, MAX_CLIENT_CHARS));
    set('agent', { ...agent, name: bound(agent.name)!, ...(agent.version !== undefined ? { version: bound(agent.version) } : {}), ...(agent.user !== undefined ? { user: bound(agent.user) } : {}), ...(agent.session !== undefined ? { session: bound(agent.session) } : {}) });
  }
  if (entry.args !== undefined) {
    const args = nestsDeeperThan(entry.args, MAX_DEPTH) ? deepPlaceholder() : capped(entry.args);
    if (args !== entry.args) set('args', args);
  }
  if (entry.output !== undefined) {
    const output = nestsDeeperThan(entry.output, MAX_DEPTH) ? deepPlaceholder() : capped(summarizeOutput(entry.output));
    if (output !== entry.output) set('output', output);
  }
  return out;
}

/** Text fields of an entry and the longest each is kept. */
const TEXT_LIMITS: Array<[keyof AuditEntry & ('channel' | 'op' | 'message' | 'hint' | 'detail' | 'reason' | 'by' | 'invocation_id' | 'capability_id' | 'provider_id' | 'authorized' | 'error_code' | 'error_kind' | 'rule_id'), number]> = [
  ['channel', MAX_CHANNEL_CHARS],
  ['op', MAX_OP_CHARS],
  ['message', MAX_TEXT_CHARS],
  ['hint', MAX_TEXT_CHARS],
  ['detail', MAX_TEXT_CHARS],
  ['reason', MAX_TEXT_CHARS],
  ['by', MAX_CLIENT_CHARS],
  ['invocation_id', MAX_CLIENT_CHARS],
  ['capability_id', MAX_CLIENT_CHARS],
  ['provider_id', MAX_CLIENT_CHARS],
  ['authorized', MAX_CLIENT_CHARS],
  ['error_code', MAX_CLIENT_CHARS],
  ['error_kind', MAX_CLIENT_CHARS],
  ['rule_id', MAX_CLIENT_CHARS],
];

/**
 * The (bounded) entry's column values in `COLUMNS` order: what is inserted, and what the journal
 * holds. Every string is made well-formed (lone surrogates, which agents may send in any JSON
 * string, become U+FFFD), so every stored byte is valid UTF-8; JSON cells carry them as `\udxxx`
 * escapes (also where a cut split a pair) and are re-encoded. One pass: this runs for every row
 * of every call before its reply.
 */
function toRow(entry: Omit<AuditEntry, 'id'>): JournalRow {
  const row: JournalRow = new Array<string | number | null>(COLUMNS.length);
  for (let i = 0; i < COLUMNS.length; i++) {
    const c = COLUMNS[i]!;
    let v: unknown;
    if (c.sub === undefined) v = (entry as Record<string, unknown>)[c.field];
    else {
      const holder = (entry as Record<string, unknown>)[c.field];
      v = holder && typeof holder === 'object' ? (holder as Record<string, unknown>)[c.sub] : undefined;
    }
    let cell: string | number | null;
    if (c.codec === 'json') {
      cell = v === undefined ? null : boundedJson(v as JsonValue);
      if (cell !== null && cell.includes('\\ud')) cell = JSON.stringify(JSON.parse(cell, wellFormedJson));
    } else if (c.codec === 'boolean') cell = typeof v === 'boolean' ? (v ? 1 : 0) : null;
    else if (c.codec === 'integer') cell = typeof v === 'number' && Number.isFinite(v) ? v : null;
    else {
      cell = c.short ? text(v, MAX_OP_CHARS) : text(v);
      if (cell !== null) cell = wellFormed(cell);
    }
    row[i] = cell ?? FALLBACK[c.name] ?? null;
  }
  return row;
}

function wellFormedJson(_key: string, x: unknown): unknown {
  if (typeof x === 'string') return wellFormed(x);
  if (x && typeof x === 'object' && !Array.isArray(x)) return Object.fromEntries(Object.entries(x).map(([k, v]) => [wellFormed(k), v]));
  return x;
}

/** The row stored instead of one SQLite refused: when and what it was, and why it is not there. */
function placeholderRow(entry: Omit<AuditEntry, 'id'>, error: unknown): JournalRow {
  const row: JournalRow = COLUMNS.map(() => null);
  row[at('at')] = typeof entry.at === 'number' && Number.isFinite(entry.at) ? entry.at : 0;
  row[at('type')] = text(entry.type, MAX_OP_CHARS) ?? 'event';
  row[at('kind')] = text(entry.kind, MAX_OP_CHARS) ?? 'event';
  row[at('invocation_id')] = text(entry.invocation_id, MAX_CLIENT_CHARS);
  row[at('state')] = text(entry.state, MAX_OP_CHARS);
  row[at('message')] = `<not stored: ${cut(String((error as Error)?.message ?? error), 200)}>`;
  return row;
}

function fromRow(row: Row): AuditEntry {
  const e: Record<string, unknown> = { id: row.id };
  for (const c of COLUMNS) {
    const v = row[c.name];
    if (v === null || v === undefined) continue;
    let value: unknown;
    if (c.codec === 'json') {
      try {
        value = JSON.parse(String(v)) as JsonValue;
      } catch {
        value = String(v);
      }
    } else if (c.codec === 'boolean') value = v === 1;
    else if (c.codec === 'integer') value = Number(v);
    else value = String(v);
    if (c.sub === undefined) e[c.field] = value;
    else ((e[c.field] ??= {}) as Record<string, unknown>)[c.sub] = value;
  }
  // Rows whose agent lost its name (a placeholder) carry no agent.
  if (e.agent && (e.agent as { name?: unknown }).name === undefined) delete e.agent;
  return e as unknown as AuditEntry;
}

/**
 * A journaled row as inserted, whatever the line held (a damaged file cannot break the insert).
 * A line from before schema 5 is in that schema's column order; later ones may be shorter than
 * `COLUMNS` (it only ever grows at its end).
 */
function journaledRow(row: unknown): JournalRow {
  const r = Array.isArray(row) ? (row as unknown[]) : [];
  const cell = (i: number): string | number | null => (i >= 0 && (typeof r[i] === 'string' || typeof r[i] === 'number') ? (r[i] as string | number) : null);
  if (r.length <= V4_JOURNAL_COLUMNS.length) return COLUMN_NAMES.map((name) => cell(V4_JOURNAL_COLUMNS.indexOf(name)));
  return COLUMNS.map((_, i) => cell(i));
}

/** The SQLite-backed audit store. */
export class AuditStore {
  readonly path: string;
  #db: Db;
  #insert: Statement;
  #setMark: Statement;
  #markOf: Statement;
  #allMarks: Statement;
  #dropMark: Statement;
  #insertMany: (entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => AuditEntry[];
  #journal: AuditJournal;
  /** Why the last write failed (journal or commit); cleared by the next commit that succeeds. */
  #failure: string | undefined;
  /** Told when `failure()` changes (the panel shows it). */
  onFailureChange: ((failure: string | undefined) => void) | undefined;
  #timer: ReturnType<typeof setInterval>;
  #closed = false;
  /** The last integrity check. */
  #checked: { at: number; damage?: string } | undefined;

  constructor(path: string) {
    this.path = path;
    // The audit holds read output: private from birth, and tightened when an older run left it open.
    createPrivate(path);
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    tightenFiles([path, `${path}-wal`, `${path}-shm`]);
    this.#db.pragma('synchronous = NORMAL');
    // Another process (CLI beside a running hub) may hold the write lock briefly.
    this.#db.pragma('busy_timeout = 5000');
    // Checkpoints (which fsync) run on a timer instead of inside a call's commit; see #checkpoint.
    this.#db.pragma('wal_autocheckpoint = 0');
    this.#migrate();
    this.#insert = this.#db.prepare(`INSERT INTO entries (${COLUMN_NAMES.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`);
    this.#setMark = this.#db.prepare('INSERT INTO journal_marks (file, seq) VALUES (?, ?) ON CONFLICT(file) DO UPDATE SET seq = excluded.seq');
    this.#markOf = this.#db.prepare('SELECT seq FROM journal_marks WHERE file = ?');
    this.#allMarks = this.#db.prepare('SELECT file FROM journal_marks');
    this.#dropMark = this.#db.prepare('DELETE FROM journal_marks WHERE file = ?');
    this.#insertMany = this.#db.transaction((entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => {
      const stored = entries.map((e) => this.#appendContained(e));
      if (mark !== undefined && seq !== undefined) this.#setMark.run(mark, seq);
      return stored;
    });
    this.#journal = new AuditJournal(journalDir(path));
    try {
      this.replayJournals();
    } catch {
      // Busy (another process holds the write lock): the next tick tries again.
    }
    this.#timer = setInterval(() => this.#tick(), CHECKPOINT_EVERY_MS);
    this.#timer.unref?.();
  }

  #migrate(): void {
    // IMMEDIATE takes the write lock first, so two processes opening a fresh file (a CLI beside a
    // starting hub) cannot both create the tables; the version is re-read under the lock.
    this.#db
      .transaction(() => {
        const version = Number(this.#db.pragma('user_version', { simple: true }));
        if (version > AUDIT_SCHEMA_VERSION) {
          throw new Error(`${this.path} was written by a newer Uplink (schema ${version}) — hint: upgrade Uplink or move the file away`);
        }
        for (let v = version; v < AUDIT_SCHEMA_VERSION; v++) {
          this.#db.exec(MIGRATIONS[v]!);
          if (v + 1 === 6) fillOutcomes(this.#db);
          this.#db.pragma(`user_version = ${v + 1}`);
        }
      })
      .immediate();
  }

  /** Appends one entry (synchronous=NORMAL) and returns it, bounded as stored, with its id. */
  append(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    const bounded = boundedEntry(entry);
    const info = this.#insert.run(toRow(bounded));
    return { ...bounded, id: Number(info.lastInsertRowid) };
  }

  /**
   * Appends one entry; one SQLite refuses is stored as a placeholder saying why, so one bad row
   * never holds back a batch. Throws only when the placeholder fails too (the store is failing).
   */
  #appendContained(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    try {
      return this.append(entry);
    } catch (e) {
      const row = placeholderRow(entry, e);
      const info = this.#insert.run(row);
      const invocation = row[at('invocation_id')];
      return { at: row[at('at')] as number, type: entry.type, kind: entry.kind, message: row[at('message')] as string, ...(invocation ? { invocation_id: invocation as string } : {}), id: Number(info.lastInsertRowid) };
    }
  }

  /** Why the audit cannot be written right now (the last write failed), or undefined. */
  failure(): string | undefined {
    return this.#failure;
  }

  #failed(e: unknown): void {
    const err = e as NodeJS.ErrnoException;
    const code = typeof err?.code === 'string' ? `${err.code}: ` : '';
    const message = String(err?.message ?? e).replace(/\s+/g, ' ');
    this.#setFailure(cut(message.startsWith(code) ? message : `${code}${message}`, 300));
  }

  #setFailure(failure: string | undefined): void {
    if (failure === this.#failure) return;
    this.#failure = failure;
    try {
      this.onFailureChange?.(failure);
    } catch {
      // A listener's failure must not break a write.
    }
  }

  /**
   * Writes entries to this process's journal (one write, no SQLite) and returns the line's seq;
   * they must then be committed with `appendMany(…, seq)`. Throws when the journal cannot be
   * written (the caller commits at once instead). The entries go as they are stored: bounded, and
   * with only the agent's recorded fields (a live agent also carries its session and where it
   * runs); their rows are built when they commit, off the reply's path.
   */
  journal(entries: Array<Omit<AuditEntry, 'id'>>): number {
    try {
      return this.#journal.append(entries.map(recorded));
    } catch (e) {
      this.#failed(e);
      throw e;
    }
  }

  /**
   * Appends many entries in one transaction (one WAL commit). With `durable`, the commit is
   * fsynced (synchronous=FULL): used when a decision is in the batch, before it takes effect.
   * `journaled` is the seq of the last journal line whose entries are all in this batch; the
   * commit records it, so a replay never inserts them twice. If such a commit fails, the
   * journal keeps them for a later replay (they must not be retried by the caller).
   */
  appendMany(entries: Array<Omit<AuditEntry, 'id'>>, durable = false, journaled?: number): AuditEntry[] {
    if (durable) this.#db.pragma('synchronous = FULL');
    try {
      const stored = this.#insertMany(entries, journaled === undefined ? undefined : this.#journal.name, journaled);
      this.#setFailure(undefined);
      if (journaled !== undefined) this.#journal.committed(journaled);
      return stored;
    } catch (e) {
      this.#failed(e);
      if (journaled !== undefined) this.#journal.retire();
      throw e;
    } finally {
      if (durable) this.#db.pragma('synchronous = NORMAL');
    }
  }

  /**
   * Inserts what journals of gone processes (and this one's retired files) hold above their
   * marks, then deletes them. The file is read under the write lock and its mark kept until it
   * is deleted, so two processes replaying at once insert each line once. Returns rows inserted.
   */
  replayJournals(): number {
    let inserted = 0;
    for (const name of this.#journal.orphans()) {
      let wrote = false;
      try {
        const done = this.#db
          .transaction(() => {
            const records = this.#journal.read(name);
            if (!records) return false;
            const row = this.#markOf.get(name) as { seq: number } | undefined;
            const mark = row?.seq ?? 0;
            let top = mark;
            for (const rec of records) {
              if (rec.seq <= mark) continue;
              for (const r of rec.entries ?? rec.rows ?? []) {
                try {
                  this.#insert.run(rec.entries ? toRow(boundedEntry(r as Omit<AuditEntry, 'id'>)) : journaledRow(r));
                  inserted++;
                } catch {
                  // A row SQLite refuses (it failed the original commit too) must not hold back the rest.
                }
              }
              top = Math.max(top, rec.seq);
            }
            if (top > mark) {
              this.#setMark.run(name, top);
              wrote = true;
            }
            return true;
          })
          .immediate();
        if (done) this.#journal.remove(name);
        this.#journal.replayed(name);
        // A replay that wrote is a commit that succeeded: the store can be written again.
        if (wrote) this.#setFailure(undefined);
      } catch {
        // Busy or unreadable: the next open or tick tries again.
      }
    }
    // Marks of files that are gone (removed above, or by another process) are no longer needed.
    // Marks are read before the directory: a file exists before its first mark and is deleted
    // before its mark, and names are never reused, so a mark without a file is stale.
    const marks = this.#allMarks.all() as Array<{ file: string }>;
    const present = this.#journal.files();
    for (const { file } of marks) if (!present.has(file)) this.#dropMark.run(file);
    return inserted;
  }

  /** Appends one entry fsynced to disk (synchronous=FULL). */
  appendDurable(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    return this.appendMany([entry], true)[0]!;
  }

  /** Records that a standing rule approved a request. */
  touchRule(ruleId: string, at: number): void {
    this.#db
      .prepare('INSERT INTO rule_usage (rule_id, last_used_at, uses) VALUES (?, ?, 1) ON CONFLICT(rule_id) DO UPDATE SET last_used_at = excluded.last_used_at, uses = uses + 1')
      .run(ruleId, at);
  }

  /** Usage of every rule that was ever used. */
  ruleUsage(): Map<string, { last_used_at: number; uses: number }> {
    const rows = this.#db.prepare('SELECT rule_id, last_used_at, uses FROM rule_usage').all() as Array<{ rule_id: string; last_used_at: number; uses: number }>;
    return new Map(rows.map((r) => [r.rule_id, { last_used_at: r.last_used_at, uses: r.uses }]));
  }

  /** Reads entries with filters; `after` pages forwards (oldest first), otherwise backwards from `before`. */
  query(q: AuditQuery = {}): AuditPage {
    const where: string[] = [];
    const params: Record<string, string | number> = {};
    const eq = (col: string, key: string, value: string | undefined): void => {
      if (value === undefined) return;
      where.push(`${col} = @${key}`);
      params[key] = value;
    };
    eq('channel', 'channel', q.channel);
    eq('op', 'op', q.op);
    eq('agent_id', 'agent', q.agent);
    eq('state', 'state', q.state);
    eq('outcome', 'outcome', q.outcome);
    eq('type', 'type', q.type);
    eq('invocation_id', 'invocation_id', q.invocation_id);
    if (q.text) {
      where.push(`(channel LIKE @text ESCAPE '\\' OR op LIKE @text ESCAPE '\\' OR agent_id LIKE @text ESCAPE '\\' OR agent_name LIKE @text ESCAPE '\\' OR message LIKE @text ESCAPE '\\' OR reason LIKE @text ESCAPE '\\' OR args LIKE @text ESCAPE '\\' OR invocation_id LIKE @text ESCAPE '\\')`);
      params.text = `%${q.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    }
    const forward = q.after !== undefined;
    if (forward) {
      where.push('id > @after');
      params.after = q.after!;
    } else if (q.before !== undefined) {
      where.push('id < @before');
      params.before = q.before;
    }
    const limit = Math.max(1, Math.min(1000, Math.floor(q.limit ?? 200)));
    const sql = `SELECT * FROM entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${forward ? 'ASC' : 'DESC'} LIMIT ${limit + 1}`;
    const rows = this.#db.prepare(sql).all(params) as Row[];
    const more = rows.length > limit;
    const entries = rows.slice(0, limit).map(fromRow);
    const page: AuditPage = { entries };
    const last = entries[entries.length - 1];
    if (forward) page.next_cursor = last ? last.id : q.after;
    else if (more && last) page.next_cursor = last.id;
    return page;
  }

  /**
   * Damage in the file (`PRAGMA quick_check`: every page and index, without the slow cross-checks;
   * a fraction of a second for hundreds of MB), or undefined when it is sound. Run at most every
   * INTEGRITY_EVERY_MS; between runs the last answer stands.
   */
  damage(): string | undefined {
    const now = Date.now();
    if (this.#checked && now - this.#checked.at < INTEGRITY_EVERY_MS) return this.#checked.damage;
    let damage: string | undefined;
    try {
      const rows = this.#db.pragma('quick_check(10)') as Array<Record<string, unknown>>;
      const problems = rows.map((r) => String(Object.values(r)[0])).filter((t) => t !== 'ok');
      if (problems.length) damage = `the integrity check of ${this.path} failed: ${cut(problems.join('; '), 1000)}`;
    } catch (e) {
      damage = `the integrity check of ${this.path} failed: ${cut(String((e as Error)?.message ?? e), 1000)}`;
    }
    this.#checked = { at: now, ...(damage ? { damage } : {}) };
    return damage;
  }

  /** The id of the newest entry (0 when empty). */
  lastId(): number {
    const row = this.#db.prepare('SELECT MAX(id) AS id FROM entries').get() as { id: number | null };
    return row.id ?? 0;
  }

  #tick(): void {
    this.checkpoint();
    if (this.#closed) return;
    try {
      this.replayJournals();
    } catch {
      // Busy: the next tick tries again.
    }
  }

  /** Moves WAL frames into the database without waiting for readers (other processes). */
  checkpoint(): void {
    if (this.#closed) return;
    try {
      this.#db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy (another process checkpointing): the next tick tries again.
    }
  }

  /** Closes the database (checkpointing the WAL) and this process's journal (deleted when all of it was committed). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const done = this.#journal.close();
    if (done) {
      this.#journal.remove(done);
      try {
        this.#dropMark.run(done);
      } catch {
        // A stale mark is dropped by the next replay.
      }
    }
    this.#db.close();
  }
}
