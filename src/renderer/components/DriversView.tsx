/**
 * The driver debugger: every driver (built-in ones run in the hub's process), and for each
 * out-of-process one its process, admission, stderr and live protocol trace, with trust and restart.
 * The hub masks sensitive args before the trace is kept; this view only ever shows what it got.
 */
import { useEffect, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { describeAdmission, stateInWords } from '../../shared/driver-status';
import { escapeControl } from '../../shared/escape';
import type { DriverProcessStatus, DriverTraceEntry } from '../../shared/panel-types';
import { loadChannels, loadDrivers, loadProviders, pollTrace, restartDriver, trustDriver } from '../actions';
import { useStore } from '../store';
import { formatClock, formatDateTime } from '../format';
import { Badge, Empty, ErrorBox, Loading } from './common';
import type { Tone } from './common';

/** How often the view asks while it is open (and the tab is visible). */
export const DRIVER_POLL_MS = 1000;
/** Rows the trace table shows (newest first); the rest stays behind the filters. */
const TRACE_ROWS = 200;

const STATE_TONE: Record<DriverProcessStatus['state'], Tone> = {
  running: 'ok',
  not_responding: 'bad',
  stopping: 'info',
  starting: 'info',
  idle: 'neutral',
  backoff: 'warn',
  refused: 'bad',
  incompatible: 'bad',
  stopped: 'neutral',
  off: 'neutral',
};
const ADMISSION_TONE: Record<DriverProcessStatus['admission'], Tone> = { admitted: 'ok', unchecked: 'neutral', untrusted: 'warn', mismatch: 'bad' };

/** How often the view asks while a restart it started runs, so each step shows as it happens. */
const RESTART_POLL_MS = 250;

/** Drivers the operator must trust before they run (the host says so before a first start too). */
export const awaitingTrust = (d: DriverProcessStatus): boolean => d.admission === 'untrusted' || d.admission === 'mismatch';

/** A request's target as its params name it; the summary may be cut, so a pattern is the fallback. */
function targetOf(summary: string): { addr?: string; op?: string } {
  try {
    const params = JSON.parse(summary) as unknown;
    if (params && typeof params === 'object' && !Array.isArray(params)) {
      const { addr, op } = params as Record<string, unknown>;
      return { ...(typeof addr === 'string' ? { addr } : {}), ...(typeof op === 'string' ? { op } : {}) };
    }
  } catch {
    // cut: fall through
  }
  const field = (name: string) => new RegExp(`^\\{[^{]*"${name}":"((?:[^"\\\\]|\\\\.)*)"`).exec(summary)?.[1];
  const addr = field('addr');
  const op = field('op');
  return { ...(addr !== undefined ? { addr } : {}), ...(op !== undefined ? { op } : {}) };
}

/** Each trace entry's channel and op: a request's from its params, an answer's from its request's id. */
export function traceTargets(driver: string, entries: readonly DriverTraceEntry[]): Map<number, { channel?: string; op?: string }> {
  const out = new Map<number, { channel?: string; op?: string }>();
  const byId = new Map<string, { channel?: string; op?: string }>();
  for (const e of entries) {
    if (e.dir === 'out' && e.type === 'request') {
      const { addr, op } = targetOf(e.summary);
      const t = { ...(addr !== undefined ? { channel: `${driver}:${addr}` } : {}), ...(op !== undefined ? { op } : {}) };
      if (e.id !== undefined) byId.set(String(e.id), t);
      out.set(e.seq, t);
    } else if (e.dir === 'in' && e.id !== undefined && (e.type === 'response' || e.type === 'error' || e.type === 'unanswered')) {
      out.set(e.seq, byId.get(String(e.id)) ?? {});
    } else out.set(e.seq, {});
  }
  return out;
}

function TrustPrompt({ d }: { d: DriverProcessStatus }) {
  const [refusal, setRefusal] = useState<string>();
  const [busy, setBusy] = useState(false);
  const { file, expected, actual } = d.integrity;
  const trust = async (sha256: string) => {
    setBusy(true);
    setRefusal(await trustDriver(d.id, sha256));
    setBusy(false);
  };
  return (
    <div className="trust-prompt" role="group" aria-label={`Trust ${d.id}`}>
      <p>
        <b>{d.admission === 'mismatch' ? `${d.id} changed since you trusted it.` : `${d.id} is new: it runs only once you trust it.`}</b> Trusting admits this
        file with the hash shown; if the file changes, the driver is refused again.
      </p>
      <dl className="kv">
        <dt>Command</dt>
        <dd className="mono">{escapeControl(d.command.join(' '))}</dd>
        <dt>File</dt>
        <dd className="mono">{file ? escapeControl(file) : 'no argument of the command names a file — set integrity.file in config.json'}</dd>
        {expected && (
          <>
            <dt>Trusted sha256</dt>
            <dd className="mono">{expected}</dd>
          </>
        )}
        <dt>sha256 now</dt>
        <dd className="mono" data-testid="trust-hash">
          {actual ?? 'unknown'}
        </dd>
      </dl>
      {refusal && <ErrorBox error={refusal} />}
      {actual && (
        <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void trust(actual)}>
          Trust {d.id}
        </button>
      )}
    </div>
  );
}

