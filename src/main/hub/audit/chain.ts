/**
 * The audit's hash chain: every row carries the hash of the row before it (`prev_hash`) and its
 * own (`hash`), so a row deleted, altered or moved breaks the chain where it was.
 *
 * Canonical form of a record: the JSON object of its stored fields — the row's `id` and every
 * column of the record (link.ts's columns excluded) whose value is not NULL — with keys sorted,
 * no whitespace, values as SQLite returns them (strings and numbers, written by JSON.stringify).
 * For these values it is RFC 8785 (JCS). NULL columns are left out, so a column a later version
 * adds (NULL in older rows) leaves older rows' form unchanged.
 *
 *   hash      = hex(sha256(prev_hash + "\n" + canonical))
 *   genesis   = hex(sha256("uplink audit chain v1\n" + audit_id))   (prev_hash of the first row)
 *
 * `audit_id` is a random id the database gets when it is created (or migrated to the chain),
 * kept in `audit_meta`: a database replaced by a fresh one has another genesis.
 *
 * `canonicalRecord` and `linkHash` are the one definition, used by the store as it appends and by
 * verify.ts as it checks.
 */
import * as crypto from 'node:crypto';
import type { Database as Db, RunResult, Statement, Transaction } from 'better-sqlite3';
import { COLUMN_NAMES, COLUMNS, LINK_COLUMNS } from './columns';

/** What the genesis hash is made of, with the audit's id. */
export const GENESIS_PREFIX = 'uplink audit chain v1\n';

const LINK_NAMES = new Set(LINK_COLUMNS.map((c) => c.name));

/** A stored row as SQLite returns it (or as it is about to be inserted). */
export type StoredRow = Readonly<Record<string, unknown>>;

/** Per list of column names (a constant of its caller): the positions to write, by sorted name, each name quoted. */
const ORDERS = new WeakMap<readonly string[], Array<[position: number, quoted: string]>>();

/**
 * The canonical form of a stored row given as its column names and its values, in the same order
 * (see the top of this file). `names` is best a constant array: its sorted order is kept per array.
 */
