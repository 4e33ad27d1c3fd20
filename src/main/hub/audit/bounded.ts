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
 * Entries `bound` changed or had to measure (serialize): an entry is bounded on its way into the
 * queue, the journal and the table, and these are not bounded again. Entries are never changed in
 * place once recorded (a change makes a new object), so one in here stays bounded.
 */
const BOUNDED = new WeakSet<object>();
/** An agent as recorded, per agent object (the three entries of a call share one). */
const RECORDED_AGENTS = new WeakMap<object, RecordAgent>();

/** An entry as the journal holds it: bounded, its agent reduced to the record's fields. */
export function recorded(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  const bounded = boundedEntry(entry);
  if (!bounded.agent) return bounded;
  let agent = RECORDED_AGENTS.get(bounded.agent);
  if (!agent) RECORDED_AGENTS.set(bounded.agent, (agent = recordedAgent(bounded.agent)));
  // An agent that has only the record's fields is recorded as it is: no copy of the entry.
  return agent === bounded.agent ? bounded : { ...bounded, agent };
}

/** The agent with only the record's fields: the agent itself when it has no others. */
function recordedAgent(live: NonNullable<AuditEntry['agent']>): RecordAgent {
  const picked = pickRecord<RecordAgent>(RECORD_AGENT_SCHEMA, live);
  const a = live as unknown as Record<string, unknown>;
  const b = picked as unknown as Record<string, unknown>;
  const keys = Object.keys(a);
  const same = keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
  return same ? (live as RecordAgent) : picked;
}

/**
 * An entry read back from a journal, which holds entries as `recorded` left them: already bounded.
 * Bounding it again would cut what was cut once more (a cut text says how long it was, so it is
 * longer than its limit), and a replay would store something else than the commit it stands in for.
 * The table's own per-cell limit stays the backstop for a line that was tampered with.
 */
export function journaledEntry(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  // A damaged line's non-object is left to fail as it would have.
  if (typeof entry === 'object' && entry !== null) BOUNDED.add(entry);
  return entry;
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
  return BOUNDED.has(entry) ? entry : bound(entry);
}

function bound(entry: Omit<AuditEntry, 'id'>): Omit<AuditEntry, 'id'> {
  let out = entry;
  const set = <K extends keyof AuditEntry>(k: K, v: AuditEntry[K]): void => {
    if (out === entry) out = { ...entry };
    (out as AuditEntry)[k] = v;
  };
  // Over the entry's own fields (a dozen or so), each looked up among the limited ones.
  for (const k in entry) {
    const max = TEXT_LIMIT[k];
    if (max === undefined) continue;
    const v = entry[k as TextField];
    if (typeof v === 'string' && v.length > max) set(k as TextField, cut(v, max));
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
  // Measured (serialized) only when one walk cannot tell that they fit.
  let measured = false;
  if (entry.args !== undefined && !fits(entry.args, Infinity)) {
    measured = true;
    const args = nestsDeeperThan(entry.args, MAX_DEPTH) ? deepPlaceholder() : capped(entry.args);
    if (args !== entry.args) set('args', args);
  }
  if (entry.output !== undefined && !fits(entry.output, MAX_OUTPUT_STRING)) {
    measured = true;
    const output = nestsDeeperThan(entry.output, MAX_DEPTH) ? deepPlaceholder() : capped(summarizeOutput(entry.output));
    if (output !== entry.output) set('output', output);
  }
  // A cut field is longer than its limit (it says how long it was) and a cut output is a long
  // string: bounding such an entry again would cut it again. It is remembered as bounded, as is
  // one that had to be measured. One that fit at a glance fits again at the next.
  if (measured || out !== entry) BOUNDED.add(out);
  return out;
}

/**
 * Whether a value certainly needs no bounding, found in one walk without serializing it: plain
 * JSON, no deeper than `MAX_DEPTH`, no string longer than `longString`, and JSON text that cannot
 * be longer than `MAX_ARGS_CHARS` (counted as if every character needed a six-character escape).
 * False says only "look closer": the exact steps then decide.
 */
function fits(value: JsonValue, longString: number): boolean {
  let room = MAX_ARGS_CHARS;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    switch (typeof v) {
      case 'string':
        if (v.length > longString) return false;
        room -= 2 + 6 * v.length;
        break;
      case 'number':
        room -= 24;
        break;
      case 'boolean':
      case 'undefined':
        room -= 5;
        break;
      case 'object': {
        if (v === null) {
          room -= 4;
          break;
        }
        if (depth >= MAX_DEPTH) return false;
        room -= 2;
        // Each item or key costs room before it is queued, so a huge value is given up on early.
        if (Array.isArray(v)) {
          room -= v.length;
          if (room < 0) return false;
          for (const item of v) stack.push([item, depth + 1]);
          break;
        }
        // Anything but a plain object may serialize as something else (toJSON).
        const proto = Object.getPrototypeOf(v) as unknown;
        if (proto !== Object.prototype && proto !== null) return false;
        for (const k in v) {
          room -= 4 + 6 * k.length;
          if (room < 0) return false;
          stack.push([(v as Record<string, unknown>)[k], depth + 1]);
        }
        break;
      }
      default:
        // bigint, function, symbol: the exact steps say what is stored.
        return false;
    }
    if (room < 0) return false;
  }
  return true;
}

/** Text fields of an entry. */
type TextField = keyof AuditEntry &
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
  );

/** The longest each text field of an entry is kept (no prototype: a lookup by any field name is safe). */
const TEXT_LIMIT: { readonly [k: string]: number | undefined } = Object.assign(Object.create(null) as Record<string, number>, {
  channel: MAX_CHANNEL_CHARS,
  op: MAX_OP_CHARS,
  message: MAX_TEXT_CHARS,
  hint: MAX_TEXT_CHARS,
  detail: MAX_TEXT_CHARS,
  reason: MAX_TEXT_CHARS,
  by: MAX_CLIENT_CHARS,
  invocation_id: MAX_CLIENT_CHARS,
  capability_id: MAX_CLIENT_CHARS,
  provider_id: MAX_CLIENT_CHARS,
  authorized: MAX_CLIENT_CHARS,
  error_code: MAX_CLIENT_CHARS,
  error_kind: MAX_CLIENT_CHARS,
  rule_id: MAX_CLIENT_CHARS,
} satisfies Record<TextField, number>);
