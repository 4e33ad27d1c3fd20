/**
 * The timeline's search: the audit store's one text query (the one `uplink log --text` uses), read
 * newest first, folded into calls — every record of each call that has a matching record, so a
 * row found by its args still shows how it ended. `state` and `outcome` are the call's, checked
 * once its records are in. Bounded per page: calls, records scanned and bytes.
 */
import type { AuditEntry, AuditQuery, Hub } from '../../hub';
import { outcomeOf } from '../../../shared/audit-record';
import type { TimelineEvent, TimelineFilter, TimelineSearch, TimelineSearchPage } from '../../../shared/panel-types';
import { SEARCH_PAGE_MAX } from '../../../shared/panel-types';
import { toTimelineEvent } from './mapping';

/** Records read from the store per page at most (a rare text in a big audit takes several pages). */
export const SEARCH_SCAN_MAX = 5000;
/** Most bytes of records in one page, whatever its `limit`. */
export const SEARCH_PAGE_BYTES = 1024 * 1024;
/** Most records read for one call (a call has a handful; a runaway one is shown by its newest). */
const CALL_RECORDS_MAX = 1000;

/** A row's key, as the panel keys it: the invocation, else the record itself (a rejected request, an operator action). */
const keyOf = (e: Pick<AuditEntry, 'invocation_id' | 'type' | 'id'>): string => e.invocation_id ?? `${e.type}:${e.id}`;

/** The call's state as the timeline shows it: its last record's, `waiting` while its prompt is open. */
function rowState(records: readonly AuditEntry[]): string | undefined {
  const last = records[records.length - 1];
  if (!last) return undefined;
  if (last.kind === 'approval_requested') return 'waiting';
  let state: string | undefined;
  for (const r of records) state = r.state ?? state;
  return state;
}

function callMatches(records: readonly AuditEntry[], f: TimelineFilter): boolean {
  if (f.outcome && outcomeOf(records) !== f.outcome) return false;
  const state = rowState(records);
  // `running` is any call in progress that is not waiting for the operator (the panel's words).
  if (f.state && state !== f.state && !(f.state === 'running' && state === 'accepted')) return false;
  return true;
}

/** One page of matching calls, newest first in the audit, each call's records ascending. */
export function searchTimeline(hub: Pick<Hub, 'queryAudit'>, req: TimelineSearch): TimelineSearchPage {
  const filter = req.filter ?? {};
  const limit = Math.min(req.limit ?? 50, SEARCH_PAGE_MAX);
  // The record-level part of the filter goes to the store; the call-level part is checked here.
  const query: AuditQuery = {
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.op ? { op: filter.op } : {}),
    ...(filter.agent ? { agent: filter.agent } : {}),
    ...(filter.text ? { text: filter.text } : {}),
  };
  const seen = new Set<string>();
  const events: TimelineEvent[] = [];
  let matches = 0;
  let bytes = 0;
  let scanned = 0;
  let before = req.before;
  // Where the next page starts: the last record searched; null once the store has nothing older.
  let next: number | null = null;
  outer: while (scanned < SEARCH_SCAN_MAX) {
    const page = hub.queryAudit({ ...query, ...(before !== undefined ? { before } : {}), limit: Math.min(1000, SEARCH_SCAN_MAX - scanned) });
    for (const entry of page.entries) {
      scanned++;
      next = entry.id;
      const key = keyOf(entry);
      if (seen.has(key)) continue;
      seen.add(key);
      const records = entry.invocation_id ? callRecords(hub, entry.invocation_id) : [entry];
      if (!callMatches(records, filter)) continue;
      const mapped = records.map(toTimelineEvent);
      bytes += mapped.reduce((n, e) => n + JSON.stringify(e).length, 0);
      events.push(...mapped);
      matches++;
      if (matches >= limit || bytes > SEARCH_PAGE_BYTES) break outer;
    }
    // Every record of this page is searched: older ones next, unless the store has none.
    if (page.next_cursor === undefined) {
      next = null;
      break;
    }
    before = page.next_cursor;
  }
  events.sort((a, b) => a.id - b.id);
  return { events, matches, next_before: next };
}

/** Every record of one call, oldest first (bounded). */
function callRecords(hub: Pick<Hub, 'queryAudit'>, invocationId: string): AuditEntry[] {
  const out: AuditEntry[] = [];
  let after = 0;
  while (out.length < CALL_RECORDS_MAX) {
    const page = hub.queryAudit({ invocation_id: invocationId, after, limit: 1000 });
    out.push(...page.entries);
    if (page.entries.length < 1000 || page.next_cursor === undefined) break;
    after = page.next_cursor;
  }
  return out;
}