function TraceTable({ d, entries }: { d: DriverProcessStatus; entries: DriverTraceEntry[] }) {
  const [channel, setChannel] = useState('');
  const [op, setOp] = useState('');
  const targets = useMemo(() => traceTargets(d.id, entries), [d.id, entries]);
  const channels = [...new Set([...targets.values()].flatMap((t) => (t.channel ? [t.channel] : [])))].sort();
  const ops = [...new Set([...targets.values()].flatMap((t) => (t.op ? [t.op] : [])))].sort();
  const shown = entries
    .filter((e) => {
      const t = targets.get(e.seq) ?? {};
      return (!channel || t.channel === channel) && (!op || t.op === op);
    })
    .slice(-TRACE_ROWS)
    .reverse();
  return (
    <div className="trace">
      <div className="inline-form">
        <label>
          Channel
          <select value={channel} onChange={(e) => setChannel(e.target.value)} aria-label={`${d.id} trace channel`}>
            <option value="">any</option>
            {channels.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        <label>
          Op
          <select value={op} onChange={(e) => setOp(e.target.value)} aria-label={`${d.id} trace op`}>
            <option value="">any</option>
            {ops.map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </label>
        <span className="muted small">{entries.length} messages; newest first</span>
      </div>
      {shown.length === 0 ? (
        <p className="muted small">No protocol messages{channel || op ? ' match' : ' yet'}.</p>
      ) : (
        <table className="table trace-table" aria-label={`${d.id} protocol trace`}>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Dir</th>
              <th scope="col">Type</th>
              <th scope="col">Method</th>
              <th scope="col">Id</th>
              <th scope="col">ms</th>
              <th scope="col">Bytes</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr key={e.seq} className={`trace-${e.type}`}>
                <td className="mono">{formatClock(e.at)}</td>
                <td title={e.dir === 'out' ? 'hub → driver' : 'driver → hub'}>{e.dir === 'out' ? '→' : '←'}</td>
                <td>{e.type}</td>
                <td className="mono">{e.method ? escapeControl(e.method) : ''}</td>
                <td className="mono">{e.id !== undefined ? escapeControl(String(e.id)) : ''}</td>
                <td className="mono">{e.ms ?? ''}</td>
                <td className="mono">{e.bytes}</td>
                <td className="mono trace-summary">{escapeControl(e.summary)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** What a restart the operator started is doing now: the host's state while it runs, then its outcome. */
export function restartProgress(d: DriverProcessStatus, running: boolean, result: DriverProcessStatus | string | undefined): string | undefined {
  if (running) return d.state === 'starting' || d.state === 'idle' ? `starting ${d.id}…` : `stopping ${d.id}…`;
  if (result === undefined) return undefined;
  if (typeof result === 'string') return `restart failed: ${result}`;
  return result.state === 'running'
    ? `restarted: running${result.pid !== undefined ? `, pid ${result.pid}` : ''}`
    : `restarted, but it is not running (${stateInWords(result.state)})`;
}

function RestartButton({ d }: { d: DriverProcessStatus }) {
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<DriverProcessStatus | string>();
  useEffect(() => {
    if (!running) return;
    // The hub answers the restart once it is over; meanwhile its status says which step it is at.
    const timer = setInterval(() => void loadDrivers(), RESTART_POLL_MS);
    return () => clearInterval(timer);
  }, [running]);
  const restart = async () => {
    setRunning(true);
    setResult(undefined);
    setResult(await restartDriver(d.id));
    setRunning(false);
  };
  const progress = restartProgress(d, running, result);
  return (
    <>
      {progress && (
        <span className="muted small" role="status" aria-label={`${d.id} restart`}>
          {escapeControl(progress)}
        </span>
      )}
      <button type="button" className="btn btn-small" disabled={running} aria-busy={running} onClick={() => void restart()}>
        {running ? 'Restarting…' : 'Restart driver'}
      </button>
    </>
  );
}

function ExternalDriver({ d, trace }: { d: DriverProcessStatus; trace: DriverTraceEntry[] }) {
  return (
    <article className="driver-card" aria-label={`driver ${d.id}`}>
      <h3 className="driver-head">
        {d.id}
        <Badge tone="info">out-of-process</Badge>
        <Badge tone={STATE_TONE[d.state]}>{stateInWords(d.state)}</Badge>
        {d.state === 'idle' && d.admission === 'unchecked' ? (
          <Badge tone="neutral">not started yet</Badge>
        ) : (
          <Badge
            tone={d.admitted_by === 'config' ? 'info' : ADMISSION_TONE[d.admission]}
            {...(d.admitted_by === 'config'
              ? { title: 'Its integrity was written into config.json, not trusted in the panel or CLI; the audit records it' }
              : {})}
          >
            {describeAdmission(d)}
          </Badge>
        )}
        <span className="spacer" />
        <RestartButton d={d} />
      </h3>
      <dl className="kv">
        <dt>Command</dt>
        <dd className="mono">{escapeControl(d.command.join(' '))}</dd>
        <dt>pid</dt>
        <dd className="mono">{d.pid ?? '—'}</dd>
        <dt>Protocol</dt>
        <dd className="mono">
          {d.protocol_version ?? '—'}
          {d.extensions.length ? ` (${d.extensions.join(', ')})` : ''}
        </dd>
        <dt>Restarts</dt>
        <dd>
          {d.restarts}
          {d.in_flight ? ` · ${d.in_flight} call(s) in flight` : ''}
        </dd>
        <dt>Last answer</dt>
        <dd>
          {d.last_answer ? `${escapeControl(d.last_answer.method)} at ${formatDateTime(d.last_answer.at)}` : '—'}
          {d.not_responding_since !== undefined ? ` · not responding since ${formatDateTime(d.not_responding_since)}` : ''}
        </dd>
        <dt>Last exit</dt>
        <dd>
          {d.last_exit
            ? `${formatDateTime(d.last_exit.at)} — ${escapeControl(d.last_exit.reason)} (code ${d.last_exit.code ?? '—'}, signal ${d.last_exit.signal ?? '—'})`
            : '—'}
        </dd>
        <dt>Integrity</dt>
        <dd className="mono">
          {d.integrity.file ? `${escapeControl(d.integrity.file)} sha256 ${d.integrity.actual ?? d.integrity.expected ?? 'unknown'}` : '—'}
        </dd>
      </dl>
      {d.error && <ErrorBox error={d.error} />}
      {awaitingTrust(d) && <TrustPrompt d={d} />}
      <h4>stderr</h4>
      {d.stderr.length === 0 ? (
        <p className="muted small">Nothing on stderr.</p>
      ) : (
        <pre className="stderr" aria-label={`${d.id} stderr`}>
          {d.stderr.map(escapeControl).join('\n')}
        </pre>
      )}
      <h4>Protocol trace</h4>
      <TraceTable d={d} entries={trace} />
    </article>
  );
}

export function DriversView() {
  const { list, trace, channelList, providers } = useStore(
    useShallow((s) => ({ list: s.drivers.list, trace: s.drivers.trace, channelList: s.channels.list.data, providers: s.providers.list.data })),
  );
  useEffect(() => {
    void loadChannels();
    void loadProviders();
    // There is no push for driver state or traffic: ask while the view is open and visible.
    const tick = () => {
      if (document.hidden) return;
      void loadDrivers().then(() => Promise.all((useStore.getState().drivers.list.data ?? []).map((d) => pollTrace(d.id))));
    };
    tick();
    const timer = setInterval(tick, DRIVER_POLL_MS);
    return () => clearInterval(timer);
  }, []);
  const external = list.data ?? [];
  const externalIds = new Set(external.map((d) => d.id));
  const builtIn = [...new Set([...(channelList?.health.map((h) => h.driver) ?? []), ...(providers?.flatMap((p) => (p.driver ? [p.driver] : [])) ?? [])])]
    .filter((id) => !externalIds.has(id))
    .sort();
  return (
    <section className="view" aria-labelledby="drivers-h">
      <header className="view-head">
        <h2 id="drivers-h">Drivers</h2>
        <span className="spacer" />
        <span className="muted small">live</span>
      </header>
      {list.error && <ErrorBox error={list.error} onRetry={() => void loadDrivers()} />}
      {list.loading && !list.data && <Loading what="drivers" />}
      {builtIn.map((id) => {
        const health = channelList?.health.find((h) => h.driver === id);
        return (
          <article className="driver-card" key={id} aria-label={`driver ${id}`}>
            <h3 className="driver-head">
              {id}
              <Badge tone="neutral">in-process</Badge>
              {health && <Badge tone={health.ok ? 'ok' : 'bad'}>{health.ok ? 'healthy' : 'unhealthy'}</Badge>}
            </h3>
            <p className="muted small">Built in: it runs inside the hub, so it has no process, admission or protocol trace of its own.</p>
          </article>
        );
      })}
      {list.data && external.length === 0 && (
        <Empty title="No out-of-process drivers">
          Add one to external_drivers in config.json (see the driver protocol in docs/driver-protocol.md) and restart the hub.
        </Empty>
      )}
      {external.map((d) => (
        <ExternalDriver key={d.id} d={d} trace={trace[d.id] ?? []} />
      ))}
    </section>
  );
}
