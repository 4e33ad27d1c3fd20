/** Approvals: the pending list, decisions (final, sent once) and notifications. */
import type { ApprovalResolved, Decision, PendingApproval } from '../../shared/panel-types';
import type { JsonValue } from '../../shared/wire';
import { getApi } from '../api';
import { get, message, set, toast } from './common';
import { loadRules } from './views';

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

export function resolveApproval(r: ApprovalResolved): void {
  set((s) => {
    const { [r.approval_id]: _gone, ...deciding } = s.approvals.deciding;
    return {
      approvals: {
        ...s.approvals,
        pending: s.approvals.pending.filter((p) => p.approval_id !== r.approval_id),
        deciding,
        resolved: [...s.approvals.resolved.slice(-19), r],
      },
    };
  });
}

/**
 * Sends a decision. Final: a second call for the same prompt is ignored here, and the hub
 * rejects a second decision anyway. Only a transport failure re-enables the buttons.
 */
export async function decide(approvalId: string, decision: Decision, reason?: string): Promise<void> {
  if (get().approvals.deciding[approvalId]) return;
  set((s) => ({ approvals: { ...s.approvals, deciding: { ...s.approvals.deciding, [approvalId]: decision } } }));
  try {
    const trimmed = reason?.trim();
    const result = await getApi().decide({ approval_id: approvalId, decision, ...(trimmed ? { reason: trimmed } : {}) });
    if (!result.accepted) toast('info', result.message ?? 'this prompt was already decided');
    // The hub's approvalResolved event removes the prompt; drop it here too in case it raced.
    set((s) => ({ approvals: { ...s.approvals, pending: s.approvals.pending.filter((p) => p.approval_id !== approvalId) } }));
    if (decision === 'always') void loadRules();
  } catch (error) {
    set((s) => {
      const { [approvalId]: _gone, ...deciding } = s.approvals.deciding;
      return { approvals: { ...s.approvals, deciding } };
    });
    toast('error', `the decision was not delivered: ${message(error)}`);
  }
}

/** An OS notification when the window is not focused (browser host; Electron's main notifies). */
function notifyApproval(a: PendingApproval): void {
  if (typeof document === 'undefined' || document.hasFocus()) return;
  if (get().connection.host !== 'browser' || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  try {
    // silent focus: the notification never steals focus from the window an action targets.
    new Notification(`Uplink: ${a.agent} wants ${a.op} on ${a.channel}`, { body: 'Approve or deny in the Uplink panel', tag: a.approval_id });
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
