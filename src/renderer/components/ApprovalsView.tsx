/**
 * The approvals screen: every pending prompt, oldest first, identical requests on one card. The
 * keyboard moves a focus between cards (j/k, arrows; the oldest by default) and A/S/L/D act on the
 * focused card only after it has been focused, unchanged, for a moment, so a key pressed just as a
 * new prompt arrives cannot approve something the operator has not seen.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { Decision, PendingApproval } from '../../shared/panel-types';
import { decide, denyAll, loadApprovals } from '../actions';
import { useStore } from '../store';
import { describeResolution } from '../../shared/audit-record';
import { ApprovalCard, DEFAULT_SCOPE, decisionButtons, needsCare, scopeFor } from './ApprovalCard';
import { AwayList } from './AwayList';
import type { ScopeEdit } from './ApprovalCard';
import { Empty, ErrorBox, Loading, OutcomeBadge, useNow } from './common';
import { recordAgentLabel } from '../format';
import { escapeControl } from '../../shared/escape';
import type { RecentDecision } from '../store/slices';
import { recentEnding } from '../store/decided';
import { decidedThenEnded } from '../../shared/decided-words';

/** How long the focused card must be shown unchanged before shortcuts act on it. */
export const ARM_DELAY_MS = 400;
/** How long a first key press on a card that needs care waits for the second. */
export const CONFIRM_WINDOW_MS = 5000;

const isTyping = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

/** Prompts decided together: the same authenticated agent, channel, op and args. */
interface Group {
  key: string;
  items: PendingApproval[];
}

/**
 * Prompts that are one request asked several times. Never grouped: an unauthenticated agent (its
 * id says nothing about who it is) and redacted args (equal on screen, maybe not underneath).
 */
export function groupApprovals(pending: readonly PendingApproval[]): Group[] {
  const groups = new Map<string, Group>();
  for (const a of pending) {
    const same = a.sensitive || a.agent.agent_id === undefined ? a.approval_id : JSON.stringify([a.agent.agent_id, a.agent.kind, a.channel, a.op, a.args]);
    const key = `g:${same}`;
    const g = groups.get(key);
    if (g) g.items.push(a);
    else groups.set(key, { key, items: [a] });
  }
  return [...groups.values()];
}

const NEXT_KEYS = new Set(['j', 'ArrowDown']);
const PREV_KEYS = new Set(['k', 'ArrowUp']);

