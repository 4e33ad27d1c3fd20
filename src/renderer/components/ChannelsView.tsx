/** Channels by driver, each driver's health, and the selected channel's page. */
import { escapeControl } from '../../shared/escape';
import { useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { PanelChannel } from '../../shared/panel-types';
import { loadChannels, loadDrivers, selectChannel, showView } from '../actions';
import { useStore } from '../store';
import { ChannelPage } from './ChannelPage';
import { awaitingTrust } from './DriversView';
import { Badge, Empty, ErrorBox, Loading, tierLook } from './common';

function detailLine(c: PanelChannel): string {
  const d = c.detail;
  if (!d || typeof d !== 'object' || Array.isArray(d)) return '';
  const pick = ['command', 'title', 'class', 'pid', 'size', 'session', 'window'].filter((k) => d[k] !== undefined && d[k] !== null);
  return escapeControl(pick.map((k) => `${k} ${String(d[k])}`).join(' · '));
}

export function ChannelsView() {
  const { list, selected, untrusted } = useStore(
    useShallow((s) => ({
      list: s.channels.list,
      selected: s.selectedChannel,
      untrusted: (s.drivers.list.data ?? [])
        .filter(awaitingTrust)
        .map((d) => d.id)
        .join(', '),
    })),
  );
  // Panes come and go without an event: refresh whenever the view opens.
  useEffect(() => {
    void loadChannels();
    void loadDrivers();
  }, []);
  const data = list.data;
  const drivers = data ? [...new Set([...data.health.map((h) => h.driver), ...data.channels.map((c) => c.driver)])] : [];
  return (
    <section className="view view-split" aria-labelledby="channels-h">
      <div className="pane-list">
        <header className="view-head">
          <h2 id="channels-h">Channels</h2>
          <span className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => void loadChannels()} disabled={list.loading}>
            {list.loading ? 'Refreshing…' : 'Refresh'}
          </button>
        </header>
        {untrusted && (
          <p className="trust-pointer" role="status">
            {untrusted} {untrusted.includes(',') ? 'wait for your trust before they run' : 'waits for your trust before it runs'}.{' '}
            <button type="button" className="btn btn-small" onClick={() => showView('drivers')}>
              Open Drivers
            </button>
          </p>
        )}
        {list.error && <ErrorBox error={list.error} onRetry={() => void loadChannels()} />}
        {list.loading && !data && <Loading what="channels" />}
        {data && drivers.length === 0 && <Empty title="No drivers are loaded">Check the hub's configuration with `uplink doctor`.</Empty>}
        {drivers.map((driver) => {
          const health = data!.health.find((h) => h.driver === driver);
          const channels = data!.channels.filter((c) => c.driver === driver);
          const err = data!.errors.find((e) => e.driver === driver);
          return (
            <div className="driver" key={driver}>
              <h3 className="driver-head">
                {driver}
                {health && (
                  <Badge tone={health.ok ? 'ok' : 'bad'} title={health.lines.join('\n')}>
                    {health.ok ? 'healthy' : 'unhealthy'}
                  </Badge>
                )}
              </h3>
              {health && !health.ok && (
                <ul className="doctor-lines">
                  {health.lines.map((l, i) => (
                    <li key={i}>{escapeControl(l)}</li>
                  ))}
                </ul>
              )}
              {err && <ErrorBox error={err.error} />}
              {channels.length === 0 && !err && <p className="muted small">No channels.</p>}
              <ul className="channel-list" role="listbox" aria-label={`${driver} channels`}>
                {channels.map((c) => (
                  <li key={c.channel} role="option" aria-selected={selected === c.channel}>
                    <button type="button" className={`channel-item ${selected === c.channel ? 'selected' : ''}`} onClick={() => selectChannel(c.channel)}>
                      <span className="channel-name mono">{escapeControl(c.channel)}</span>
                      {c.labels.map((l) => (
                        <Badge key={l} tone="accent">
                          {escapeControl(l)}
                        </Badge>
                      ))}
                      {c.tier && <Badge {...tierLook(c.tiers, c.tier)}>{escapeControl(c.tier)}</Badge>}
                      <span className="channel-detail muted small">{detailLine(c)}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
      </div>
      <div className="pane-main">
        {selected ? (
          <ChannelPage channel={selected} />
        ) : (
          <Empty title="Pick a channel">Its ops, their schemas, a preview and a form to run an op as the operator appear here.</Empty>
        )}
      </div>
    </section>
  );
}
