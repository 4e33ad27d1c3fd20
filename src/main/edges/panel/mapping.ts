/**
 * Maps hub types onto the panel's wire types (src/shared/panel-types.ts) where they differ.
 * Timeline events are the audit record and a pending prompt is the hub's own, each cut to its
 * declared fields; times are epoch milliseconds.
 */
import { pickRecord, RECORD_AGENT_SCHEMA, TIMELINE_EVENT_SCHEMA } from '../../../shared/audit-record';
import type { RecordAgent } from '../../../shared/audit-record';
import { PendingApproval } from '../../../shared/approval';
import { pickSchema } from '../../../shared/schema';
import type { AuditEntry, CapabilityOffer, FleetHistoryEntry, FleetStatus, SelectionExplanation as HubExplanation, StandingRuleStatus } from '../../hub';
import type { ApprovalRule, FleetTimelineEntry, FleetView, InvocationDetail, SelectionExplanation, TimelineEvent } from '../../../shared/panel-types';

/** A prompt as it leaves the hub: its declared fields only (the live identity in `agent` also says where the agent runs). */
export function declaredApproval(a: PendingApproval): PendingApproval {
  return pickSchema<PendingApproval>(PendingApproval, a);
}

/** An audit entry as a timeline event: the record's own fields (never the live agent's session), no output. */
export function toTimelineEvent(e: AuditEntry): TimelineEvent {
  return pickRecord<TimelineEvent>(TIMELINE_EVENT_SCHEMA, e);
}

/** A standing rule as the panel lists it. */
export function toPanelRule(r: StandingRuleStatus): ApprovalRule {
  const ops = Array.isArray(r.op) ? r.op : [r.op];
  const out: ApprovalRule = { rule_id: r.id, channel: r.channel, op: ops.join(', '), ops, proposed: r.proposed, digest: r.digest, uses: r.uses };
  if (r.agent !== undefined) out.agent = r.agent;
  if (r.args !== undefined) out.args = r.args;
  if (r.created_at !== undefined) out.created_at = r.created_at;
  if (r.created_by !== undefined) out.created_by = r.created_by;
  if (r.note !== undefined) out.note = r.note;
  if (r.last_used_at !== undefined) out.last_used_at = r.last_used_at;
  return out;
}

/** Folds an invocation's audit entries (oldest first) into the detail pane's view. */
export function toInvocationDetail(invocationId: string, entries: AuditEntry[]): InvocationDetail {
  const detail: InvocationDetail = { invocation_id: invocationId, events: entries.map(toTimelineEvent) };
  for (const e of entries) {
    detail.capability_id ??= e.capability_id;
    detail.channel ??= e.channel;
    detail.op ??= e.op;
    if (e.agent) detail.agent ??= pickRecord<RecordAgent>(RECORD_AGENT_SCHEMA, e.agent);
    detail.provider_id ??= e.provider_id;
    detail.interaction ??= e.interaction;
    if (e.args !== undefined) detail.args ??= e.args;
    // The audit store keeps a (capped, summarized) result on `succeeded` entries.
    if (e.output !== undefined) detail.output = e.output;
    if (e.state) detail.state = e.state;
    if (e.duration_ms !== undefined) detail.duration_ms = e.duration_ms;
    if (e.message && (e.kind === 'failed' || e.kind === 'rejected' || e.kind === 'approval_denied' || e.kind === 'cancelled')) {
      detail.error = e.hint ? `${e.message} — hint: ${e.hint}` : e.message;
    }
    if (e.detail) detail.error_detail = e.detail;
  }
  for (const k of Object.keys(detail) as Array<keyof InvocationDetail>) if (detail[k] === undefined) delete detail[k];
  return detail;
}

/** An offer as the panel names it: who provides which version, through which interaction. */
const offerRef = (offer: CapabilityOffer): NonNullable<SelectionExplanation['selected']> => ({
  provider_id: offer.provider.id,
  capability_version: offer.capability.version,
  interaction: offer.interaction,
});

/** The kernel's selection explanation in the panel's shape: each candidate says whether it is the pick. */
export function toPanelExplanation(x: HubExplanation): SelectionExplanation {
  const selected = x.selected ? offerRef(x.selected) : undefined;
  const isSelected = (ref: ReturnType<typeof offerRef>): boolean =>
    !!selected &&
    ref.provider_id === selected.provider_id &&
    ref.capability_version === selected.capability_version &&
    ref.interaction === selected.interaction;
  const out: SelectionExplanation = {
    candidates: x.candidates.map((c) => {
      const ref = offerRef(c.offer);
      return { ...ref, selected: isSelected(ref), reason: c.reason };
    }),
  };
  if (selected) out.selected = selected;
  if (x.error) out.error = x.error;
  return out;
}

/** The fleet as the panel shows it: members as this hub sees them; a hub in no fleet shows no Fleet view. */
export function toFleetView(s: FleetStatus): FleetView {
  if (!s.member) return { enabled: false, members: [] };
  return {
    enabled: true,
    name: s.name,
    url: s.url,
    connected: s.connected,
    ...(s.problem ? { problem: s.problem } : {}),
    members: s.members.map((m) => ({ ...m })),
    identity: s.identity,
    ...(s.warning ? { warning: s.warning } : {}),
    dropped: { ...s.dropped },
  };
}

/** A record of the fleet's merged history as a timeline entry (the record's own fields only). */
export function toFleetEntry(e: FleetHistoryEntry): FleetTimelineEntry {
  return { hub: e.hub, seq: e.seq, cursor: e.cursor, event: pickRecord<TimelineEvent>(TIMELINE_EVENT_SCHEMA, e.record) };
}
