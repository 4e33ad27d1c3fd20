/**
 * How the call behind a decided prompt ended, for "Recently decided": this hub's own timeline row,
 * or, for another hub's prompt (`hub` set; its `invocation_id` is that hub's own), the fleet's
 * merged timeline, so a finished remote call ends with its outcome instead of staying "in progress".
 */
import { outcomeOf } from '../../shared/audit-record';
import type { Outcome } from '../../shared/audit-record';
import type { PanelState, RecentDecision } from './slices';

export function recentEnding(s: PanelState, r: RecentDecision): { outcome: Outcome; message?: string } | undefined {
  if (!r.invocation_id) return undefined;
  if (r.hub === undefined) {
    const row = s.timeline.rows.get(r.invocation_id);
    return row?.outcome ? { outcome: row.outcome, ...(row.message ? { message: row.message } : {}) } : undefined;
  }
  for (const { hub, event } of s.fleet.entries) {
    if (hub !== r.hub || event.invocation_id !== r.invocation_id) continue;
    const outcome = outcomeOf(event);
    if (outcome) return { outcome, ...(event.message ? { message: event.message } : {}) };
  }
  return undefined;
}
