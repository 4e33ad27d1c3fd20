/**
 * The audit table's schema versions: which record fields (as columns) and indexes each version
 * added, from which the SQL is generated — the columns' names and types come from the record's one
 * declaration (`columns.ts`). `PRAGMA user_version` holds the version a file is at; opening it runs
 * the steps above that, in order, so a fresh file and an upgraded one end up the same.
 */
import type { Database as Db } from 'better-sqlite3';
import { outcomeOf } from '../../../shared/audit-record';
import type { OutcomeFacts } from '../../../shared/audit-record';
import { CHAIN_TABLES_SQL, chainExisting } from './chain';
import { COLUMNS, columnSql, LINK_COLUMNS } from './columns';

interface Step {
  /** Columns this version added (by their SQL name). */
  columns?: string[];
  /** Indexes this version created: index name → its column (each index also orders by id). */
  indexes?: Record<string, string>;
  /** SQL beside the entries table (other tables). */
  sql?: string;
  /** Fills in what rows from before this version lack. */
  fill?: (db: Db) => void;
}

/**
 * Every version, oldest first; a version's number is its position from 1. The first creates the
 * table with every column no later step names. A new field of the record needs a new step naming
 * it, at the end: opening a file whose table lacks a column says so (see `migrate`).
 */
const HISTORY: Step[] = [
  {
    indexes: { entries_channel: 'channel', entries_op: 'op', entries_agent: 'agent_name', entries_state: 'state', entries_invocation: 'invocation_id' },
    sql: 'CREATE TABLE rule_usage (rule_id TEXT PRIMARY KEY, last_used_at INTEGER NOT NULL, uses INTEGER NOT NULL);',
  },
  // v2: the result of a succeeded invocation, so the timeline's detail can show it after restart.
  { columns: ['output'] },
  // v3: per journal file, the highest line committed with its rows (replay inserts only above it).
  { sql: 'CREATE TABLE IF NOT EXISTS journal_marks (file TEXT PRIMARY KEY, seq INTEGER NOT NULL);' },
  // v4: the authenticated agent (agent_name is what the client declared); agent filters use it.
  { columns: ['agent_id'], indexes: { entries_agent_id: 'agent_id' } },
  // v5: the operator's answer (once/session/always/deny) and the rule an `always` created.
  { columns: ['decision', 'rule_id'] },
  // v6: how a call ended, in one word, on the entry that ends it (filled in for older rows).
  { columns: ['outcome'], indexes: { entries_outcome: 'outcome' }, fill: fillOutcomes },
  // v7: the hash chain (chain.ts): the database's id, each row's link, signed checkpoints. Rows
  // from before it are chained as they stand when the file is migrated.
  { columns: LINK_COLUMNS.map((c) => c.name), sql: CHAIN_TABLES_SQL, fill: chainExisting },
];

/** Bumped by a new step; migrations run from the stored `user_version`. */
export const AUDIT_SCHEMA_VERSION = HISTORY.length;

const byName = new Map([...COLUMNS, ...LINK_COLUMNS].map((c) => [c.name, c]));
const later = new Set(HISTORY.slice(1).flatMap((s) => s.columns ?? []));
for (const name of later)
  if (!byName.has(name)) throw new Error(`audit migration names ${name}, which is no column of the record — hint: name a column of COLUMNS`);

/** The columns each version added, in the order they were added. */
const added: string[][] = HISTORY.map((s, i) => (i === 0 ? COLUMNS.map((c) => c.name).filter((n) => !later.has(n)) : (s.columns ?? [])));

/** The columns a table at `version` has, in the order they were added. */
export const columnsAt = (version: number): string[] => added.slice(0, version).flat();

/** The SQL of one step. */
function stepSql(step: Step, i: number): string {
  const columns = added[i]!.map((n) => columnSql(byName.get(n)!, i > 0));
  const table =
    i === 0 ? [`CREATE TABLE entries (id INTEGER PRIMARY KEY, ${columns.join(', ')});`] : columns.map((c) => `ALTER TABLE entries ADD COLUMN ${c};`);
  const indexes = Object.entries(step.indexes ?? {}).map(([name, column]) => `CREATE INDEX ${name} ON entries(${column}, id);`);
  return [...table, ...indexes, ...(step.sql ? [step.sql] : [])].join('\n');
}

/**
 * Brings the file to AUDIT_SCHEMA_VERSION, or refuses one written by a newer Uplink, then checks
 * that the table holds every column of the record.
 */
export function migrate(db: Db, path: string): void {
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file (a CLI beside a
  // starting hub) cannot both create the tables; the version is re-read under the lock.
  db.transaction(() => {
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version > AUDIT_SCHEMA_VERSION) {
      throw new Error(`${path} was written by a newer Uplink (schema ${version}) — hint: upgrade Uplink or move the file away`);
    }
    for (let v = version; v < AUDIT_SCHEMA_VERSION; v++) {
      db.exec(stepSql(HISTORY[v]!, v));
      HISTORY[v]!.fill?.(db);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
  const present = new Set((db.pragma('table_info(entries)') as Array<{ name: string }>).map((c) => c.name));
  const missing = [...COLUMNS, ...LINK_COLUMNS].filter((c) => !present.has(c.name)).map((c) => c.name);
  if (missing.length) {
    throw new Error(
      `${path}: the audit table has no column ${missing.join(', ')} — hint: the audit record gained a field without a migration; add a step naming it to HISTORY in src/main/hub/audit/migrations.ts`,
    );
  }
}

/** The rows that ended a call before the hub stored `outcome`: given the one `outcomeOf` derives. */
function fillOutcomes(db: Db): void {
  const rows = db
    .prepare(
      `SELECT id, type, state, error_code, error_kind, invocation_id FROM entries WHERE outcome IS NULL AND (type = 'rejected' OR state IN ('succeeded', 'failed', 'cancelled'))`,
    )
    .all() as Array<OutcomeFacts & { id: number; invocation_id: string | null }>;
  const timedOut = db.prepare(`SELECT 1 FROM entries WHERE invocation_id = ? AND type = 'decision' AND authorized = 'timeout' LIMIT 1`);
  const set = db.prepare('UPDATE entries SET outcome = ? WHERE id = ?');
  for (const r of rows) {
    const decision: OutcomeFacts[] =
      r.error_code === 'policy_denied' && r.invocation_id && timedOut.get(r.invocation_id) ? [{ type: 'decision', authorized: 'timeout' }] : [];
    const outcome = outcomeOf([...decision, r]);
    if (outcome) set.run(outcome, r.id);
  }
}