export function canonicalCells(names: readonly string[], cells: readonly unknown[]): string {
  let order = ORDERS.get(names);
  if (!order) {
    order = names
      .map((name, i): [string, number] => [name, i])
      .filter(([name]) => !LINK_NAMES.has(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, i]): [number, string] => [i, `${JSON.stringify(name)}:`]);
    ORDERS.set(names, order);
  }
  let out = '{';
  for (const [i, quoted] of order) {
    const v = cells[i];
    if (v === null || v === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${quoted}${jsonValue(v)}`;
  }
  return `${out}}`;
}

/** What JSON.stringify escapes in a string (a surrogate only when alone; any one takes the slow path). */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify's text of a cell, without its cost for the plain strings and numbers most cells are. */
function jsonValue(v: unknown): string {
  if (typeof v === 'string') return ESCAPED.test(v) ? JSON.stringify(v) : `"${v}"`;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return JSON.stringify(v);
}

/** The canonical form of a stored row as an object (what `SELECT *` returns). */
export function canonicalRecord(row: StoredRow): string {
  return canonicalCells(Object.keys(row), Object.values(row));
}

/** Hex sha256 of a string's UTF-8: one-shot `crypto.hash` (a third of `createHash`'s cost per row) where Node has it. */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text) : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** The hash of a record that follows `prev`. */
export function linkHash(prev: string, canonical: string): string {
  return sha256(`${prev}\n${canonical}`);
}

/** The `prev_hash` of the first record of the audit with this id. */
export function genesisHash(auditId: string): string {
  return sha256(`${GENESIS_PREFIX}${auditId}`);
}

/** The audit's id, or undefined in a database from before the chain. */
export function auditIdOf(db: Db): string | undefined {
  try {
    const row = db.prepare("SELECT value FROM audit_meta WHERE key = 'audit_id'").get() as { value: string } | undefined;
    return row?.value;
  } catch {
    return undefined;
  }
}

/** The tables the chain adds beside `entries` (the migration's SQL). */
export const CHAIN_TABLES_SQL = [
  'CREATE TABLE audit_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);',
  'CREATE TABLE audit_checkpoints (seq INTEGER PRIMARY KEY, count INTEGER NOT NULL, head TEXT NOT NULL, at INTEGER NOT NULL, last_id INTEGER NOT NULL, sig TEXT NOT NULL);',
].join('\n');

/**
 * The migration to the chain: gives the database its id and chains the rows written before it,
 * oldest first, as they stand (the chain proves nothing about what happened to them before).
 */
export function chainExisting(db: Db): void {
  const auditId = crypto.randomUUID();
  db.prepare("INSERT INTO audit_meta (key, value) VALUES ('audit_id', ?)").run(auditId);
  const page = db.prepare('SELECT * FROM entries WHERE id > ? ORDER BY id LIMIT 1000').raw(true);
  const names = page.columns().map((c) => c.name);
  const iId = names.indexOf('id');
  const set = db.prepare('UPDATE entries SET prev_hash = ?, hash = ? WHERE id = ?');
  let prev = genesisHash(auditId);
  let after = 0;
  for (;;) {
    const rows = page.all(after) as unknown[][];
    if (rows.length === 0) break;
    for (const cells of rows) {
      const hash = linkHash(prev, canonicalCells(names, cells));
      after = Number(cells[iId]);
      set.run(prev, hash, after);
      prev = hash;
    }
  }
}

/** The names of what an append hashes: the id it gets, then the row's cells. */
const APPEND_NAMES: readonly string[] = ['id', ...COLUMN_NAMES];

/** Columns stored as text: a number there (or a string in a number's column) is converted by SQLite. */
const TEXTUAL = COLUMNS.map((c) => c.codec === 'text' || c.codec === 'json');
/** A lone surrogate is stored as U+FFFD: such a string reads back otherwise than it was bound. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Inserts rows (cells in `COLUMNS` order) linked to the newest row. The head is read in the same
 * write transaction as the insert, so two processes (a CLI beside the hub) never link to the same
 * row: a caller already in a transaction must hold the write lock (BEGIN IMMEDIATE).
 * With `enabled: false` (the benchmark's baseline only) rows are inserted unlinked.
 */
export class ChainedInsert {
  #db: Db;
  #enabled: boolean;
  #plain: Statement;
  #linked: Statement;
  #head: Statement;
  #readBack: Statement;
  #setLink: Statement;
  #genesis: string | undefined;
  #alone: (row: readonly unknown[]) => RunResult;
  /** Inside one of `transaction`'s: the row the last insert made, the next one's head (read once per transaction). */
  #last: { id: number; hash: string } | undefined;
  #caching = false;

  constructor(db: Db, options: { enabled?: boolean } = {}) {
    this.#db = db;
    this.#enabled = options.enabled !== false;
    const cells = COLUMNS.map(() => '?').join(', ');
    this.#plain = db.prepare(`INSERT INTO entries (${COLUMN_NAMES.join(', ')}) VALUES (${cells})`);
    this.#linked = db.prepare(`INSERT INTO entries (id, ${COLUMN_NAMES.join(', ')}, prev_hash, hash) VALUES (?, ${cells}, ?, ?)`);
    this.#head = db.prepare('SELECT id, hash FROM entries ORDER BY id DESC LIMIT 1');
    this.#readBack = db.prepare('SELECT * FROM entries WHERE id = ?');
    this.#setLink = db.prepare('UPDATE entries SET prev_hash = ?, hash = ? WHERE id = ?');
    this.#alone = this.transaction((row: readonly unknown[]) => this.#link(row)).immediate;
  }

  /**
   * A write transaction (run it `.immediate`) whose rows read the chain's head once, at the
   * first, and link each following row to the one inserted before it. Nothing else may insert into
   * the table inside it; the remembered head is dropped when it ends, committed or rolled back.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Transaction<(...args: A) => R> {
    return this.#db.transaction((...args: A): R => {
      this.#last = undefined;
      this.#caching = true;
      try {
        return fn(...args);
      } finally {
        this.#caching = false;
        this.#last = undefined;
      }
    });
  }

  /** Inserts one row; the result is the statement's (its `lastInsertRowid` is the row's id). */
  run(row: readonly unknown[]): RunResult {
    if (!this.#enabled) return this.#plain.run(row);
    return this.#db.inTransaction ? this.#link(row) : this.#alone(row);
  }

  #link(row: readonly unknown[]): RunResult {
    this.#genesis ??= genesisHash(auditIdOf(this.#db) ?? '');
    const head = this.#last ?? (this.#head.get() as { id: number; hash: string | null } | undefined);
    // A head without a hash is a break verify reports; linking to '' keeps it visible there.
    const prev = head ? (head.hash ?? '') : this.#genesis;
    const id = (head?.id ?? 0) + 1;
    // Forgotten until this row is in: a row that fails leaves the head to be read again.
    this.#last = undefined;
    if (!row.every((v, i) => v === null || (typeof v === 'string' ? TEXTUAL[i] && !LONE_SURROGATE.test(v) : !TEXTUAL[i]))) {
      // SQLite converts the cell on the way in: link what it stored (only damaged journal lines get here).
      const info = this.#plain.run(row);
      const stored = this.#readBack.get(info.lastInsertRowid) as StoredRow;
      const hash = linkHash(prev, canonicalRecord(stored));
      this.#setLink.run(prev, hash, info.lastInsertRowid);
      if (this.#caching) this.#last = { id: Number(info.lastInsertRowid), hash };
      return info;
    }
    const hash = linkHash(prev, canonicalCells(APPEND_NAMES, [id, ...row]));
    const info = this.#linked.run(id, ...row, prev, hash);
    if (this.#caching) this.#last = { id, hash };
    return info;
  }
}
