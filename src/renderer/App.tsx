/**
 * The panel's frame: navigation with the pending-approvals badge, the connection banner, the
 * current view and toasts. The window title carries the pending count so it shows in the
 * task bar even when the panel is behind other windows.
 */
import { useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { showView, signOut } from './actions';
import { useStore, VIEWS } from './store';
import type { View } from './store';
import { escapeControl } from '../shared/escape';
import { ApprovalsView } from './components/ApprovalsView';
import { ChannelsView } from './components/ChannelsView';
import { DriversView } from './components/DriversView';
import { FleetView } from './components/FleetView';
import { PresenterStrip } from './components/PresenterStrip';
import { ProvidersView } from './components/ProvidersView';
import { SettingsView } from './components/SettingsView';
import { TimelineView } from './components/TimelineView';

const LABELS: Record<View, string> = {
  approvals: 'Approvals',
  timeline: 'Timeline',
  fleet: 'Fleet',
  channels: 'Channels',
  providers: 'Providers',
  drivers: 'Drivers',
  settings: 'Rules & settings',
};

function CurrentView({ view }: { view: View }) {
  switch (view) {
    case 'approvals':
      return <ApprovalsView />;
    case 'timeline':
      return <TimelineView />;
    case 'fleet':
      return <FleetView />;
    case 'channels':
      return <ChannelsView />;
    case 'providers':
      return <ProvidersView />;
    case 'drivers':
      return <DriversView />;
    case 'settings':
      return <SettingsView />;
    default: {
      const never: never = view;
      return never;
    }
  }
}

function ConnectionBanner() {
  const { state, detail } = useStore(useShallow((s) => ({ state: s.connection.state, detail: s.connection.detail })));
  if (state === 'open') return null;
  const text =
    state === 'connecting'
      ? 'Connecting to the hub…'
      : state === 'reconnecting'
        ? `The hub connection was lost — reconnecting${detail ? ` (${detail})` : ''}. Approvals cannot be given until it is back.`
        : state === 'unauthorized'
          ? (detail ?? 'The hub rejected this panel.')
          : 'Disconnected from the hub.';
  return (
    <div className={`banner banner-${state}`} role="alert">
      {text}
    </div>
  );
}

/** The hub refuses agents' calls while its audit log cannot be written; the operator sees why. */
export function AuditBanner() {
  const error = useStore((s) => s.connection.status?.audit_error);
  if (!error) return null;
  return (
    <div className="banner banner-closed" role="alert">
      Agents&apos; calls are refused until the audit can be written again: {escapeControl(error)}
    </div>
  );
}

/** On every other view, a waiting prompt is still impossible to miss. */
function PendingBanner({ count }: { count: number }) {
  return (
    <div className="banner banner-pending" role="status">
      <span>{count === 1 ? 'An agent is waiting for your approval.' : `${count} agent requests are waiting for your approval.`}</span>
      <button type="button" className="btn btn-small btn-primary" onClick={() => showView('approvals')}>
        Review
      </button>
    </div>
  );
}

function Toasts() {
  const toasts = useStore((s) => s.toasts);
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

export function App() {
  const { view, pending, state, host } = useStore(
    useShallow((s) => ({ view: s.view, pending: s.approvals.pending.length, state: s.connection.state, host: s.connection.host })),
  );
  useEffect(() => {
    document.title = pending > 0 ? `(${pending}) Uplink — approval needed` : 'Uplink';
  }, [pending]);
  return (
    <div className="app">
      <nav className="nav" aria-label="Views">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            ⌁
          </span>{' '}
          Uplink
        </div>
        <ul>
          {VIEWS.map((v) => (
            <li key={v}>
              <button
                type="button"
                className={`nav-item ${view === v ? 'active' : ''}`}
                aria-current={view === v ? 'page' : undefined}
                onClick={() => showView(v)}
              >
                {LABELS[v]}
                {v === 'approvals' && pending > 0 && (
                  <span className="count" aria-label={`${pending} pending`}>
                    {pending}
                  </span>
                )}
              </button>
            </li>
          ))}
        </ul>
        <div className={`conn conn-${state}`} title="Hub connection">
          <span className="dot" aria-hidden="true" /> {state === 'open' ? 'connected' : state === 'reconnecting' ? 'reconnecting…' : state}
        </div>
        {host === 'browser' && state === 'open' && (
          <button type="button" className="btn btn-small sign-out" onClick={signOut} title="End this browser's panel session">
            Sign out
          </button>
        )}
      </nav>
      <main className="main">
        <ConnectionBanner />
        <AuditBanner />
        <PresenterStrip />
        {pending > 0 && view !== 'approvals' && <PendingBanner count={pending} />}
        <CurrentView view={view} />
      </main>
      <Toasts />
    </div>
  );
}
