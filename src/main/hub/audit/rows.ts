/**
 * Audit entries as table rows and back: one cell per column of `COLUMNS` (the record's fields,
 * the agent's flattened), the same arrays the journal held before it held entries.
 */
import type { JsonValue } from '../../kernel';
import { wellFormed } from '../../../shared/escape';
import type { AuditEntry } from '../types';
import { cut, MAX_CLIENT_CHARS, MAX_OP_CHARS, MAX_TEXT_CHARS } from '../bounds';
import { boundedJson } from './bounded';
import { at, COLUMN_NAMES, COLUMNS, FALLBACK } from './columns';
import type { JournalRow } from './journal';
import { columnsAt } from './migrations';

/** A row as SQLite returns it. */
export type Row = Record<string, string | number | null> & { id: number };

/** The columns journal lines written before schema 5 hold, in their order: those of a version-4 table. */
const V4_JOURNAL_COLUMNS = columnsAt(4);

/**
 * A text column bounded to `max` characters (anything that is not a string is stored as null).
 * The default is a backstop above every limit of `boundedEntry` (whose cut text it keeps whole).
 */
function text(value: unknown, max = MAX_TEXT_CHARS + 64): string | null {
  return typeof value === 'string' ? cut(value, max) : null;
}

/**
 * The (bounded) entry's column values in `COLUMNS` order: what is inserted, and what the journal
 * holds. Every string is made well-formed (lone surrogates, which agents may send in any JSON
 * string, become U+FFFD), so every stored byte is valid UTF-8; JSON cells carry them as `\udxxx`
 * escapes (also where a cut split a pair) and are re-encoded. One pass: this runs for every row
 * of every call before its reply.
 */
export function toRow(entry: Omit<AuditEntry, 'id'>): JournalRow {
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
export function placeholderRow(entry: Omit<AuditEntry, 'id'>, error: unknown): JournalRow {
  const row: JournalRow = COLUMNS.map(() => null);
  row[at('at')] = typeof entry.at === 'number' && Number.isFinite(entry.at) ? entry.at : 0;
  row[at('type')] = text(entry.type, MAX_OP_CHARS) ?? 'event';
  row[at('kind')] = text(entry.kind, MAX_OP_CHARS) ?? 'event';
  row[at('invocation_id')] = text(entry.invocation_id, MAX_CLIENT_CHARS);
  row[at('state')] = text(entry.state, MAX_OP_CHARS);
  row[at('message')] = `<not stored: ${cut(String((error as Error)?.message ?? error), 200)}>`;
  return row;
}

export function fromRow(row: Row): AuditEntry {
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
export function journaledRow(row: unknown): JournalRow {
  const r = Array.isArray(row) ? (row as unknown[]) : [];
  const cell = (i: number): string | number | null => (i >= 0 && (typeof r[i] === 'string' || typeof r[i] === 'number') ? (r[i] as string | number) : null);
  if (r.length <= V4_JOURNAL_COLUMNS.length) return COLUMN_NAMES.map((name) => cell(V4_JOURNAL_COLUMNS.indexOf(name)));
  return COLUMNS.map((_, i) => cell(i));
}
