/** Approvals: the pending list, decisions (final, sent once) and notifications. */
import type { ApprovalResolved, Decision, DecisionScope, PendingApproval } from '../../shared/panel-types';
import type { JsonValue } from '../../shared/wire';
import { agentInWords } from '../../shared/agent-label';
import { getApi } from '../api';
import { get, message, set, toast } from './common';
import { loadRules, loadSessionGrants } from './views';

const oldestFirst = (a: PendingApproval, b: PendingApproval) => a.requested_at - b.requested_at || a.approval_id.localeCompare(b.approval_id);

/** Fetches into the store (loading and error states included). */
export async function loadApprovals(): Promise<void> {
  set((s) => ({ approvals: { ...s.approvals, loading: true, error: undefined } }));
  try {
    const pending = await getApi().listPendingApprovals();
    set((s) => ({ approvals: { ...s.approvals, loading: false, pending: [...pending].sort(oldestFirst) } }));
  } catch (error) {
    set((s) => ({ approvals: { ...s.approvals, loading: false, error: message(error) } }));
  }
}

export function addApproval(a: PendingApproval): void {
  set((s) => {
    if (s.approvals.pending.some((p) => p.approval_id === a.approval_id)) return s;
    return { approvals: { ...s.approvals, pending: [...s.approvals.pending, a].sort(oldestFirst) } };
  });
  notifyApproval(a);
}

/** A pending prompt changed (checked again, preview refreshed): replaced in place, no new notification. */
export function updateApproval(a: PendingApproval): void {
  set((s) => {
    if (!s.approvals.pending.some((p) => p.approval_id === a.approval_id)) return s;
    return { approvals: { ...s.approvals, pending: s.approvals.pending.map((p) => (p.approval_id === a.approval_id ? a : p)) } };
  });
}

/** The operator's fresh look at a prompt's target (audited; it stands for no read by the agent). */
export async function refreshApproval(approvalId: string): Promise<void> {
  try {
    updateApproval(await getApi().refreshApproval({ approval_id: approvalId }));
  } catch (error) {
    toast('error', message(error));
  }
}

export function resolveApproval(r: ApprovalResolved): void {
  set((s) => {
    const { [r.approval_id]: _gone, ...deciding } = s.approvals.deciding;
    const asked = s.approvals.pending.find((p) => p.approval_id === r.approval_id);
    const recent = asked
      ? { ...r, op: asked.op, channel: asked.channel, agent: asked.agent, invocation_id: asked.invocation_id, ...(asked.hub ? { hub: asked.hub } : {}) }
      : r;
    return {
      approvals: {
        ...s.approvals,
        pending: s.approvals.pending.filter((p) => p.approval_id !== r.approval_id),
        deciding,
        resolved: [...s.approvals.resolved.slice(-19), recent],
      },
    };
  });
}

/**
 * Sends one decision for each of the prompts (identical requests decided together). Final: a
 * prompt already on its way is skipped here, and the hub rejects a second decision anyway. Only a
 * transport failure re-enables the buttons. "Already decided" is worth a note only when none of
 * them took it: approving one for the session approves its identical siblings in the hub first.
 * A decision the hub refused (a scope it will not grant, a config.json it cannot write) leaves the
 * prompt pending: the card stays, with the hub's reason, for another decision.
 */
export async function decide(approvalIds: string | readonly string[], decision: Decision, reason?: string, scope?: DecisionScope): Promise<void> {
  const ids = (typeof approvalIds === 'string' ? [approvalIds] : approvalIds).filter((id) => !get().approvals.deciding[id]);
  if (ids.length === 0) return;
  set((s) => ({ approvals: { ...s.approvals, deciding: { ...s.approvals.deciding, ...Object.fromEntries(ids.map((id) => [id, decision])) } } }));
  const trimmed = reason?.trim();
  const results = await Promise.allSettled(
    ids.map((id) => getApi().decide({ approval_id: id, decision, ...(trimmed ? { reason: trimmed } : {}), ...(scope ? { scope } : {}) })),
  );
  const delivered = ids.filter((_, i) => results[i]!.status === 'fulfilled');
  const accepted = ids.filter((_, i) => {
    const r = results[i]!;
    return r.status === 'fulfilled' && r.value.accepted;
  });
  // Not accepted: already decided (its approvalResolved removes it) or refused (it stays).
  const failed = ids.filter((id) => !accepted.includes(id));
  const answers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (answers.length > 0 && answers.every((r) => !r.accepted)) {
    const note = answers[0]!.message ?? 'this prompt was already decided';
    const still = delivered.some((id) => get().approvals.pending.some((p) => p.approval_id === id));
    toast(still ? 'error' : 'info', note);
  }
  set((s) => {
    const deciding = { ...s.approvals.deciding };
    for (const id of failed) delete deciding[id];
    // The hub's approvalResolved event removes a prompt; drop the delivered ones here too in case it raced.
    return { approvals: { ...s.approvals, deciding, pending: s.approvals.pending.filter((p) => !accepted.includes(p.approval_id)) } };
  });
  const err = results.find((r) => r.status === 'rejected');
  if (err) toast('error', `the decision was not delivered: ${message(err.reason)}`);
  if (decision === 'always' && accepted.length > 0) void loadRules();
  if (decision === 'session' && accepted.length > 0) void loadSessionGrants();
}

/** Denies every pending prompt of one authenticated agent (a runaway one) with one reason. */
export async function denyAll(agent: string, reason?: string): Promise<void> {
  try {
    const trimmed = reason?.trim();
    const { denied } = await getApi().denyAll({ agent, ...(trimmed ? { reason: trimmed } : {}) });
    toast('info', `denied ${denied} request${denied === 1 ? '' : 's'} from ${agent}`);
  } catch (error) {
    toast('error', `deny all from ${agent} was not delivered: ${message(error)}`);
  }
}

/** An OS notification when the window is not focused (browser host; Electron's main notifies). */
function notifyApproval(a: PendingApproval): void {
  if (typeof document === 'undefined' || document.hasFocus()) return;
  if (get().connection.host !== 'browser' || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  try {
    // silent focus: the notification never steals focus from the window an action targets.
    new Notification(`Uplink: ${agentInWords(a.agent)} wants ${a.op} on ${a.channel}`, {
      body: 'Approve or deny in the Uplink panel',
      tag: a.approval_id,
    });
  } catch {
    /* notifications unavailable: the badge and title still show it */
  }
}

/** The raw args of a pending prompt with sensitive text; undefined (and a toast) when it failed. */
export async function revealApprovalArgs(approvalId: string): Promise<JsonValue | undefined> {
  try {
    return (await getApi().revealApprovalArgs({ approval_id: approvalId })).args;
  } catch (error) {
    toast('error', message(error));
    return undefined;
  }
}
