/** The detail of one invocation: request, every event, output or error, how it was authorized. */
import type { InvocationDetail, TimelineEvent } from '../../shared/panel-types';
import type { Loadable } from '../store';
import type { InvocationRow } from '../store/timeline-model';
import { describeAuthorization, invocationAuthorization, outcomeOf } from '../../shared/audit-record';
import type { Outcome } from '../../shared/audit-record';
import { agentLabel, recordAgentLabel, formatClock, formatDateTime, formatDuration } from '../format';
import { ArgsView } from './ArgsView';
import { Badge, ErrorBox, Loading, OutcomeBadge, stateTone } from './common';
import { eventWord } from './TimelineRow';

/** A state not ended yet, in words. */
const STATE_WORDS: Record<string, string> = { accepted: 'accepted', running: 'running', waiting: 'waiting for the operator', action: 'operator action' };

function EventLine({ e, t0, outcome }: { e: TimelineEvent; t0: number; outcome?: Outcome }) {
  // The phrase already carries the reason where it matters; elsewhere the reason repeats it.
  const how = describeAuthorization(e);
  return (
    <tr>
      <td className="num">{e.sequence ?? '—'}</td>
      <td>
        <span className={`ev ev-${e.kind}`}>{eventWord(e, outcome)}</span>
      </td>
      <td className="mono">{formatClock(e.at)}</td>
      <td className="num">+{formatDuration(e.at - t0)}</td>
      <td>
        {[...(how ? [how] : [e.by && `by ${e.by}`, e.reason && `“${e.reason}”`]), e.message, e.error_code && `(${e.error_code})`].filter(Boolean).join(' · ')}
      </td>
    </tr>
  );
}

export function InvocationDetailPane({ row, detail, onClose }: { row: InvocationRow; detail: Loadable<InvocationDetail>; onClose: () => void }) {
  const d = detail.data;
  const events = d?.events.length ? d.events : row.events;
  const t0 = events[0]?.at ?? row.first_at;
  const state = d?.state ?? row.state;
  // How it ended, in the one vocabulary (a denial reads "denied", never its record's "failed").
  const outcome = (d?.events.length ? outcomeOf(d.events) : undefined) ?? row.outcome;
  return (
    <aside className="detail" aria-label="Invocation detail">
      <header className="detail-head">
        <div>
          <h3>
            {row.op ? (
              <>
                {row.op} <span className="muted">on</span> {row.channel ?? '—'}
              </>
            ) : row.state === 'action' ? (
              'An operator action'
            ) : (
              `A request ${row.channel ? `on ${row.channel}` : ''} refused before it ran`
            )}
          </h3>
          <div className="mono muted small">
            {row.invocation_id ?? (row.state === 'action' ? 'an operator action (no invocation)' : 'rejected before it became an invocation')}
          </div>
        </div>
        <button type="button" className="btn btn-small" onClick={onClose} aria-label="Close detail">
          ✕
        </button>
      </header>
      {detail.loading && <Loading what="the invocation" />}
      {detail.error && <ErrorBox error={detail.error} />}
      <section>
        <h4>Request</h4>
        <dl className="kv">
          <dt>{outcome ? 'Outcome' : 'State'}</dt>
          <dd>
            {outcome ? <OutcomeBadge outcome={outcome} /> : <Badge tone={stateTone(row.state)}>{STATE_WORDS[row.state] ?? state}</Badge>}{' '}
            {d?.duration_ms !== undefined && <span className="muted">in {formatDuration(d.duration_ms)}</span>}
          </dd>
          <dt>Agent</dt>
          <dd>{d?.agent ? recordAgentLabel(d.agent) : agentLabel(row)}</dd>
          <dt>Capability</dt>
          <dd className="mono">{d?.capability_id ?? '—'}</dd>
          <dt>Provider</dt>
          <dd className="mono">
            {d?.provider_id ?? row.provider_id ?? '—'} {(d?.interaction ?? row.interaction) && <Badge tone="info">{d?.interaction ?? row.interaction}</Badge>}
          </dd>
          <dt>Started</dt>
          <dd>{formatDateTime(row.first_at)}</dd>
          <dt>Authorized</dt>
          <dd>{invocationAuthorization(events) ?? (outcome === 'rejected' ? 'refused before it ran' : '—')}</dd>
        </dl>
        <h4>Arguments</h4>
        <ArgsView args={d?.args ?? events.find((e) => e.args !== undefined)?.args} />
      </section>
      <section>
        <h4>Events</h4>
        <table className="events">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">At</th>
              <th scope="col">Δ</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <EventLine key={e.id} e={e} t0={t0} outcome={outcome} />
            ))}
          </tbody>
        </table>
      </section>
      {(d?.error || row.message) && (
        <section>
          <h4>Error</h4>
          <pre className="error-pre">{d?.error ?? row.message}</pre>
          {d?.error_detail && (
            <>
              <h5>Operator-only detail</h5>
              <pre className="error-pre">{d.error_detail}</pre>
            </>
          )}
        </section>
      )}
      {d?.error_detail && !(d.error || row.message) && (
        // What a call that succeeded found for the operator (a reply its addressee did not write).
        <section>
          <h4>Operator-only detail</h4>
          <pre className="error-pre">{d.error_detail}</pre>
        </section>
      )}
      {d?.output !== undefined && (
        <section>
          <h4>Output</h4>
          <ArgsView args={d.output} />
        </section>
      )}
    </aside>
  );
}
