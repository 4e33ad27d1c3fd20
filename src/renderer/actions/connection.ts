/** Connection: wiring the PanelApi streams into the store, reconnect reloads, view switching. */
import type { Disposer, PanelApi } from '../../shared/panel-api';
import type { ConnectionState } from '../../shared/panel-ws';
import { setApi, signOutPanel } from '../api';
import type { View } from '../store';
import { addApproval, loadApprovals, resolveApproval, updateApproval } from './approvals';
import { awayConnection } from './away';
import { set } from './common';
import { loadDrivers } from './drivers';
import { hubStatusChanged } from './hub';
import { discardFleetBuffer, enqueueFleetEntry, fleetChanged, refreshFleet } from './fleet';
import { discardTimelineBuffer, enqueueTimeline, loadHistory } from './timeline';
import { loadChannels, loadProviders, loadRules, loadSettings } from './views';

/** Wires the PanelApi's event streams into the store; returns the disposer. */
export function startPanel(api: PanelApi, host: 'electron' | 'browser'): Disposer {
  setApi(api);
  set((s) => ({ connection: { ...s.connection, host } }));
  const disposers = [
    api.on('runtimeEvent', (e) => enqueueTimeline(e)),
    api.on('approvalAdded', (a) => addApproval(a)),
    api.on('approvalUpdated', (a) => updateApproval(a)),
    api.on('approvalResolved', (r) => resolveApproval(r)),
    api.on('rulesChanged', (rules) => set((s) => ({ settings: { ...s.settings, rules: { loading: false, data: rules } } }))),
    api.on('settingsChanged', (settings) => set((s) => ({ settings: { ...s.settings, settings: { loading: false, data: settings } } }))),
    api.on('sessionGrantsChanged', (grants) => set((s) => ({ settings: { ...s.settings, sessionGrants: { loading: false, data: grants } } }))),
    api.on('hubStatus', (status) => hubStatusChanged(status)),
    api.on('demoStep', (demo) => set({ demo })),
    api.on('fleetChanged', (view) => fleetChanged(view)),
    api.on('fleetEntry', (e) => enqueueFleetEntry(e)),
  ];
  return () => {
    for (const d of disposers) d();
    discardTimelineBuffer();
    discardFleetBuffer();
  };
}

/** Connection state from the transport; on (re)connect everything is reloaded. */
export function connectionChanged(state: ConnectionState, detail?: string): void {
  set((s) => ({ connection: { ...s.connection, state, ...(detail ? { detail } : { detail: undefined }) } }));
  awayConnection(state === 'open');
  if (state === 'open') {
    // A restarted hub numbers its drivers' trace messages from 1 again: read each trace anew.
    set((s) => ({ drivers: { ...s.drivers, trace: {} } }));
    void refreshAll();
  }
}

/** Reloads every view's data (after a reconnect the hub may have moved on). */
export async function refreshAll(): Promise<void> {
  await Promise.all([loadApprovals(), loadChannels(), loadSettings(), loadRules(), loadProviders(), loadDrivers(), loadHistory(true), refreshFleet()]);
}

/** Ends this browser's panel session: the hub closes its panels, and a fresh link signs in again. */
export function signOut(): void {
  void signOutPanel();
}

/** Switches the main view. */
export function showView(view: View): void {
  set({ view });
}
