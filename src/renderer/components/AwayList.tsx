/**
 * "While you were away", above the prompts: what ended without the operator since this browser's
 * panel was last connected, one line per call, until dismissed.
 */
import type { TimelineEvent } from '../../shared/audit-record';
import { describeAuthorization } from '../../shared/audit-record';
import { escapeControl } from '../../shared/escape';
import { dismissAway } from '../actions';
import { formatClock, recordAgentLabel } from '../format';
import { useStore } from '../store';
import { OutcomeBadge } from './common';

/** How the call ended, as the badge shows it. */
const outcomeOf = (e: TimelineEvent) => e.outcome ?? (e.authorized === 'timeout' ? 'timed_out' : e.authorized === 'cancelled' ? 'cancelled' : 'denied');

export function AwayList() {
  const away = useStore((s) => s.approvals.away);
  if (away.length === 0) return null;
  return (
    <section className="recent away" aria-labelledby="away-h">
      <div className="row">
        <h3 id="away-h">While you were away</h3>
        <button type="button" className="btn btn-small" onClick={dismissAway}>
          Dismiss
        </button>
      </div>
      <ul>
        {away.map((e) => (
          <li key={e.id} data-invocation-id={e.invocation_id}>
            <OutcomeBadge outcome={outcomeOf(e)} /> <span className="muted">{formatClock(e.at)}</span>{' '}
            <span className="recent-what">
              {escapeControl(e.op ?? '—')} on {escapeControl(e.channel ?? '—')} · {escapeControl(e.agent ? recordAgentLabel(e.agent) : '—')} ·{' '}
            </span>
            <span className="bad-text">{escapeControl((e.outcome === 'lost' ? e.message : describeAuthorization(e)) ?? '')}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
