/**
 * Operator settings that live in config.json: revoking standing rules and the approval timeout.
 * Each change is written atomically and recorded (fsynced) as the operator's decision.
 */
import type { ConfigStore } from './config';
import { HubError } from './errors';
import type { AuditEntry } from './types';

/** Records an entry; `durable` commits it fsynced. */
export type Recorder = (entry: Omit<AuditEntry, 'id'>, durable?: boolean) => void;

/** Edits config.json; a broken file (or a failed write) is an Unavailable the operator can act on. */
export function editConfig(config: ConfigStore, edit: (raw: Record<string, unknown>) => void, what = `save ${config.path}`): void {
  try {
    config.update(edit);
  } catch (e) {
    const text = (e as Error).message;
    const i = text.indexOf(' — hint: ');
    throw new HubError('core', 'Unavailable', `cannot ${what}: ${i >= 0 ? text.slice(0, i) : text}`, { hint: i >= 0 ? text.slice(i + 9) : 'check the file and its permissions' });
  }
}

/** Removes a standing rule from config.json (`NotFound` if there is none). */
export function revokeRule(config: ConfigStore, record: Recorder, now: number, ruleId: string, by: string): void {
  if (!config.get().approvals.rules.some((r) => r.id === ruleId)) {
    throw new HubError('core', 'NotFound', `no standing rule ${ruleId}`, { hint: 'list the rules in the panel or in config.json approvals.rules' });
  }
  editConfig(config, (raw) => {
    const approvals = (raw.approvals ?? {}) as { rules?: Array<{ id: string }> };
    approvals.rules = (approvals.rules ?? []).filter((r) => r.id !== ruleId);
    raw.approvals = approvals;
  });
  record({ at: now, type: 'decision', kind: 'decision', authorized: 'operator', by, reason: `standing rule ${ruleId} revoked`, granted: false }, true);
}

/** Writes `approvals.timeout_ms` (1 s to 24 h). */
export function setApprovalTimeout(config: ConfigStore, record: Recorder, now: number, ms: number, by: string): void {
  if (!Number.isInteger(ms) || ms < 1000 || ms > 86_400_000) {
    throw new HubError('core', 'Invalid', `approval timeout ${ms} ms is out of range`, { hint: 'use 1000 to 86400000 ms' });
  }
  editConfig(config, (raw) => {
    raw.approvals = { ...((raw.approvals ?? {}) as object), timeout_ms: ms };
  });
  record({ at: now, type: 'decision', kind: 'decision', authorized: 'operator', by, reason: `approval timeout set to ${ms} ms`, granted: true }, true);
}
