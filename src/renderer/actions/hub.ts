/**
 * One hub per tab: the hub's status names it by when it started, and a tab that finds itself
 * talking to another hub (a link of hub B pasted into a tab signed in to hub A, a new hub on the
 * same port) forgets what the old one showed — rows, prompts, channels, rules — before it shows
 * the new one's, so two hubs' records never interleave. The Fleet view is the place for several.
 */
import type { HubStatus } from '../../shared/panel-types';
import { getInitialState } from '../store';
import { get, set } from './common';
import { refreshAll } from './connection';
import { resetTimeline } from './timeline';

/** True when `next` is another hub (or the same data directory's hub started again) than `prev`. */
export const otherHub = (prev: HubStatus | undefined, next: HubStatus): boolean => prev !== undefined && prev.started_at !== next.started_at;

/** A `hubStatus` event: kept, and on another hub everything of the old one is dropped and reloaded. */
export function hubStatusChanged(status: HubStatus): void {
  const prev = get().connection.status;
  set((s) => ({ connection: { ...s.connection, status } }));
  if (!otherHub(prev, status)) return;
  resetTimeline();
  const fresh = getInitialState();
  set({
    approvals: fresh.approvals,
    channels: fresh.channels,
    providers: fresh.providers,
    drivers: fresh.drivers,
    settings: fresh.settings,
    selectedChannel: undefined,
  });
  void refreshAll();
}
