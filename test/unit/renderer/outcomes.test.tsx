// @vitest-environment jsdom
/**
 * Outcomes in the panel: each ended call shows its own badge (colour, mark and the word), the
 * timeline filters by outcome beside its other filters, and "Recently decided" names what was
 * asked, by whom, how it ended and who decided.
 */
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { PendingApproval, TimelineEvent } from '../../../src/shared/panel-types';
import { OUTCOMES } from '../../../src/shared/audit-record';
import { addApproval, ingestTimeline, resolveApproval } from '../../../src/renderer/actions';
import { useStore } from '../../../src/renderer/store';
import { matchesFilter, mergeEvents } from '../../../src/renderer/store/timeline-model';
import type { InvocationRow } from '../../../src/renderer/store/timeline-model';
import { TimelineRow } from '../../../src/renderer/components/TimelineRow';
import { TimelineView } from '../../../src/renderer/components/TimelineView';
import { ApprovalsView } from '../../../src/renderer/components/ApprovalsView';
import { useFakePanel } from './fake-api';

useFakePanel();

const agent = { kind: 'mcp' as const, agent_id: 'builder', name: 'claude-code' };
let cursor = 0;
const ev = (invocation_id: string, e: Partial<TimelineEvent>): TimelineEvent => ({
  id: ++cursor,
  at: cursor,
  type: 'event',
  kind: 'accepted',
  invocation_id,
  channel: 'tmux:%1',
  op: 'send',
  agent,
  ...e,
});
/** One invocation per outcome, as the hub records them. */
function ended(): TimelineEvent[] {
  return [
    ev('ok', { kind: 'succeeded', state: 'succeeded', outcome: 'succeeded' }),
    ev('broke', { kind: 'failed', state: 'failed', error_code: 'provider_failed', outcome: 'failed' }),
    ev('no', { kind: 'failed', state: 'failed', error_code: 'policy_denied', outcome: 'denied' }),
    ev('late', { kind: 'failed', state: 'failed', error_code: 'policy_denied', outcome: 'timed_out' }),
    ev('stop', { kind: 'cancelled', state: 'cancelled', outcome: 'cancelled' }),
    ev('bad', { type: 'rejected', kind: 'rejected', state: 'rejected', outcome: 'rejected' }),
    ev('gone', { kind: 'failed', state: 'failed', error_code: 'internal', outcome: 'lost' }),
    ev('open', { kind: 'started', state: 'running' }),
  ];
}

function rowsOf(events: TimelineEvent[]): Map<string, InvocationRow> {
  const rows = new Map<string, InvocationRow>();
  mergeEvents(rows, events);
  return rows;
}

describe('outcome badges', () => {
  it('each outcome has its own badge: a distinct class, a mark, the word and what it means', () => {
    const rows = rowsOf(ended());
    const classes = new Set<string>();
    for (const outcome of OUTCOMES) {
      const row = [...rows.values()].find((r) => r.outcome === outcome)!;
      const { container, unmount } = render(<TimelineRow row={row} selected={false} onSelect={() => undefined} top={0} />);
      const badge = container.querySelector('.tl-state .badge')!;
      expect(badge.textContent).toMatch(new RegExp(`^\\S+ ${outcome.replace('_', ' ')}$`));
      expect(badge.getAttribute('title')).toMatch(new RegExp(`^${outcome.replace('_', ' ')}: \\w`));
      expect(badge.querySelector('[aria-hidden="true"]')).not.toBeNull();
      classes.add([...badge.classList].find((c) => c.startsWith('outcome-'))!);
      unmount();
    }
    expect(classes.size).toBe(OUTCOMES.length);
  });

  it('a call still running shows its state, not an outcome', () => {
    const row = rowsOf(ended()).get('open')!;
    expect(row.outcome).toBeUndefined();
    const { container } = render(<TimelineRow row={row} selected={false} onSelect={() => undefined} top={0} />);
    expect(container.querySelector('.tl-state .badge')!.textContent).toBe('running');
  });

  it('rows stored before outcomes were recorded read theirs from their events', () => {
    const rows = rowsOf([
      ev('old', { kind: 'accepted', state: 'accepted' }),
      { ...ev('old', { type: 'decision', kind: 'decision', authorized: 'timeout', granted: false }) },
      ev('old', { kind: 'failed', state: 'failed', error_code: 'policy_denied' }),
    ]);
    expect(rows.get('old')!.outcome).toBe('timed_out');
  });
});

describe('the outcome filter', () => {
  it('matches rows by how they ended, with the other filters', () => {
    const rows = rowsOf(ended());
    const pick = (f: Parameters<typeof matchesFilter>[1]) => [...rows.values()].filter((r) => matchesFilter(r, f)).map((r) => r.key);
    expect(pick({ outcome: 'denied' })).toEqual(['no']);
    expect(pick({ outcome: 'timed_out', state: 'failed' })).toEqual(['late']);
    expect(pick({ outcome: 'denied', op: 'type' })).toEqual([]);
  });

  it('sits beside the state filter in the timeline, listing every outcome, and sets the filter', () => {
    useStore.setState((s) => ({ timeline: { ...s.timeline, historyLoaded: true } }));
    render(<TimelineView />);
    const search = screen.getByRole('search');
    const select = within(search).getByLabelText('Outcome') as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(['', ...OUTCOMES]);
    act(() => void fireEvent.change(select, { target: { value: 'denied' } }));
    expect(useStore.getState().timeline.filter).toEqual({ outcome: 'denied' });
  });
});

describe('Recently decided', () => {
  const asked: PendingApproval = {
    approval_id: 'a1',
    invocation_id: 'no',
    agent: { kind: 'mcp', agent_id: 'builder', name: 'claude-code' },
    channel: 'tmux:%3',
    channel_labels: [],
    op: 'send',
    capability_id: 'tmux.send',
    args: {},
    provider_id: 'uplink/tmux',
    interaction: 'typed',
    requested_at: Date.now(),
    expires_at: Date.now() + 60_000,
  };

  it('names the op, channel, agent, outcome and who decided', () => {
    act(() => addApproval(asked));
    act(() => resolveApproval({ approval_id: 'a1', granted: false, authorized: 'operator', by: 'alice', decision: 'deny', reason: 'wrong pane' }));
    render(<ApprovalsView />);
    const item = () => within(screen.getByLabelText('Recently decided')).getByRole('listitem');
    expect(item().textContent).toContain('send on tmux:%3 · builder (declares "claude-code")');
    expect(item().textContent).toContain('denied by the operator (alice): “wrong pane”');
    expect(item().textContent).toContain('in progress');
    act(() => ingestTimeline([ev('no', { kind: 'failed', state: 'failed', error_code: 'policy_denied', outcome: 'denied' })]));
    expect(item().querySelector('.outcome-denied')?.textContent).toMatch(/denied$/);
  });
});
