/**
 * An audit entry within bounds, as it is stored, streamed and journaled: text fields, the client's
 * identity, args and output cut to their limits (the audit is a log, not a payload store).
 */
import type { JsonValue } from '../../kernel';
import { pickRecord, RECORD_AGENT_SCHEMA } from '../../../shared/audit-record';
import type { RecordAgent } from '../../../shared/audit-record';
import type { AuditEntry } from '../types';
import { cut, deepPlaceholder, MAX_CHANNEL_CHARS, MAX_CLIENT_CHARS, MAX_DEPTH, MAX_OP_CHARS, MAX_TEXT_CHARS, nestsDeeperThan } from '../bounds';

/** Longest args/output JSON kept per entry; longer is cut. */
const MAX_ARGS_CHARS = 16 * 1024;
/** Longest single string kept inside a stored output (screenshots are summarized, not stored). */
const MAX_OUTPUT_STRING = 2048;

/**
 * Entries `boundedEntry` returned: an entry is bounded on its way into the queue, the journal and
 * the table, and measured (its args and output serialized) only the first time. Entries are never
 * changed in place once recorded (a change makes a new object), so one in here stays bounded.
 */
const BOUNDED = new WeakSet<object>();
/** An agent as recorded, per agent object (the three entries of a call share one). */
const RECORDED_AGENTS = new WeakMap<object, RecordAgent>();

/** An entry as the journal holds it: bounded, its agent reduced to the record's fields. */
export function recorded(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  const bounded = boundedEntry(entry);
  if (!bounded.agent) return bounded;
  let agent = RECORDED_AGENTS.get(bounded.agent);
  if (!agent) RECORDED_AGENTS.set(bounded.agent, (agent = pickRecord<RecordAgent>(RECORD_AGENT_SCHEMA, bounded.agent)));
  return { ...bounded, agent };
}

/**
 * JSON text of a value, cut to `MAX_ARGS_CHARS` (still valid JSON: a string saying what was cut).
 * Never throws: a value that cannot be serialized is stored as a placeholder saying why.
 */
export function boundedJson(value: JsonValue): string {
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
 * The entry as it is stored and streamed: text fields, client identity, args and output bounded
 * (nesting first, so nothing below recurses deeper than `MAX_DEPTH`). The entry itself when it is
 * already within bounds (the usual case: no copy).
 */
export function boundedEntry(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  if (BOUNDED.has(entry)) return entry;
  const out = bound(entry);
  BOUNDED.add(out);
  return out;
}

function bound(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
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
    set('agent', {
      ...agent,
      name: bound(agent.name)!,
      ...(agent.version !== undefined ? { version: bound(agent.version) } : {}),
      ...(agent.user !== undefined ? { user: bound(agent.user) } : {}),
      ...(agent.session !== undefined ? { session: bound(agent.session) } : {}),
    });
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
const TEXT_LIMITS: Array<
  [
    keyof AuditEntry &
      (
        | 'channel'
        | 'op'
        | 'message'
        | 'hint'
        | 'detail'
        | 'reason'
        | 'by'
        | 'invocation_id'
        | 'capability_id'
        | 'provider_id'
        | 'authorized'
        | 'error_code'
        | 'error_kind'
        | 'rule_id'
      ),
    number,
  ]
> = [
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
