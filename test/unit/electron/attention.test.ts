import { describe, expect, it } from 'vitest';
import type { AttentionWindow, NotificationOptions } from '../../../src/main/electron/attention';
import { approvalNotification, notifyApproval } from '../../../src/main/electron/attention';
import type { PendingApproval } from '../../../src/shared/panel-types';

const approval: PendingApproval = {
  approval_id: 'a1',
  invocation_id: 'i1',
  agent: { kind: 'mcp', agent_id: 'claude-code', name: 'claude-code' },
  channel: 'tmux:%3',
  channel_labels: ['build'],
  op: 'send',
  capability_id: 'tmux.send',
  args: { message: 'make' },
  provider_id: 'uplink/tmux',
  interaction: 'typed',
  requested_at: 1,
  expires_at: 2,
};

/** A window that records every call; it has no show()/focus()/moveTop() to call at all. */
function fakeWindow(state: { focused?: boolean; visible?: boolean; minimized?: boolean } = {}) {
  const calls: string[] = [];
  let onFocus: (() => void) | undefined;
  const win: AttentionWindow & Record<string, unknown> = {
    isDestroyed: () => false,
    isFocused: () => state.focused ?? false,
    isMinimized: () => state.minimized ?? false,
    isVisible: () => state.visible ?? true,
    showInactive: () => void calls.push('showInactive'),
    flashFrame: (flag: boolean) => void calls.push(`flash:${flag}`),
    once: (_e: 'focus', l: () => void) => (onFocus = l),
    // Focus-taking methods exist on a real BrowserWindow: calling one fails the test.
    show: () => void calls.push('show!'),
    focus: () => void calls.push('focus!'),
    moveTop: () => void calls.push('moveTop!'),
  };
  return { win, calls, focus: () => onFocus?.() };
}

function fakeNotifications() {
  const shown: NotificationOptions[] = [];
  let click: (() => void) | undefined;
  return {
    shown,
    click: () => click?.(),
    create: (o: NotificationOptions) => ({
      on: (_e: 'click', l: () => void) => (click = l),
      show: () => void shown.push(o),
    }),
  };
}

describe('attention for a new approval (Electron main)', () => {
  it('names the agent, op, channel and its label', () => {
    expect(approvalNotification(approval)).toEqual({
      title: 'Uplink: claude-code wants to send',
      body: 'on tmux:%3 (build) — approve or deny in the Uplink panel',
      silent: false,
    });
  });

  it('a declared client name is marked as declared: a client calling itself "operator" is not the operator', () => {
    expect(approvalNotification({ ...approval, agent: { kind: 'mcp', agent_id: 'default', name: 'operator' } }).title).toBe(
      'Uplink: default (declares "operator") wants to send',
    );
    expect(approvalNotification({ ...approval, agent: { kind: 'mcp', name: 'operator' } }).title).toBe(
      'Uplink: unauthenticated (declares "operator") wants to send',
    );
  });

  it('an unfocused window gets an OS notification and a flashing task-bar entry, never focus', () => {
    const w = fakeWindow({ focused: false });
    const n = fakeNotifications();
    expect(notifyApproval({ window: w.win, supported: true, create: n.create }, approval)).toBe(true);
    expect(n.shown).toHaveLength(1);
    expect(w.calls).toEqual(['flash:true']);
    w.focus();
    expect(w.calls).toEqual(['flash:true', 'flash:false']);
  });

  it('clicking the notification reveals a hidden window without taking keyboard focus', () => {
    const w = fakeWindow({ focused: false, visible: false });
    const n = fakeNotifications();
    notifyApproval({ window: w.win, supported: true, create: n.create }, approval);
    n.click();
    expect(w.calls).toContain('showInactive');
    expect(w.calls.filter((c) => c.endsWith('!'))).toEqual([]);
  });

  it('a focused window already shows the prompt: no notification', () => {
    const w = fakeWindow({ focused: true });
    const n = fakeNotifications();
    expect(notifyApproval({ window: w.win, supported: true, create: n.create }, approval)).toBe(false);
    expect(n.shown).toEqual([]);
    expect(w.calls).toEqual([]);
  });

  it('without OS notification support the task bar still flashes', () => {
    const w = fakeWindow({ focused: false });
    const n = fakeNotifications();
    notifyApproval({ window: w.win, supported: false, create: n.create }, approval);
    expect(n.shown).toEqual([]);
    expect(w.calls).toEqual(['flash:true']);
  });

  it('no window (closed on macOS) is harmless', () => {
    expect(notifyApproval({ window: undefined, supported: true, create: fakeNotifications().create }, approval)).toBe(false);
  });
});
