/**
 * What a prompt card says when approving it now would fail (the hub checked the driver's guards
 * again, e.g. the agent's read of the pane is more than 60 s old): the reason, a fresh preview for
 * the operator's own look (it does not stand for the agent's read), and a one-click denial that
 * tells the agent what to do first.
 */
import { useState } from 'react';
import { escapeControl } from '../../shared/escape';
import type { PendingApproval } from '../../shared/panel-types';
import { refreshApproval } from '../actions';

/** The denial reason that asks the agent to satisfy the guard and retry; undefined when none fits. */
export function askAgainReason(a: PendingApproval): string | undefined {
  const wf = a.would_fail;
  if (!wf) return undefined;
  const pane = /needs a read of (\S+)/.exec(wf.reason)?.[1];
  if (pane) return `read ${pane} again, then retry`;
  return `it would fail now: ${wf.reason}${wf.hint ? ` — ${wf.hint}` : ''}`.slice(0, 2000);
}

export function WouldFailNote({ approval: a, disabled, onDeny }: { approval: PendingApproval; disabled: boolean; onDeny: (reason: string) => void }) {
  const [refreshing, setRefreshing] = useState(false);
  const wf = a.would_fail;
  if (!wf) return null;
  const reason = askAgainReason(a)!;
  const readAgain = reason.startsWith('read ');
  return (
    <div className="would-fail" role="alert" aria-label="Approving now would fail">
      <p>
        <strong>Approving now would fail:</strong> {escapeControl(wf.reason)}
        {wf.hint && <span className="muted"> — {escapeControl(wf.hint)}</span>}
      </p>
      <div className="row">
        <button
          type="button"
          className="btn btn-danger btn-small"
          disabled={disabled}
          title={escapeControl(`Deny, telling the agent: "${reason}"`)}
          onClick={() => onDeny(reason)}
        >
          {readAgain ? 'Ask the agent to read again' : 'Deny with this reason'}
        </button>
        {a.hub === undefined && (
          <button
            type="button"
            className="btn btn-small"
            disabled={disabled || refreshing}
            title="Look at the target again yourself (recorded as your look; the agent still has to read it)"
            onClick={() => {
              setRefreshing(true);
              void refreshApproval(a.approval_id).finally(() => setRefreshing(false));
            }}
          >
            {refreshing ? 'Refreshing…' : 'Fresh preview'}
          </button>
        )}
      </div>
    </div>
  );
}
