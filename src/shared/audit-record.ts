/**
 * The audit record, declared once (TypeBox): the hub's `AuditEntry`, the SQLite columns and their
 * migrations, the panel's `TimelineEvent` (and the schema checking it) and `uplink log --json` are
 * all derived from it, with the same field names end to end. Also the one wording of how a call
 * was authorized, used by the panel, `uplink log` and the hub's own messages alike.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { AgentKind, Decision } from './approval';
import { InteractionKind, INVOCATION_STATES, JsonValue, RUNTIME_EVENT_KINDS } from './wire';
import { pickSchema, StringEnum } from './schema';

const str = Type.Optional(Type.String());
const int = Type.Optional(Type.Integer());

/**
 * How a call ended, in one word. `failed`: allowed, then the driver (or its result) failed.
 * `denied`: the operator, a rule or the default policy said no — or the hub stopped before anyone
 * decided (nothing runs without a decision). `timed_out`: the approval's or the call's deadline
 * passed. `cancelled`: the agent cancelled it. `rejected`: refused before it could run (bad args,
 * an unknown op, a driver's precheck, a hub that cannot take calls). `lost`: the hub died (killed,
 * crashed) before the call ended; the next hub of the data directory ends it so (it may have run
 * part-way, or not at all if it was waiting for the operator).
 */
export const OUTCOMES = ['succeeded', 'failed', 'denied', 'timed_out', 'cancelled', 'rejected', 'lost'] as const;
export const Outcome = StringEnum(OUTCOMES);
export type Outcome = Static<typeof Outcome>;

/** Who asked, as recorded (the hub's live identity also has a session and caller, never stored). */
export const RecordAgent = Type.Object({
  kind: AgentKind,
  /** The authenticated agent; absent only on rows recorded before agents authenticated. */
  agent_id: str,
  /** The client's declared name (never trusted), or `uplink-cli` / `operator`. */
  name: Type.String(),
  version: str,
  /** The OS user (CLI) or the operator's name (panel). */
  user: str,
});
/** The agent on a record. */
export type RecordAgent = Static<typeof RecordAgent>;

/**
 * One audit row, as stored, streamed, sent to the panel and printed by `uplink log --json`. The
 * order of its properties is the order of the store's columns and of the journal's positional
 * lines: new properties go at the end, and never into `agent` (its columns sit where `agent` is).
 * Open: a newer hub's extra fields are tolerated (and dropped) by an older one.
 */
export const AuditRecord = Type.Object({
  /** Global and increasing: the store's row id, and every reader's cursor. */
  id: Type.Integer(),
  /** Milliseconds since the epoch. */
  at: Type.Integer(),
  type: StringEnum(['event', 'decision', 'rejected']),
  /** Event kind (`accepted`, `approval_granted`, …), `decision` or `rejected`. */
  kind: StringEnum([...RUNTIME_EVENT_KINDS, 'decision', 'rejected']),
  invocation_id: str,
  sequence: int,
  channel: str,
  op: str,
  capability_id: str,
  agent: Type.Optional(RecordAgent),
  provider_id: str,
  interaction: Type.Optional(InteractionKind),
  /** The invocation's state after this entry; `rejected` for requests that never became one. */
  state: Type.Optional(StringEnum([...INVOCATION_STATES, 'rejected'])),
  error_code: str,
  error_kind: str,
  /** What the agent was told (`error_*`, `message`, `hint`). */
  message: str,
  hint: str,
  /** Operator-only (provider error text). */
  detail: str,
  /** `operator`, `session`, `rule:<id>`, `cli`, `default_policy`, `timeout`, `cancelled`, `closed`. */
  authorized: str,
  granted: Type.Optional(Type.Boolean()),
  by: str,
  reason: str,
  /** The request's args, sensitive fields redacted, capped in size. */
  args: Type.Optional(JsonValue),
  /** For terminal entries: ms since `accepted`. */
  duration_ms: int,
  /** On `succeeded` entries: the result, long strings summarized, capped; never for sensitive calls. */
  output: Type.Optional(JsonValue),
  /** The operator's answer on their decision: `once`, `session`, `always` or `deny`. */
  decision: Type.Optional(Decision),
  /** The standing rule an `always` decision created. */
  rule_id: str,
  /** On the entry that ends a call (its terminal event, or a rejected request): how it ended, in one word. */
  outcome: Type.Optional(Outcome),
});
export type AuditRecord = Static<typeof AuditRecord>;

/** A timeline event: the record without its output (the invocation's detail carries that). */
export const TimelineEvent = Type.Omit(AuditRecord, ['output']);
export type TimelineEvent = Static<typeof TimelineEvent>;

/** The same declarations under the names other modules know them by. */
export const AUDIT_RECORD_SCHEMA = AuditRecord;
export const RECORD_AGENT_SCHEMA = RecordAgent;
export const TIMELINE_EVENT_SCHEMA = TimelineEvent;

/** `schema` without some of its properties (a narrower view of the same record). */
export function omitProperties<S extends { properties: Record<string, unknown> }, K extends keyof S['properties'] & string>(
  schema: S,
  ...keys: K[]
): Omit<S, 'properties'> & { properties: Record<string, unknown> } {
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([k]) => !keys.includes(k as K)));
  return { ...schema, properties };
}

