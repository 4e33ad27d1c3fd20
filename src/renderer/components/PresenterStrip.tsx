/**
 * The presenter strip, shown while `uplink demo` runs: which step of the story this is, what the
 * agent is doing and why it matters, where to look, and the demo window live. The hub's demo
 * process is its only source; agents cannot write it.
 */
import { escapeControl } from '../../shared/escape';
import { useStore } from '../store';
import { LiveWindow } from './LiveWindow';

export function PresenterStrip() {
  const step = useStore((s) => s.demo);
  if (!step) return null;
  const done = step.state === 'done';
  return (
    <section className="presenter" aria-label="Demo presenter">
      <div className="presenter-text">
        <div className="presenter-head">
          <span className="presenter-badge">Demo</span>
          <b>{step.step === 0 ? 'Ready' : `Step ${step.step} of ${step.total}`}</b>
          <span className="presenter-title">{escapeControl(step.title)}</span>
          {done && <span className="presenter-done">story complete</span>}
        </div>
        <p className="presenter-why">{escapeControl(step.why)}</p>
        <p className="presenter-look">
          <span className="muted">Look at: </span>
          {escapeControl(step.look)}
        </p>
        {step.summary && <p className="presenter-summary muted small">{escapeControl(step.summary)}</p>}
      </div>
      {step.window_channel && (
        <div className="presenter-live">
          <LiveWindow channel={step.window_channel} className="presenter-img" />
        </div>
      )}
    </section>
  );
}
