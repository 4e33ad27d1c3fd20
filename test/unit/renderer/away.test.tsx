// @vitest-environment jsdom
/**
 * "While you were away": on connecting, the Approvals view lists what ended without the operator
 * since this browser's panel was last connected — timed out, denied by the default policy,
 * cancelled, lost with the hub — one line per call, until dismissed.
 */
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../../src/shared/panel-types';
import { connectionChanged, endedUnattended, showView } from '../../../src/renderer/actions';
import { App } from '../../../src/renderer/App';
import { useFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

let fake: FakeApi;
useFakePanel((f) => (fake = f));

const agent = { kind: 'mcp' as const, agent_id: 'builder', name: 'claude-code' };
let nextId = 1;
const ev = (at: number, fields: Partial<TimelineEvent>): TimelineEvent =>
  ({ id: nextId++, at, type: 'event', kind: 'accepted', channel: 'tmux:build', op: 'send', agent, ...fields }) as TimelineEvent;

describe('while you were away', () => {
  it('lists the prompts that timed out, were auto-denied or lost since the panel was last connected, once each, and is dismissible', async () => {
    const before = Date.now() - 60_000;
    window.localStorage.setItem('uplink.panel-seen-at', String(before));
    const after = before + 1000;
    fake.replies.queryTimeline = {
      events: [
        ev(before - 5000, { type: 'decision', kind: 'decision', invocation_id: 'inv_old', authorized: 'timeout', granted: false }),
        ev(after, { type: 'decision', kind: 'decision', invocation_id: 'inv_late', authorized: 'timeout', granted: false }),
        ev(after + 1, { kind: 'failed', state: 'failed', invocation_id: 'inv_late', outcome: 'timed_out' }),
        ev(after + 2, { type: 'decision', kind: 'decision', invocation_id: 'inv_ok', authorized: 'operator', granted: true, by: 'alice' }),
        ev(after + 3, { kind: 'failed', state: 'failed', invocation_id: 'inv_gone', outcome: 'lost', message: 'lost with the hub: it stopped' }),
      ],
      next_before: null,
    };
    render(<App />);
    act(() => showView('approvals'));
    act(() => connectionChanged('open'));
    const list = await screen.findByRole('region', { name: 'While you were away' });
    await waitFor(() => expect(list.querySelectorAll('li')).toHaveLength(2));
    expect([...list.querySelectorAll('li')].map((li) => li.getAttribute('data-invocation-id'))).toEqual(['inv_late', 'inv_gone']);
    expect(list.textContent).toContain('timed out: the operator did not decide in time (auto-denied)');
    expect(list.textContent).toContain('lost with the hub');
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('region', { name: 'While you were away' })).toBeNull();
    act(() => connectionChanged('closed'));
  });

  it('a browser that never had the panel open lists nothing', async () => {
    window.localStorage.removeItem('uplink.panel-seen-at');
    fake.replies.queryTimeline = {
      events: [ev(Date.now() - 1000, { type: 'decision', kind: 'decision', invocation_id: 'inv_x', authorized: 'timeout', granted: false })],
      next_before: null,
    };
    render(<App />);
    act(() => showView('approvals'));
    act(() => connectionChanged('open'));
    await waitFor(() => expect(window.localStorage.getItem('uplink.panel-seen-at')).not.toBeNull());
    await waitFor(() => expect(fake.calls.some((c) => c.method === 'queryTimeline')).toBe(true));
    expect(screen.queryByRole('region', { name: 'While you were away' })).toBeNull();
    act(() => connectionChanged('closed'));
  });

  it('counts only unattended ends', () => {
    expect(endedUnattended(ev(1, { type: 'decision', kind: 'decision', invocation_id: 'i', authorized: 'default_policy', granted: false }))).toBe(true);
    expect(endedUnattended(ev(1, { type: 'decision', kind: 'decision', invocation_id: 'i', authorized: 'operator', granted: false }))).toBe(false);
    expect(endedUnattended(ev(1, { type: 'decision', kind: 'decision', invocation_id: 'i', authorized: 'cancelled', granted: false }))).toBe(true);
  });
});
