/**
 * The timeline's data model, kept out of React: invocation rows keyed by invocation id (rejected
 * requests that never became an invocation get their own row), each holding its events in
 * sequence order. Pure functions over a mutable Map so 100,000 events ingest without copying
 * the world; the store bumps a version number after each batch.
 */
import type { TimelineEvent, TimelineFilter } from '../../shared/panel-types';
import type { InvocationState } from '../../shared/wire';
import { outcomeOf } from '../../shared/audit-record';
import type { Outcome } from '../../shared/audit-record';
import { escapeControl } from '../../shared/escape';
import { middleClip } from '../../shared/risk';
import type { JsonValue } from '../../shared/wire';

/** One line of the timeline: an invocation and its events. */
export interface InvocationRow {
  key: string;
  invocation_id?: string;
  channel?: string;
  op?: string;
  /** The record's `agent.agent_id` (what the agent filter matches), its declared name beside it. */
  agent?: string;
  agent_name?: string;
  provider_id?: string;
  interaction?: string;
  /** `action`: an operator action recorded without an invocation (e.g. a tier change). */
  state: InvocationState | 'rejected' | 'waiting' | 'action';
  /** How the call ended, once it has. */
  outcome?: Outcome;
  first_at: number;
  last_at: number;
  first_cursor: number;
  duration_ms?: number;
  authorized?: string;
  message?: string;
  /** What was typed, sent or clicked, in one escaped, clipped line (from the call's args). */
  summary?: string;
  events: TimelineEvent[];
}

/** Longest row summary, in characters; a longer one is cut in the middle. */
export const SUMMARY_CHARS = 80;

/** The args that say what a call did, most telling first (text typed, keys, a message, a target). */
const SUMMARY_KEYS = ['text', 'keys', 'command', 'cmd', 'message', 'input', 'query', 'url', 'path', 'label', 'name', 'title', 'element', 'target', 'selector'];

function said(value: JsonValue | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(said).filter((v): v is string => v !== undefined);
    return parts.length ? parts.join(' ') : undefined;
  }
  // A target named inside an object (an element's name or label).
  if (value && typeof value === 'object') return said(value.name ?? value.label ?? value.text);
  return undefined;
}

/**
 * A call's args in one line: the most telling field (`text`, `keys`, …) as it was sent, else a
 * click's point, else `key=value` pairs; escaped (no control character reaches the row) and cut in
 * the middle past SUMMARY_CHARS, so both ends of a long command stay visible.
 */
export function summarizeArgs(args: JsonValue | undefined): string | undefined {
  if (args === undefined || args === null) return undefined;
  let line: string | undefined;
  if (typeof args !== 'object' || Array.isArray(args)) line = said(args) ?? JSON.stringify(args);
  else {
    for (const k of SUMMARY_KEYS) {
      line = said(args[k]);
      if (line !== undefined && line !== '') break;
    }
    if (!line && typeof args.x === 'number' && typeof args.y === 'number') line = `at ${args.x}, ${args.y}`;
    if (!line) {
      const pairs = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
      line = pairs.length ? pairs.join(' ') : undefined;
    }
  }
  if (!line) return undefined;
  return middleClip(escapeControl(line), SUMMARY_CHARS).text;
}

/** Rows beyond this are dropped from the front; they page back in from the audit store. */
export const MAX_ROWS = 60_000;

export const rowKey = (e: TimelineEvent): string => e.invocation_id ?? `${e.type}:${e.id}`;

/**
 * Audit order: the cursor is global and monotonic, and within an invocation it grows with the
 * sequence number, so this is sequence order with operator decisions at the moment they were made.
 */
const byCursor = (a: TimelineEvent, b: TimelineEvent): number => a.id - b.id;

/** Derives a row's summary fields from its events (events already sorted). */
function summarize(row: InvocationRow): void {
  for (const e of row.events) {
    row.channel ??= e.channel;
    row.op ??= e.op;
    row.agent ??= e.agent?.agent_id;
    row.agent_name ??= e.agent?.name;
    row.provider_id ??= e.provider_id;
    row.interaction ??= e.interaction;
    if (row.summary === undefined && e.args !== undefined) row.summary = summarizeArgs(e.args);
  }
  const last = row.events[row.events.length - 1]!;
  row.first_at = Math.min(row.first_at, row.events[0]!.at);
  row.last_at = Math.max(row.last_at, last.at);
  row.first_cursor = Math.min(row.first_cursor, row.events[0]!.id);
  let state: InvocationRow['state'] = row.state;
  for (const e of row.events) {
    if (e.state) state = e.state;
    if (e.duration_ms !== undefined) row.duration_ms = e.duration_ms;
    if (e.authorized) row.authorized = e.authorized;
    if (e.message && (e.kind === 'failed' || e.kind === 'rejected' || e.kind === 'approval_denied')) row.message = e.message;
  }
  const pending = last.kind === 'approval_requested';
  row.state = pending ? 'waiting' : state;
  const outcome = outcomeOf(row.events);
  if (outcome) row.outcome = outcome;
}