/** `value` with only the properties `schema` declares (nested objects likewise), undefined and null dropped. */
export const pickRecord = pickSchema;

/** What `describeAuthorization` reads from a record. */
export type AuthorizationFacts = Partial<
  Pick<AuditRecord, 'type' | 'kind' | 'invocation_id' | 'authorized' | 'granted' | 'by' | 'reason' | 'decision' | 'rule_id'>
>;

const quoted = (reason: string | undefined): string => (reason ? `: “${reason}”` : '');
const who = (by: string | undefined): string => (by ? ` (${by})` : '');

/**
 * How a call was authorized, in words, from the record that says so (a decision, or the
 * `accepted` entry of a read-only call); `waiting for the operator` on the request of a prompt
 * not yet answered; undefined when the record says nothing about it. A record with
 * `granted: false` is never worded as an approval. The phrase carries the record's `reason` where
 * it is the why (a denial) or the what (an operator's action outside any call); elsewhere the
 * reason only repeats the phrase.
 */
export function describeAuthorization(r: AuthorizationFacts): string | undefined {
  const a = r.authorized;
  if (!a) return r.kind === 'approval_requested' ? 'waiting for the operator' : undefined;
  const denied = r.granted === false;
  // An operator's action (a tier, an agent credential), not an answer to an agent's call.
  if (!r.invocation_id && !r.decision && (a === 'operator' || a === 'cli'))
    return `${a === 'cli' ? 'from the CLI' : 'by the operator'}${who(r.by)}${quoted(r.reason)}`;
  if (a === 'timeout') return 'timed out: the operator did not answer in time';
  if (a === 'cancelled') return 'cancelled while waiting for the operator';
  if (a === 'closed') return 'denied: the hub stopped before the operator decided';
  if (a === 'default_policy') return denied ? `denied by the default policy${quoted(r.reason)}` : 'read-only: no approval needed';
  if (denied) return `denied ${a === 'operator' ? 'by the operator' : a === 'cli' ? 'from the CLI' : `(${a})`}${who(r.by)}${quoted(r.reason)}`;
  if (a === 'operator') {
    if (r.decision === 'session') return `approved for the session by the operator${who(r.by)}`;
    if (r.decision === 'always') return `approved always by the operator${who(r.by)}${r.rule_id ? `, as standing rule ${r.rule_id}` : ''}`;
    return `approved ${r.decision === 'once' ? 'once ' : ''}by the operator${who(r.by)}`;
  }
  if (a === 'cli') return `run from the CLI${r.by ? ` by ${r.by}` : ''}`;
  if (a === 'session') return 'approved for the session (granted earlier by the operator)';
  if (a.startsWith('rule:')) return `approved by standing rule ${a.slice(5)}`;
  return `approved (${a})`;
}

/** The same wording for an approval prompt's end (`ApprovalResolved`). */
export function describeResolution(r: { granted: boolean; authorized: string; by?: string; reason?: string; decision?: string; rule_id?: string }): string {
  return describeAuthorization({ ...r, kind: 'decision', invocation_id: 'prompt' } as AuthorizationFacts) ?? r.authorized;
}

/**
 * How one invocation was authorized, from its records (oldest first): the last record that says
 * so — a decision overrides the request — or `waiting for the operator` while a prompt is open.
 */
export function invocationAuthorization(records: readonly AuthorizationFacts[]): string | undefined {
  let said: string | undefined;
  for (const r of records) said = describeAuthorization(r) ?? said;
  return said;
}

/** What `outcomeOf` reads from a record. */
export type OutcomeFacts = Partial<Pick<AuditRecord, 'type' | 'state' | 'error_code' | 'error_kind' | 'authorized' | 'outcome'>>;

/**
 * How a call ended, from the record that ends it (or one invocation's records, oldest first);
 * undefined while it has not. The hub stores it on that record; for records stored before it did,
 * it is derived here — a refusal by policy reads as `denied`, unless the invocation's records
 * hold the decision that says the prompt timed out.
 */
export function outcomeOf(records: OutcomeFacts | readonly OutcomeFacts[]): Outcome | undefined {
  if (!Array.isArray(records)) return outcomeOfRecord(records as OutcomeFacts);
  let outcome: Outcome | undefined;
  let timedOut = false;
  for (const r of records as readonly OutcomeFacts[]) {
    outcome = outcomeOfRecord(r) ?? outcome;
    if (r.type === 'decision' && r.authorized === 'timeout') timedOut = true;
  }
  return outcome === 'denied' && timedOut ? 'timed_out' : outcome;
}

function outcomeOfRecord(r: OutcomeFacts): Outcome | undefined {
  if (r.outcome) return r.outcome;
  const byPolicy = r.error_code === 'policy_denied';
  if (r.type === 'rejected' || r.state === 'rejected') return byPolicy ? 'denied' : 'rejected';
  if (r.state === 'succeeded' || r.state === 'cancelled') return r.state;
  if (r.state !== 'failed') return undefined;
  return byPolicy ? 'denied' : r.error_kind === 'Timeout' ? 'timed_out' : 'failed';
}
