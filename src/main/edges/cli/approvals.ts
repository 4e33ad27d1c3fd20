/**
 * `uplink approvals`, `approve`, `deny`: the operator's answers to pending prompts from a terminal.
 * They run in the running hub only (an embedded hub has no prompts: nobody else is calling it),
 * through `POST /cli` with the operator key, and are recorded as decided `<user> via cli` — the
 * way a panel's decisions read `<user> via panel-session:…`. An id may be given as a unique
 * prefix, as git takes a commit's.
 */
import { HubError } from '../../hub';
import type { JsonValue, PendingApproval } from '../../hub';
import { agentInWords } from '../../../shared/agent-label';
import { escapeControl } from '../../../shared/escape';

/** How many characters a prefix must have beyond the ids' common `appr-`. */
export const MIN_PREFIX_CHARS = 4;
/** The longest summary `--json` carries (the table clips it to the terminal's taste further). */
const MAX_SUMMARY_CHARS = 200;

/** What an id prefix says beyond the part every id shares (`appr-`, after a fleet hub's `<hub>/`). */
function significant(query: string): string {
  return query.replace(/^([a-z][a-z0-9-]*\/)?appr-?/, '$1');
}

/** Whether `query` is too short to name a prompt by prefix (an exact id is always taken). */
export function tooShortPrefix(query: string): boolean {
  return significant(query).length < MIN_PREFIX_CHARS;
}

/** The forms an id answers to: whole, without `appr-`, and (another hub's prompt) after its `<hub>/`. */
function idForms(id: string): string[] {
  const slash = id.indexOf('/');
  const tail = slash >= 0 ? id.slice(slash + 1) : id;
  return [id, id.replace(/^appr-/, ''), tail, tail.replace(/^appr-/, '')];
}

/**
 * The pending approval `query` names: its exact id, or the only one whose id starts with it
 * (with or without `appr-`). Unknown, too short or ambiguous: a one-line error with a hint.
 */
export function matchApproval(pending: readonly PendingApproval[], query: string): PendingApproval {
  const exact = pending.find((a) => a.approval_id === query);
  if (exact) return exact;
  const shown = escapeControl(query.slice(0, 80));
  if (tooShortPrefix(query))
    throw new HubError('core', 'Invalid', `approval id "${shown}" is too short: give at least ${MIN_PREFIX_CHARS} characters of it`, {
      hint: 'copy the id from `uplink approvals`',
    });
  const hits = pending.filter((a) => idForms(a.approval_id).some((f) => f.startsWith(query)));
  if (hits.length === 1) return hits[0]!;
  if (hits.length === 0)
    throw new HubError('core', 'NotFound', `no pending approval matches "${shown}"`, {
      hint: pending.length
        ? 'it may have been decided or timed out already: list what is pending with `uplink approvals`'
        : 'nothing is pending now (`uplink log --limit 5` shows how it ended)',
    });
  const names = hits.slice(0, 4).map((a) => a.approval_id);
  throw new HubError('core', 'Invalid', `approval id "${shown}" is ambiguous: it matches ${hits.length} (${names.join(', ')}${hits.length > 4 ? ', …' : ''})`, {
    hint: 'give more characters of the id',
  });
}

/** A prompt as the CLI carries it: all of it but the preview's picture (base64 PNG, useless in a terminal). */
export function approvalForCli(a: PendingApproval): JsonValue {
  const out: PendingApproval = { ...a };
  if (a.preview) {
    const { image_png: _png, ...preview } = a.preview;
    if (Object.keys(preview).length) out.preview = preview;
    else delete out.preview;
  }
  return out as unknown as JsonValue;
}

/** What the call would do, in one line: the driver's preview when it has words, else the args (sensitive ones redacted). */
export function approvalSummary(a: PendingApproval): string {
  const preview = a.preview?.text?.split('\n').find((l) => l.trim()) ?? a.preview?.lines?.find((l) => l.trim());
  const text = preview?.trim() ?? JSON.stringify(a.args) ?? '';
  const line = escapeControl(text.replace(/\s+/g, ' '));
  return line.length > MAX_SUMMARY_CHARS ? `${line.slice(0, MAX_SUMMARY_CHARS - 1)}…` : line;
}

/** `45s`, `3m07s`, `2h05m`; negative durations read as `0s`. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** The `--json` form of `uplink approvals`: each prompt with its age, time left and summary. */
export function approvalsJson(list: readonly PendingApproval[], now: number): JsonValue {
  return list.map((a) => ({
    ...(a as unknown as Record<string, JsonValue>),
    age_ms: Math.max(0, now - a.requested_at),
    expires_in_ms: Math.max(0, a.expires_at - now),
    summary: approvalSummary(a),
  }));
}

/**
 * The table `uplink approvals` prints: one prompt per line, oldest first. With no panel attached
 * (`panels` 0) the empty list says so: prompts wait here for `uplink approve` or a panel until
 * they time out (or are refused at once, with `approvals.when_no_panel: "deny"`).
 */
export function formatApprovals(list: readonly PendingApproval[], now: number, panels?: number): string {
  if (list.length === 0)
    return panels === 0
      ? 'no approvals pending (no panel is attached: agents\' mutating calls wait here until they time out, or are denied at once with approvals.when_no_panel "deny"; open the panel with `uplink panel-url`)'
      : 'no approvals pending';
  const rows = list.map((a) => [
    a.approval_id,
    shortDuration(now - a.requested_at),
    agentInWords(a.agent),
    a.channel,
    a.op,
    shortDuration(a.expires_at - now),
    approvalSummary(a).slice(0, 72),
  ]);
  const head = ['ID', 'AGE', 'AGENT', 'CHANNEL', 'OP', 'LEFT', 'SUMMARY'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    escapeControl(
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
  return [line(head), ...rows.map(line), `approve with \`uplink approve <id> [--session|--always]\`, deny with \`uplink deny <id> [--reason R]\``].join('\n');
}

/** What `approve`/`deny` answer: the hub's decision and the prompt it decided. */
export interface CliDecision {
  approval_id: string;
  decision: 'once' | 'session' | 'always' | 'deny';
  granted: boolean;
  rule_id?: string;
  channel: string;
  op: string;
  agent: string;
  by: string;
  reason?: string;
}

/** One line saying what was decided. */
export function formatDecision(d: CliDecision): string {
  const what = `${d.op} on ${d.channel} for ${d.agent}`;
  const words = {
    once: `approved once: ${what}`,
    session: `approved for the session: ${what}`,
    always: `approved always: ${what}${d.rule_id ? `, as standing rule ${d.rule_id}` : ''}`,
    deny: `denied: ${what}${d.reason ? ` — reason sent to the agent: ${JSON.stringify(d.reason)}` : ''}`,
  }[d.decision];
  return escapeControl(`${d.approval_id} ${words} (by ${d.by})`);
}
