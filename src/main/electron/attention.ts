/**
 * How the app draws the operator's attention to a new approval without ever taking keyboard
 * focus: an agent may be injecting keys into another window at that very moment, and a window
 * that grabs focus would receive them. So: an OS notification (main process — the renderer's
 * permission requests are all denied, so web `Notification` cannot work in Electron), a flashing
 * task-bar entry, and on a click at most `showInactive()`. Never `show()`, `focus()` or
 * `moveTop()`. Pure over small interfaces so Node tests can prove it.
 */
import type { PendingApproval } from '../../shared/panel-types';
import { agentInWords } from '../../shared/agent-label';
import { opPhrase } from '../../shared/op-phrase';

/** The window surface this module may touch (a subset of BrowserWindow, on purpose). */
export interface AttentionWindow {
  isDestroyed(): boolean;
  isFocused(): boolean;
  isMinimized(): boolean;
  isVisible(): boolean;
  showInactive(): void;
  flashFrame(flag: boolean): void;
  once(event: 'focus', listener: () => void): unknown;
}

/** A notification as Electron's `Notification` takes it. */
export interface NotificationOptions {
  title: string;
  body: string;
  silent: boolean;
}

/** The notification surface (Electron's `Notification`, or a fake in tests). */
export interface NotificationLike {
  on(event: 'click', listener: () => void): unknown;
  show(): void;
}

/** What is needed to notify. */
export interface AttentionDeps {
  window: AttentionWindow | undefined;
  supported: boolean;
  create(options: NotificationOptions): NotificationLike;
}

/** The text of the notification for a prompt; the op and channel are what the operator decides on. */
export function approvalNotification(a: PendingApproval): NotificationOptions {
  const labels = a.channel_labels.length ? ` (${a.channel_labels.join(', ')})` : '';
  return {
    title: `Uplink: ${agentInWords(a.agent)} wants to ${opPhrase(a.op)}`,
    body: `on ${a.channel}${labels} — approve or deny in the Uplink panel`,
    silent: false,
  };
}

/**
 * Notifies about a new prompt when the window is not focused (a focused panel shows it already).
 * Returns whether it notified.
 */
export function notifyApproval(deps: AttentionDeps, a: PendingApproval): boolean {
  const win = deps.window;
  if (!win || win.isDestroyed() || win.isFocused()) return false;
  win.flashFrame(true);
  win.once('focus', () => {
    if (!win.isDestroyed()) win.flashFrame(false);
  });
  if (!deps.supported) return true;
  const n = deps.create(approvalNotification(a));
  // A click brings the panel into view but leaves keyboard focus where it was.
  n.on('click', () => {
    if (!win.isDestroyed() && (!win.isVisible() || win.isMinimized())) win.showInactive();
  });
  // eslint-disable-next-line no-restricted-syntax -- an OS notification, not a window: it takes no focus
  n.show();
  return true;
}
