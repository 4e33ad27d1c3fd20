// @vitest-environment jsdom
/**
 * The fleet in the panel: the Fleet view says when this hub is in no fleet and otherwise lists
 * every member live; the merged timeline filters by hub, takes live entries and pages back; a
 * prompt of another hub can only be approved once or denied from here, and one withdrawn from
 * this panel reads as withdrawn, never as denied.
 */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { FleetTimelineEntry, FleetView, PendingApproval, TimelineEvent } from '../../../src/shared/panel-types';
import { addApproval, connectionChanged, flushFleetEntries, mergeFleetEntries, resolveApproval, showView } from '../../../src/renderer/actions';
import { useStore } from '../../../src/renderer/store';
import { App } from '../../../src/renderer/App';
import { ApprovalCard } from '../../../src/renderer/components/ApprovalCard';
import { ApprovalsView, ARM_DELAY_MS } from '../../../src/renderer/components/ApprovalsView';
import { useFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

let fake: FakeApi;
useFakePanel((f) => (fake = f));

const now = Date.now();
const fleet: FleetView = {
  enabled: true,
  name: 'laptop',
  url: 'nats://127.0.0.1:4222',
  connected: true,
  members: [
    { hub: 'laptop', state: 'self', since: now - 3_600_000, panels: 1 },
    { hub: 'buildbox', state: 'connected', since: now - 120_000, panels: 0 },
  ],
};

async function openFleet(): Promise<void> {
  act(() => showView('fleet'));
  connectionChanged('open');
  render(<App />);
  // Loaded: the fleet's status is in, and nothing (status or timeline) is loading any more.
  await waitFor(() => {
    expect(useStore.getState().fleet.status.data).toBeDefined();
    expect(screen.queryByText(/Loading the fleet/)).toBeNull();
  });
}

const membersTable = () => screen.getByRole('table', { name: 'Fleet members' });
const rowOf = (table: HTMLElement, first: string) =>
  within(table)
    .getAllByRole('row')
    .find((r) => r.querySelector('td')?.textContent === first);

describe('the Fleet view', () => {
  it('a hub in no fleet says so and how to join, and shows nothing else', async () => {
    await openFleet();
    expect(screen.getByRole('navigation').textContent).toContain('Fleet');
    expect(screen.getByText(/This hub is not in a fleet/).textContent).toMatch(/fleet.*config\.json.*in \/data.*docs\/fleet\.md/);
    expect(screen.queryByRole('table')).toBeNull();
    expect(fake.calls.some((c) => c.method === 'fleetTimeline')).toBe(false);
  });

  it('a connected hub shows its name, URL and every member with its state, since when and panels', async () => {
    fake.replies.fleetStatus = fleet;
    await openFleet();
    const self = screen.getByText(/This hub is/);
    expect(self.textContent).toContain('laptop');
    expect(self.textContent).toContain('nats://127.0.0.1:4222');
    expect(self.textContent).toContain('connected');
    const me = rowOf(membersTable(), 'laptop')!;
    expect(me.textContent).toContain('this hub');
    expect(me.textContent).toMatch(/1 h 00 min ago/);
    const other = rowOf(membersTable(), 'buildbox')!;
    expect(other.textContent).toContain('connected');
    expect(other.textContent).toMatch(/2 min 0\d s ago/);
  });

  it('a member going out of reach shows live as unreachable with the problem; this hub losing NATS shows why', async () => {
    fake.replies.fleetStatus = fleet;
    await openFleet();
    act(() =>
      fake.emit('fleetChanged', {
        ...fleet,
        connected: false,
        problem: 'the fleet\u001b[2J NATS server is unreachable',
        members: [fleet.members[0]!, { hub: 'buildbox', state: 'unreachable', since: now - 5_000, problem: 'not heard from for 6 s' }],
      }),
    );
    const other = rowOf(membersTable(), 'buildbox')!;
    expect(other.textContent).toContain('unreachable');
    expect(other.textContent).toContain('not heard from for 6 s');
    const self = screen.getByText(/This hub is/);
    expect(self.textContent).toContain('not connected');
    expect(self.textContent).toContain('the fleet\\x1b[2J NATS server is unreachable');
  });
});

let seq = 0;
const agent = { kind: 'mcp' as const, agent_id: 'laptop/default', name: 'laptop/claude-code' };
function entry(hub: string, cursor: number, e: Partial<TimelineEvent> = {}): FleetTimelineEntry {
  return {
    hub,
    seq: ++seq,
    cursor,
    event: {
      id: seq,
      at: now - 1000 + cursor,
      type: 'event',
      kind: 'accepted',
      invocation_id: `${hub}-${cursor}`,
      channel: 'tmux:%1',
      op: 'send',
      agent,
      ...e,
    },
  };
}

describe('the merged timeline', () => {
  const timeline = () => screen.getByRole('table', { name: 'Fleet timeline' });
  const bodyRows = () => within(timeline()).getAllByRole('row').slice(1);

  it('lists every hub’s entries newest first, with hub, outcome wording, channel, op, agent and escaped message', async () => {
    fake.replies.fleetStatus = fleet;
    fake.replies.fleetTimeline = {
      entries: [
        entry('buildbox', 3, {
          kind: 'failed',
          state: 'failed',
          outcome: 'denied',
          authorized: 'operator',
          granted: false,
          reason: 'not now',
          message: 'denied\u001b]0;x\u0007',
        }),
        entry('laptop', 2, { kind: 'started', op: 'read' }),
        entry('laptop', 1, { kind: 'approval_denied', op: 'type' }),
      ],
      next_before: 1,
    };
    await openFleet();
    const [first, second, third] = bodyRows();
    // The same words as the Timeline: a denial on the way is "not approved", never a raw kind.
    expect(third!.textContent).toContain('not approved');
    expect(third!.textContent).not.toContain('approval_denied');
    expect(first!.textContent).toContain('buildbox');
    expect(first!.textContent).toContain('denied by the operator: “not now”');
    expect(first!.textContent).toContain('denied\\x1b]0;x\\x07');
    expect(first!.querySelector('.outcome-denied')).not.toBeNull();
    expect(first!.textContent).toContain('laptop/default (declares "laptop/claude-code")');
    expect(second!.textContent).toContain('laptop');
    expect(second!.textContent).toContain('started');
    expect(second!.textContent).toContain('read');
  });

  it('a live entry arrives at the top; Load older pages back with before', async () => {
    fake.replies.fleetStatus = fleet;
    fake.replies.fleetTimeline = (p: { before?: number }) =>
      p.before === undefined ? { entries: [entry('laptop', 5)], next_before: 5 } : { entries: [entry('buildbox', 1, { op: 'older-op' })], next_before: null };
    await openFleet();
    act(() => {
      fake.emit('fleetEntry', entry('buildbox', 6, { op: 'live-op' }));
      flushFleetEntries();
    });
    expect(bodyRows()[0]!.textContent).toContain('live-op');
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Load older' })));
    await screen.findByText(/since the start of the fleet’s history/);
    expect(fake.calls.filter((c) => c.method === 'fleetTimeline').map((c) => c.params)).toEqual([{ limit: 500 }, { limit: 500, before: 5 }]);
    expect(bodyRows().map((r) => r.querySelectorAll('td')[4]!.textContent)).toEqual(['live-op', 'send', 'older-op']);
    expect(screen.getByText(/since the start of the fleet’s history/)).not.toBeNull();
  });

  it('the hub filter asks the hub for that member’s entries and keeps other hubs’ live entries out', async () => {
    fake.replies.fleetStatus = fleet;
    fake.replies.fleetTimeline = (p: { hub?: string }) => ({
      entries: p.hub ? [entry(p.hub, 7)] : [entry('laptop', 8), entry('buildbox', 7)],
      next_before: null,
    });
    await openFleet();
    expect(bodyRows()).toHaveLength(2);
    const select = within(screen.getByRole('region', { name: 'Merged timeline' })).getByRole('combobox');
    expect([...select.querySelectorAll('option')].map((o) => o.textContent)).toEqual(['all', 'laptop', 'buildbox']);
    fireEvent.change(select, { target: { value: 'buildbox' } });
    await waitFor(() => expect(bodyRows().map((r) => r.querySelectorAll('td')[1]!.textContent)).toEqual(['buildbox']));
    expect(fake.calls.filter((c) => c.method === 'fleetTimeline').at(-1)!.params).toEqual({ limit: 500, hub: 'buildbox' });
    act(() => {
      fake.emit('fleetEntry', entry('laptop', 9, { op: 'elsewhere' }));
      fake.emit('fleetEntry', entry('buildbox', 10, { op: 'here' }));
      flushFleetEntries();
    });
    const hubs = bodyRows().map((r) => r.querySelectorAll('td')[1]!.textContent);
    expect(hubs).toEqual(['buildbox', 'buildbox']);
    expect(bodyRows()[0]!.textContent).toContain('here');
  });

  it('keeps at most the bound in memory, the oldest dropped and paged from there', () => {
    const entries = [entry('a', 3), entry('a', 2)];
    const merged = mergeFleetEntries(entries, [entry('b', 4), entries[0]!], null, 2);
    expect(merged.entries.map((e) => e.cursor)).toEqual([4, 3]);
    expect(merged.before).toBe(3);
  });
});

const remote: PendingApproval = {
  approval_id: 'buildbox/ap-1',
  invocation_id: 'inv-9',
  agent: { kind: 'mcp', agent_id: 'buildbox/default', name: 'buildbox/claude-code' },
  channel: 'buildbox/tmux:%3',
  channel_labels: [],
  op: 'type',
  capability_id: 'terminal.type',
  args: { text: '•••• (sensitive, 12 chars)' },
  sensitive: true,
  provider_id: 'uplink/tmux',
  interaction: 'typed',
  requested_at: now,
  expires_at: now + 60_000,
  hub: 'buildbox',
};

describe('a prompt from another hub', () => {
  it('shows which hub it is on and offers only Approve once and Deny: no session, always, scope, reveal or deny-all', () => {
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval(remote));
    const card = screen.getByRole('article');
    expect(within(card).getByText('on hub buildbox')).not.toBeNull();
    const buttons = within(card)
      .getAllByRole('button')
      .map((b) => b.textContent?.replace(/[A-Z]$/, ''));
    expect(buttons).toEqual(['Approve once', 'Deny']);
    expect(card.textContent).toContain('rules and session grants for hub buildbox are made on its own panel');
    expect(card.textContent).toContain('it can be revealed only on hub buildbox');
  });

  it('a session or always key does nothing on it; Approve once sends once', async () => {
    render(<ApprovalCard approval={remote} now={now} next onDecide={() => {}} reason="" onReason={() => {}} />);
    expect(screen.queryByRole('button', { name: /Approve for session|Always|Scope|Reveal/ })).toBeNull();
    cleanup();
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval(remote));
    // Armed: the card's clock moves past the arming delay (only Date is faked; the panel restores it).
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + ARM_DELAY_MS);
    await act(async () => {
      fireEvent.keyDown(window, { key: 's' });
      fireEvent.keyDown(window, { key: 'l' });
    });
    expect(fake.calls.filter((c) => c.method === 'decide')).toEqual([]);
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: /Approve once/ })));
    expect(fake.calls.filter((c) => c.method === 'decide').map((c) => c.params)).toEqual([{ approval_id: 'buildbox/ap-1', decision: 'once' }]);
  });

  it('withdrawn: the card goes and Recently decided reads withdrawn with the reason, never denied', () => {
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval(remote));
    act(() => resolveApproval({ approval_id: 'buildbox/ap-1', granted: false, authorized: 'withdrawn', reason: 'hub buildbox is out of reach' }));
    expect(screen.queryByRole('article')).toBeNull();
    const recent = screen.getByLabelText('Recently decided');
    expect(recent.textContent).toContain('withdrawn — hub buildbox is out of reach');
    expect(recent.textContent).toContain('type on buildbox/tmux:%3');
    expect(recent.textContent).not.toMatch(/denied/);
  });
});
