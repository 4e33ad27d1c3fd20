/** One invocation in the timeline: time, state, who did what where, what it sent, its events in sequence. */
import { memo } from 'react';
import { escapeControl } from '../../shared/escape';
import { outcomeWords } from '../../shared/audit-record';
import type { Outcome } from '../../shared/audit-record';
import type { TimelineEvent } from '../../shared/panel-types';
import type { InvocationRow } from '../store/timeline-model';
import { agentLabel, formatClock, formatDuration } from '../format';
import { Badge, OutcomeBadge, stateTone } from './common';

/**
 * Each record kind in a word or two (the timeline's event chips, the detail pane, the fleet
 * timeline). The record that ends a call reads as its outcome instead (`eventWord`), so a call
 * the operator denied shows "not approved" then "denied" — never "denied" and "failed" at once.
 */
export const EVENT_WORDS: Record<string, string> = {
  accepted: 'accepted',
  started: 'started',
  cancellation_requested: 'cancelling',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  approval_requested: 'asked',
  approval_granted: 'approved',
  approval_denied: 'not approved',
  progress: 'progress',
  decision: 'decision',
  rejected: 'rejected',
};

/** A record in words: the call's outcome on the record that ends it, else its kind's word. */
export function eventWord(e: Pick<TimelineEvent, 'kind' | 'outcome'>, outcome?: Outcome): string {
  const ended = e.outcome ?? (ENDING.has(e.kind) ? outcome : undefined);
  return ended ? outcomeWords(ended) : (EVENT_WORDS[e.kind] ?? e.kind.replace(/_/g, ' '));
}
const ENDING = new Set(['succeeded', 'failed', 'cancelled', 'rejected']);

export const ROW_HEIGHT = 34;

export const TimelineRow = memo(function TimelineRow({
  row,
  selected,
  onSelect,
  top,
}: {
  row: InvocationRow;
  selected: boolean;
  onSelect: (key: string) => void;
  top: number;
}) {
  const open = row.state === 'waiting' || row.state === 'running' || row.state === 'accepted';
  const duration = row.duration_ms ?? (open || row.state === 'action' || row.state === 'rejected' ? undefined : row.last_at - row.first_at);
  return (
    <div
      role="row"
      id={`tl-${row.key}`}
      aria-selected={selected}
      tabIndex={-1}
      className={`tl-row ${selected ? 'tl-row-selected' : ''}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
      onClick={() => onSelect(row.key)}
      data-key={row.key}
    >
      <span role="cell" className="tl-time">
        {formatClock(row.first_at)}
      </span>
      <span role="cell" className="tl-state">
        {row.outcome ? <OutcomeBadge outcome={row.outcome} /> : <Badge tone={stateTone(row.state)}>{row.state}</Badge>}
      </span>
      <span role="cell" className="tl-agent" title={escapeControl(agentLabel(row))}>
        {escapeControl(agentLabel(row))}
      </span>
      <span role="cell" className="tl-op">
        {row.op ? escapeControl(row.op) : row.state === 'action' ? 'setting' : '—'}
      </span>
      <span role="cell" className="tl-channel" title={row.channel && escapeControl(row.channel)}>
        {row.channel ? escapeControl(row.channel) : '—'}
      </span>
      <span role="cell" className="tl-summary" title={row.summary}>
        {row.summary ?? ''}
      </span>
      <span role="cell" className="tl-events" aria-label="events in sequence">
        {row.state === 'action' && <span className="muted small">{row.events[0]?.reason ?? row.events[0]?.message ?? ''}</span>}
        {row.events
          .filter((e) => e.kind !== 'decision')
          .map((e) => (
            <span
              key={e.id}
              className={`ev ev-${e.kind}`}
              title={`#${e.sequence ?? '—'} ${eventWord(e, row.outcome)}${e.reason ? `: ${escapeControl(e.reason)}` : ''}`}
            >
              {e.sequence !== undefined && <b>{e.sequence}</b>}
              <i>{eventWord(e, row.outcome)}</i>
            </span>
          ))}
      </span>
      <span role="cell" className="tl-dur">
        {duration !== undefined ? formatDuration(duration) : open ? '…' : ''}
      </span>
    </div>
  );
});
