/**
 * The approvals screen: every pending prompt, oldest first. Keyboard shortcuts act on the oldest
 * prompt only, and only after it has been on top for a moment, so a key pressed just as a new
 * prompt arrives cannot approve something the operator has not seen.
 */
import { useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { Decision } from '../../shared/panel-types';
import { decide, loadApprovals } from '../actions';
import { useStore } from '../store';
import { describeResolution } from '../../shared/audit-record';
import { ApprovalCard, DECISION_BUTTONS } from './ApprovalCard';
import { Empty, ErrorBox, Loading, useNow } from './common';

/** How long the top prompt must be visible before shortcuts act on it. */
export const ARM_DELAY_MS = 400;

const isTyping = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));

export function ApprovalsView() {
  const { pending, loading, error, deciding, resolved } = useStore(
    useShallow((s) => ({ pending: s.approvals.pending, loading: s.approvals.loading, error: s.approvals.error, deciding: s.approvals.deciding, resolved: s.approvals.resolved })),
  );
  const now = useNow(250);
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const top = pending[0];
  const armedAt = useRef<{ id?: string; at: number }>({ at: 0 });
  if (armedAt.current.id !== top?.approval_id) armedAt.current = { id: top?.approval_id, at: Date.now() };

  const send = (id: string, decision: Decision, reason: string) => void decide(id, decision, reason);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!top || e.repeat || e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      const b = DECISION_BUTTONS.find((x) => x.key.toLowerCase() === e.key.toLowerCase());
      if (!b || Date.now() - armedAt.current.at < ARM_DELAY_MS) return;
      e.preventDefault();
      send(top.approval_id, b.decision, reasons[top.approval_id] ?? '');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [top, reasons]);

  const recent = resolved.slice(-3).reverse();
  return (
    <section className="view" aria-labelledby="approvals-h">
      <header className="view-head">
        <h2 id="approvals-h">Approvals</h2>
        <span className="muted" aria-live="polite">{pending.length === 0 ? 'nothing waiting' : `${pending.length} waiting — oldest first`}</span>
      </header>
      {error && <ErrorBox error={error} onRetry={() => void loadApprovals()} />}
      {loading && pending.length === 0 ? (
        <Loading what="pending approvals" />
      ) : pending.length === 0 ? (
        <Empty title="No agent is waiting for you">
          Mutating actions (send, type, keys, click…) appear here for you to approve or deny. Read-only ops run without asking.
        </Empty>
      ) : (
        <div className="approval-list">
          {pending.map((a, i) => (
            <ApprovalCard
              key={a.approval_id}
              approval={a}
              now={now}
              next={i === 0}
              deciding={deciding[a.approval_id]}
              reason={reasons[a.approval_id] ?? ''}
              onReason={(r) => setReasons((m) => ({ ...m, [a.approval_id]: r }))}
              onDecide={(d, r) => send(a.approval_id, d, r)}
            />
          ))}
        </div>
      )}
      {recent.length > 0 && (
        <div className="recent" aria-label="Recently decided">
          <h3>Recently decided</h3>
          <ul>
            {recent.map((r) => (
              <li key={r.approval_id}>
                <span className={r.granted ? 'ok-text' : 'bad-text'}>{describeResolution(r)}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
