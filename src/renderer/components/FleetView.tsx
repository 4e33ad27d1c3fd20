/**
 * The fleet: this hub's place in it, every member as this hub sees it (live), and the fleet's
 * merged timeline, newest first, with a hub filter. Everything here comes from other machines:
 * every text is shown with its control characters escaped.
 */
import { memo, useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { FleetMember, FleetTimelineEntry, FleetView as Fleet } from '../../shared/panel-types';
import { describeAuthorization, outcomeOf } from '../../shared/audit-record';
import { escapeControl } from '../../shared/escape';
import { MAX_FLEET_ENTRIES, loadFleetStatus, loadFleetTimeline, setFleetHub } from '../actions';
import { useStore } from '../store';
import { recordAgentLabel, formatAgo, formatClock, formatDateTime } from '../format';
import { Badge, Empty, ErrorBox, Loading, OutcomeBadge, useNow } from './common';
import type { Tone } from './common';
import { eventWord } from './TimelineRow';

const STATE: Record<FleetMember['state'], { word: string; tone: Tone }> = {
  self: { word: 'this hub', tone: 'accent' },
  connected: { word: 'connected', tone: 'ok' },
  unreachable: { word: 'unreachable', tone: 'bad' },
};

export function FleetView() {
  const status = useStore((s) => s.fleet.status);
  const dataDir = useStore((s) => s.settings.settings.data?.data_dir);
  const view = status.data;
  return (
    <section className="view" aria-labelledby="fleet-h">
      <header className="view-head">
        <h2 id="fleet-h">Fleet</h2>
        {view?.enabled && <span className="muted">{view.members.length === 1 ? '1 hub' : `${view.members.length} hubs`}</span>}
      </header>
      {status.error && <ErrorBox error={status.error} onRetry={() => void loadFleetStatus()} />}
      {!view ? (
        status.loading && <Loading what="the fleet" />
      ) : !view.enabled ? (
        <p className="muted">
          This hub is not in a fleet. To join one, add a <code>fleet</code> section (<code>url</code> of the NATS server, this hub&apos;s <code>name</code>,{' '}
          <code>token_file</code>) to <code>config.json</code>
          {dataDir ? (
            <>
              {' '}
              in <code>{escapeControl(dataDir)}</code>
            </>
          ) : (
            ' in the data directory'
          )}{' '}
          and restart the hub; <code>docs/fleet.md</code> describes it.
        </p>
      ) : (
        <>
          <FleetHeader view={view} />
          <Members members={view.members} />
          <FleetTimeline members={view.members} />
        </>
      )}
    </section>
  );
}

function FleetHeader({ view }: { view: Fleet }) {
  return (
    <p className="fleet-self">
      This hub is <b>{escapeControl(view.name ?? '—')}</b> on <code>{escapeControl(view.url ?? '—')}</code>:{' '}
      {view.connected ? <Badge tone="ok">connected</Badge> : <Badge tone="bad">not connected</Badge>}
      {view.problem && <span className="bad-text"> {escapeControl(view.problem)}</span>}
      <br />
      {view.identity === 'keys' ? (
        <Badge tone="ok">signed: each hub speaks with its own key</Badge>
      ) : (
        <span className="bad-text">
          {escapeControl(view.warning ?? 'members of this fleet can speak for each other (shared token, no roster) — hint: uplink fleet init')}
        </span>
      )}
      {dropped(view.dropped) && <span className="muted"> Dropped messages: {dropped(view.dropped)}</span>}
    </p>
  );
}

/** Messages this hub did not believe, by reason, in words; undefined when none was dropped. */
function dropped(counts: Fleet['dropped']): string | undefined {
  const parts = Object.entries(counts ?? {})
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${escapeControl(reason.replace('_', ' '))} ${n}`);
  return parts.length ? parts.join(', ') : undefined;
}

function Members({ members }: { members: FleetMember[] }) {
  const now = useNow(1000);
  return (
    <table className="table" aria-label="Fleet members">
      <thead>
        <tr>
          <th scope="col">Hub</th>
          <th scope="col">State</th>
          <th scope="col">Since</th>
          <th scope="col">Panels</th>
          <th scope="col">Problem</th>
        </tr>
      </thead>
      <tbody>
        {members.map((m) => (
          <tr key={m.hub}>
            <td>{escapeControl(m.hub)}</td>
            <td>
              <Badge tone={STATE[m.state].tone}>{STATE[m.state].word}</Badge>
            </td>
            <td title={m.state === 'unreachable' ? 'Out of reach since' : 'In the fleet since'}>
              {formatDateTime(m.since)} <span className="muted">({formatAgo(m.since, now)})</span>
            </td>
            <td>{m.panels ?? '—'}</td>
            <td>{m.problem ? escapeControl(m.problem) : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What a record says, in words: how the call was authorized, and what the agent was told. */
function recordMessage(r: FleetTimelineEntry['event']): string {
  return [describeAuthorization(r), r.message].filter(Boolean).join(' — ');
}

const FleetRow = memo(function FleetRow({ entry }: { entry: FleetTimelineEntry }) {
  const r = entry.event;
  const outcome = outcomeOf(r);
  const agent = r.agent ? recordAgentLabel(r.agent) : '—';
  const text = escapeControl(recordMessage(r));
  return (
    <tr>
      <td title={formatDateTime(r.at)}>{formatClock(r.at)}</td>
      <td>{escapeControl(entry.hub)}</td>
      <td>{outcome ? <OutcomeBadge outcome={outcome} /> : escapeControl(eventWord(r))}</td>
      <td>{r.channel ? escapeControl(r.channel) : '—'}</td>
      <td>{r.op ? escapeControl(r.op) : '—'}</td>
      <td>{escapeControl(agent)}</td>
      <td title={text}>{text}</td>
    </tr>
  );
});

function FleetTimeline({ members }: { members: FleetMember[] }) {
  const f = useStore(
    useShallow((s) => ({
      entries: s.fleet.entries,
      hub: s.fleet.hub,
      before: s.fleet.before,
      loaded: s.fleet.loaded,
      loadingOlder: s.fleet.loadingOlder,
      error: s.fleet.error,
    })),
  );
  useEffect(() => {
    if (!f.loaded) void loadFleetTimeline(true);
  }, [f.loaded]);
  const hubs = members.map((m) => m.hub);
  if (f.hub && !hubs.includes(f.hub)) hubs.push(f.hub);
  return (
    <section aria-labelledby="fleet-tl-h">
      <header className="view-head">
        <h3 id="fleet-tl-h">Merged timeline</h3>
        <span className="muted">newest first</span>
        <span className="spacer" />
        <label>
          Hub{' '}
          <select value={f.hub ?? ''} onChange={(e) => setFleetHub(e.target.value || undefined)}>
            <option value="">all</option>
            {hubs.map((h) => (
              <option key={h} value={h}>
                {escapeControl(h)}
              </option>
            ))}
          </select>
        </label>
      </header>
      {f.error && <ErrorBox error={f.error} onRetry={() => void loadFleetTimeline(!f.loaded)} />}
      {!f.loaded && f.entries.length === 0 ? (
        !f.error && <Loading what="the fleet's timeline" />
      ) : f.entries.length === 0 ? (
        <Empty title="No fleet activity yet">Every hub&apos;s calls, approvals and rejections show up here as they happen.</Empty>
      ) : (
        <table className="table fleet-timeline" aria-label="Fleet timeline">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Hub</th>
              <th scope="col">What</th>
              <th scope="col">Channel</th>
              <th scope="col">Op</th>
              <th scope="col">Agent</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {f.entries.map((e) => (
              <FleetRow key={`${e.hub}/${e.seq}`} entry={e} />
            ))}
          </tbody>
        </table>
      )}
      <div className="tl-strip muted" aria-live="polite">
        {f.loadingOlder ? (
          'Loading…'
        ) : !f.loaded ? null : f.before === null ? (
          'Showing everything since the start of the fleet’s history'
        ) : f.entries.length >= MAX_FLEET_ENTRIES ? (
          `Showing the newest ${MAX_FLEET_ENTRIES.toLocaleString()} entries; each hub's full history is in its own \`uplink log\`.`
        ) : (
          <button type="button" className="btn btn-small" onClick={() => void loadFleetTimeline()}>
            Load older
          </button>
        )}
      </div>
    </section>
  );
}
