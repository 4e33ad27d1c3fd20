/**
 * The audit table's columns, derived from the one declaration of the audit record
 * (`src/shared/audit-record.ts`): one column per field in the record's property order, the agent's
 * fields flattened as `agent_<field>`, the id as the row id. That order is also the journal's line
 * format, so it only ever grows at its end.
 */
import { AuditRecord } from '../../../shared/audit-record';
import { AuditLink } from './link';

/** How a record field is stored: text, integer, a boolean as 0/1, or JSON text. */
export type Codec = 'text' | 'integer' | 'boolean' | 'json';

/** A column: the record field it holds (`sub` for the agent's fields) and how. */
export interface Column {
  name: string;
  field: string;
  sub?: string;
  codec: Codec;
  /** Enums (type, kind, state…) are short: cut where free text would not be. */
  short: boolean;
  /** The record requires the field: the column is NOT NULL. */
  required: boolean;
}

/** SQL names where the record's would not do (`by` is an SQL keyword; `agent_id` is already prefixed). */
const SQL_NAMES: Record<string, string> = { by: 'by_who', 'agent.agent_id': 'agent_id' };

/** NOT NULL columns: what is stored when the entry lacks a usable value (and what older rows get when one is added). */
export const FALLBACK: Record<string, string | number> = { at: 0, type: 'event', kind: 'event' };

type FieldSchema = { type?: string; enum?: unknown; properties?: Record<string, FieldSchema>; required?: readonly string[] };

function codecOf(schema: FieldSchema): Codec {
  if (schema.type === 'string') return 'text';
  if (schema.type === 'integer' || schema.type === 'number') return 'integer';
  if (schema.type === 'boolean') return 'boolean';
  return 'json';
}

const record = AuditRecord as unknown as Required<Pick<FieldSchema, 'properties' | 'required'>>;

export const COLUMNS: readonly Column[] = Object.entries(record.properties).flatMap(([field, schema]): Column[] => {
  if (field === 'id') return [];
  const required = record.required.includes(field);
  if (!schema.properties) return [{ name: SQL_NAMES[field] ?? field, field, codec: codecOf(schema), short: 'enum' in schema, required }];
  // An object's own required fields are not the column's: a row may have no agent at all.
  return Object.entries(schema.properties).map(([sub, s]) => ({
    name: SQL_NAMES[`${field}.${sub}`] ?? `${field}_${sub}`,
    field,
    sub,
    codec: codecOf(s),
    short: 'enum' in s,
    required: false,
  }));
});

export const COLUMN_NAMES = COLUMNS.map((c) => c.name);

/** The chain's columns (link.ts): stored beside the record's, never part of it, nullable. */
export const LINK_COLUMNS: readonly Column[] = Object.entries((AuditLink as unknown as { properties: Record<string, FieldSchema> }).properties).map(
  ([name, schema]) => ({ name, field: name, codec: codecOf(schema), short: false, required: false }),
);

/** The position of a column in a row. */
export const at = (name: string): number => COLUMN_NAMES.indexOf(name);

/** The column's SQL declaration; one added to an existing table needs a default when it is NOT NULL. */
export function columnSql(c: Column, added: boolean): string {
  const type = c.codec === 'text' || c.codec === 'json' ? 'TEXT' : 'INTEGER';
  if (!c.required) return `${c.name} ${type}`;
  const fallback = FALLBACK[c.name];
  if (fallback === undefined) throw new Error(`audit column ${c.name} is required but has no FALLBACK — hint: give it one in src/main/hub/audit/columns.ts`);
  return `${c.name} ${type} NOT NULL${added ? ` DEFAULT ${typeof fallback === 'number' ? fallback : `'${fallback.replace(/'/g, "''")}'`}` : ''}`;
}