export function ApprovalsView() {
  const { pending, loading, error, deciding, resolved } = useStore(
    useShallow((s) => ({
      pending: s.approvals.pending,
      loading: s.approvals.loading,
      error: s.approvals.error,
      deciding: s.approvals.deciding,
      resolved: s.approvals.resolved,
    })),
  );
  const now = useNow(250);
  // A card's reason and scope belong to its prompt (its first one's id), never to what the prompt
  // asks: a new prompt asking the same thing starts with an empty reason.
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [scopes, setScopes] = useState<Record<string, ScopeEdit>>({});
  const [denyAllOf, setDenyAllOf] = useState<string>();
  const [argsOpen, setArgsOpen] = useState<Record<string, boolean>>({});
  // A keyboard approval of a card with a cut argument or a risk cue, not yet repeated.
  const [confirm, setConfirm] = useState<{ key: string; decision: Decision; at: number; hint: string }>();
  const groups = useMemo(() => groupApprovals(pending), [pending]);
  const [focusKey, setFocusKey] = useState<string>();
  const focused = groups.find((g) => g.key === focusKey) ?? groups[0];
  // Re-armed whenever what the keys would decide changes: another card, or more prompts on it.
  const armId = focused && `${focused.key}#${focused.items.length}`;
  const armedAt = useRef<{ id?: string; at: number }>({ at: 0 });
  if (armedAt.current.id !== armId) armedAt.current = { id: armId, at: Date.now() };

  const send = (g: Group, decision: Decision) =>
    void decide(
      g.items.map((a) => a.approval_id),
      decision,
      reasons[cardKey(g)] ?? '',
      scopeFor(decision, scopes[cardKey(g)] ?? DEFAULT_SCOPE),
    );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!focused || e.repeat || e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      if (NEXT_KEYS.has(e.key) || PREV_KEYS.has(e.key)) {
        e.preventDefault();
        const i = groups.indexOf(focused) + (NEXT_KEYS.has(e.key) ? 1 : -1);
        const to = groups[Math.max(0, Math.min(groups.length - 1, i))]!;
        setFocusKey(to.key);
        const card = [...document.querySelectorAll<HTMLElement>('article[data-approval-id]')].find((el) => el.dataset.approvalId === to.items[0]!.approval_id);
        card?.scrollIntoView?.({ block: 'nearest' });
        return;
      }
      const b = decisionButtons(focused.items[0]!).find((x) => x.key.toLowerCase() === e.key.toLowerCase());
      if (!b || Date.now() - armedAt.current.at < ARM_DELAY_MS) return;
      e.preventDefault();
      // A cut argument or a risk cue: approving by key needs the full text on screen, or a second press.
      const key = cardKey(focused);
      const care = needsCare(focused.items[0]!);
      if (b.decision !== 'deny' && (care.cut > 0 || care.cues.length > 0) && !argsOpen[key]) {
        const again = confirm && confirm.key === key && confirm.decision === b.decision && Date.now() - confirm.at < CONFIRM_WINDOW_MS;
        if (!again) {
          const why = care.cues.length
            ? `the arguments contain ${care.cues.join(', ')}`
            : `${care.cut === 1 ? 'an argument is' : `${care.cut} arguments are`} cut in the middle`;
          setConfirm({
            key,
            decision: b.decision,
            at: Date.now(),
            hint: `${why}: press ${b.key} again to ${b.label.toLowerCase()}, or Show all to read them first`,
          });
          return;
        }
      }
      setConfirm(undefined);
      send(focused, b.decision);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [focused, groups, reasons, scopes, argsOpen, confirm]);

  const recent = resolved.slice(-3).reverse();
  return (
    <section className="view" aria-labelledby="approvals-h">
      <header className="view-head">
        <h2 id="approvals-h">Approvals</h2>
        <span className="muted" aria-live="polite">
          {pending.length === 0 ? 'nothing waiting' : `${pending.length} waiting — oldest first; j/k or ↑/↓ to move, A/S/L/D to decide`}
        </span>
      </header>
      <AwayList />
      {error && <ErrorBox error={error} onRetry={() => void loadApprovals()} />}
      {loading && pending.length === 0 ? (
        <Loading what="pending approvals" />
      ) : pending.length === 0 ? (
        <Empty title="No agent is waiting for you">
          Mutating actions (send, type, keys, click…) appear here for you to approve or deny. Read-only ops run without asking.
        </Empty>
      ) : (
        <div className="approval-list">
          {groups.map((g) => {
            const a = g.items[0]!;
            const agentId = a.agent.agent_id;
            return (
              <div key={g.key} className="approval-slot" onFocusCapture={() => setFocusKey(g.key)} onMouseDown={() => setFocusKey(g.key)}>
                <ApprovalCard
                  approval={a}
                  count={g.items.length}
                  now={now}
                  next={g === focused}
                  deciding={deciding[a.approval_id]}
                  reason={reasons[cardKey(g)] ?? ''}
                  onReason={(r) => setReasons((m) => ({ ...m, [cardKey(g)]: r }))}
                  scope={scopes[cardKey(g)] ?? DEFAULT_SCOPE}
                  onScope={(sc) => setScopes((m) => ({ ...m, [cardKey(g)]: sc }))}
                  onDecide={(d) => send(g, d)}
                  argsOpen={argsOpen[cardKey(g)] ?? false}
                  onArgsOpen={(open) => setArgsOpen((m) => ({ ...m, [cardKey(g)]: open }))}
                  confirmHint={confirm?.key === cardKey(g) && Date.now() - confirm.at < CONFIRM_WINDOW_MS ? confirm.hint : undefined}
                  {...(agentId === undefined || a.hub !== undefined ? {} : { onDenyAll: () => setDenyAllOf(agentId) })}
                />
                {denyAllOf !== undefined &&
                  denyAllOf === agentId &&
                  a.hub === undefined &&
                  g === groups.find((x) => x.items[0]!.agent.agent_id === agentId && x.items[0]!.hub === undefined) && (
                    <DenyAllConfirm
                      agent={agentId}
                      count={pending.filter((p) => p.agent.agent_id === agentId && p.hub === undefined).length}
                      onCancel={() => setDenyAllOf(undefined)}
                      onConfirm={(reason) => {
                        setDenyAllOf(undefined);
                        void denyAll(agentId, reason);
                      }}
                    />
                  )}
              </div>
            );
          })}
        </div>
      )}
      {recent.length > 0 && (
        <div className="recent" aria-label="Recently decided">
          <h3>Recently decided</h3>
          <ul>
            {recent.map((r) => (
              <RecentItem key={r.approval_id} r={r} />
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** The state key of a card: its first prompt's id. */
const cardKey = (g: Group): string => g.items[0]!.approval_id;

/**
 * "Deny all from <agent>" asks first: how many prompts it ends, and a reason of its own for all of
 * them (empty: no card's reason is reused for prompts it was not written for).
 */
function DenyAllConfirm({ agent, count, onCancel, onConfirm }: { agent: string; count: number; onCancel: () => void; onConfirm: (reason: string) => void }) {
  const [reason, setReason] = useState('');
  const who = escapeControl(agent);
  const what = `${count} request${count === 1 ? '' : 's'}`;
  return (
    <div
      role="alertdialog"
      aria-label={`Deny all from ${who}`}
      className="deny-all-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel();
      }}
    >
      <p>
        Deny all {what} waiting from <strong>{who}</strong>?
      </p>
      <label>
        Reason for all {what} (sent to the agent)
        <input autoFocus value={reason} maxLength={2000} onChange={(e) => setReason(e.target.value)} placeholder="optional" />
      </label>
      <div className="row">
        <button type="button" className="btn btn-danger" onClick={() => onConfirm(reason)}>
          Deny {what}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** One decided prompt: what was asked, by whom, how the call ended (once it has), and who decided. */
function RecentItem({ r }: { r: RecentDecision }) {
  const outcome = useStore((s) => recentEnding(s, r)?.outcome);
  const failure = useStore((s) => recentEnding(s, r)?.message);
  // Another hub's prompt this panel no longer decides: not a denial, that hub still decides it.
  const withdrawn = r.authorized === 'withdrawn';
  return (
    <li>
      {withdrawn ? (
        <span className="badge badge-neutral">withdrawn</span>
      ) : outcome ? (
        <OutcomeBadge outcome={outcome} />
      ) : (
        <span className="badge badge-info">in progress</span>
      )}{' '}
      {r.op && r.channel && (
        <span className="recent-what">
          {escapeControl(r.op)} on {escapeControl(r.channel)} · {escapeControl(r.agent ? recordAgentLabel(r.agent) : '—')} ·{' '}
        </span>
      )}
      {withdrawn ? (
        <span className="muted">withdrawn{r.reason ? ` — ${escapeControl(r.reason)}` : ''}</span>
      ) : (
        <span className={r.granted && (!outcome || outcome === 'succeeded') ? 'ok-text' : 'bad-text'}>
          {escapeControl(decidedThenEnded(describeResolution(r), r.granted, outcome, failure))}
        </span>
      )}
    </li>
  );
}
