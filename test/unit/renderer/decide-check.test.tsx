// @vitest-environment jsdom
/**
 * A prompt whose approval would fail now says so on its card, with the reason, a one-click denial
 * that asks the agent to read again and a fresh preview; an approval followed by a failure reads
 * "approved once …, then failed: <reason>" in Recently decided — for another hub's call too, from
 * the fleet's timeline — never a green approval beside a bare failure mark.
 */
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { PendingApproval, TimelineEvent } from '../../../src/shared/panel-types';
import { addApproval, enqueueFleetEntry, flushFleetEntries, ingestTimeline, resolveApproval } from '../../../src/renderer/actions';
import { useStore } from '../../../src/renderer/store';
import { ApprovalCard } from '../../../src/renderer/components/ApprovalCard';
import { ApprovalsView } from '../../../src/renderer/components/ApprovalsView';
import { useFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

let fake: FakeApi;
useFakePanel((f) => (fake = f));

const now = Date.now();
const asked: PendingApproval = {
  approval_id: 'a1',
  invocation_id: 'inv-1',
  agent: { kind: 'mcp', agent_id: 'builder', name: 'claude-code' },
  channel: 'tmux:%0',
  channel_labels: [],
  op: 'type',
  capability_id: 'tmux.type',
  args: { text: 'ls' },
  provider_id: 'uplink/tmux',
  interaction: 'typed',
  requested_at: now,
  expires_at: now + 120_000,
};
const wouldFail = {
  reason: 'type needs a read of %0 within the last 60 s (look before you type)',
  hint: 'read first: invoke the read op on tmux:%0, then retry',
  checked_at: now,
};

describe('a prompt whose approval would fail now', () => {
  it('says so with the reason; "Ask the agent to read again" denies with that request; "Fresh preview" asks the hub', async () => {
    const onDecide = vi.fn();
    fake.replies.refreshApproval = { ...asked, would_fail: wouldFail };
    render(<ApprovalCard approval={{ ...asked, would_fail: wouldFail }} now={now} next onDecide={onDecide} reason="" onReason={() => {}} />);
    const alert = screen.getByRole('alert', { name: 'Approving now would fail' });
    expect(alert.textContent).toContain('Approving now would fail: type needs a read of %0 within the last 60 s');
    expect(alert.textContent).toContain('read first: invoke the read op on tmux:%0');
    fireEvent.click(within(alert).getByRole('button', { name: 'Ask the agent to read again' }));
    expect(onDecide).toHaveBeenCalledWith('deny', 'read %0 again, then retry');
    await act(async () => void fireEvent.click(within(alert).getByRole('button', { name: 'Fresh preview' })));
    expect(fake.calls.filter((c) => c.method === 'refreshApproval').map((c) => c.params)).toEqual([{ approval_id: 'a1' }]);
  });

  it('a card without would_fail shows no such note; an approvalUpdated event adds it to the card in place', () => {
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval(asked));
    expect(screen.queryByRole('alert', { name: 'Approving now would fail' })).toBeNull();
    act(() => fake.emit('approvalUpdated', { ...asked, would_fail: wouldFail }));
    expect(screen.getAllByRole('article')).toHaveLength(1);
    expect(screen.getByRole('alert', { name: 'Approving now would fail' })).toBeTruthy();
  });
});

const failed = (invocation_id: string): TimelineEvent => ({
  id: 99,
  at: 99,
  type: 'event',
  kind: 'failed',
  state: 'failed',
  invocation_id,
  channel: 'tmux:%0',
  op: 'type',
  error_code: 'provider_failed',
  outcome: 'failed',
  message: 'type needs a read of %0 within the last 60 s (look before you type)',
});

describe('Recently decided after an approval that failed', () => {
  it('reads "approved once …, then failed: <reason>", not in green', () => {
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval(asked));
    act(() => resolveApproval({ approval_id: 'a1', granted: true, authorized: 'operator', by: 'alice', decision: 'once' }));
    act(() => ingestTimeline([failed('inv-1')]));
    const item = within(screen.getByLabelText('Recently decided')).getByRole('listitem');
    expect(item.textContent).toContain(
      'approved once by the operator (alice), then failed: type needs a read of %0 within the last 60 s (look before you type)',
    );
    expect(item.querySelector('.ok-text')).toBeNull();
  });

  it("another hub's call ends with its outcome from the fleet's timeline instead of staying in progress", () => {
    useStore.setState({ approvals: { ...useStore.getState().approvals, loading: false } });
    render(<ApprovalsView />);
    act(() => addApproval({ ...asked, approval_id: 'b/a1', channel: 'b/tmux:%0', hub: 'b' }));
    act(() => resolveApproval({ approval_id: 'b/a1', granted: true, authorized: 'operator', by: 'alice on hub a', decision: 'once' }));
    const item = () => within(screen.getByLabelText('Recently decided')).getByRole('listitem');
    expect(item().textContent).toContain('in progress');
    act(() => {
      enqueueFleetEntry({ hub: 'b', seq: 7, cursor: 7, event: failed('inv-1') });
      flushFleetEntries();
    });
    expect(item().textContent).not.toContain('in progress');
    expect(item().querySelector('.outcome-failed')).not.toBeNull();
    expect(item().textContent).toContain('then failed: type needs a read of %0');
  });
});