/**
 * Merges a batch of events into the rows. Returns the keys of rows that are new, in cursor order
 * (`mergeOrder` places them), and whether any row changed.
 */
export function mergeEvents(rows: Map<string, InvocationRow>, events: TimelineEvent[]): { created: string[]; changed: boolean } {
  const created: InvocationRow[] = [];
  const touched = new Set<string>();
  for (const e of events) {
    const key = rowKey(e);
    const existing = rows.get(key);
    if (existing && existing.events.some((x) => x.id === e.id)) continue;
    // Copy-on-write per row so React.memo sees a new object only for rows that changed.
    const row: InvocationRow =
      existing && !touched.has(key)
        ? { ...existing, events: [...existing.events] }
        : (existing ?? {
            key,
            state: e.invocation_id ? 'accepted' : e.type === 'rejected' ? 'rejected' : 'action',
            first_at: e.at,
            last_at: e.at,
            first_cursor: e.id,
            events: [],
            ...(e.invocation_id ? { invocation_id: e.invocation_id } : {}),
          });
    if (!existing) created.push(row);
    row.events.push(e);
    rows.set(key, row);
    touched.add(key);
  }
  for (const key of touched) {
    const row = rows.get(key)!;
    row.events.sort(byCursor);
    summarize(row);
  }
  created.sort((a, b) => a.first_cursor - b.first_cursor);
  return { created: created.map((r) => r.key), changed: touched.size > 0 };
}

/** Merges new keys into an ordered key list (ascending by first cursor). */
export function mergeOrder(order: string[], rows: Map<string, InvocationRow>, added: string[]): string[] {
  if (added.length === 0) return order;
  const firstOf = (k: string) => rows.get(k)?.first_cursor ?? 0;
  const tail = order.length ? firstOf(order[order.length - 1]!) : -Infinity;
  const head = order.length ? firstOf(order[0]!) : Infinity;
  if (firstOf(added[0]!) > tail) return order.concat(added);
  if (firstOf(added[added.length - 1]!) < head) return added.concat(order);
  return order.concat(added).sort((a, b) => firstOf(a) - firstOf(b));
}

/** Drops the oldest rows beyond `max`; returns the new order. */
export function trimRows(order: string[], rows: Map<string, InvocationRow>, max = MAX_ROWS): string[] {
  if (order.length <= max) return order;
  const drop = order.length - max;
  for (let i = 0; i < drop; i++) rows.delete(order[i]!);
  return order.slice(drop);
}

/** True when a row passes the filter (free text searches names, ids, args, messages and reasons). */
export function matchesFilter(row: InvocationRow, f: TimelineFilter): boolean {
  if (f.channel && row.channel !== f.channel) return false;
  if (f.op && row.op !== f.op) return false;
  if (f.agent && row.agent !== f.agent) return false;
  // `running` is any call in progress that is not waiting for the operator.
  if (f.state && row.state !== f.state && !(f.state === 'running' && row.state === 'accepted')) return false;
  if (f.outcome && row.outcome !== f.outcome) return false;
  if (f.text) {
    // The rows in memory only (a live row while a search is shown); the hub searches the audit.
    const needle = f.text.toLowerCase();
    const hay = [row.invocation_id, row.channel, row.op, row.agent, row.agent_name, row.provider_id, row.message, row.authorized].join(' ').toLowerCase();
    const inEvent = (e: TimelineEvent): boolean =>
      [e.reason, e.message, e.hint, e.detail, e.args !== undefined ? JSON.stringify(e.args) : undefined].some((t) => t?.toLowerCase().includes(needle));
    if (!hay.includes(needle) && !row.events.some(inEvent)) return false;
  }
  return true;
}

/** The distinct channels, ops and agents seen, for the filter pickers. */
export function facets(rows: Iterable<InvocationRow>): { channels: string[]; ops: string[]; agents: string[] } {
  const c = new Set<string>();
  const o = new Set<string>();
  const a = new Set<string>();
  for (const r of rows) {
    if (r.channel) c.add(r.channel);
    if (r.op) o.add(r.op);
    if (r.agent) a.add(r.agent);
  }
  const sort = (s: Set<string>) => [...s].sort();
  return { channels: sort(c), ops: sort(o), agents: sort(a) };
}
