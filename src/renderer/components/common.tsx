/** Small building blocks shared by every view: states, badges, copy fields, keyboard hints. */
import { escapeControl } from '../../shared/escape';
import { useEffect, useState } from 'react';
import type { ReactNode } from 'react';
import type { TierSpec } from '../../shared/wire';
import { OUTCOME_MEANING, outcomeWords } from '../../shared/audit-record';
import type { Outcome } from '../../shared/audit-record';

/** A ticking clock for countdowns; one interval per mounted user. */
export function useNow(intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" role="status">
      <div className="empty-title">{title}</div>
      {children && <div className="empty-body">{children}</div>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

export function ErrorBox({ error, onRetry }: { error: string; onRetry?: () => void }) {
  return (
    <div className="error-box" role="alert">
      <span className="error-text">{error.split('\n').map(escapeControl).join('\n')}</span>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export type Tone = 'neutral' | 'info' | 'ok' | 'warn' | 'bad' | 'accent';

export function Badge({ tone = 'neutral', children, title }: { tone?: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function Kbd({ children }: { children: ReactNode }) {
  return <kbd className="kbd">{children}</kbd>;
}

/** A read-only value with a Copy button (clipboard write needs a secure or loopback context). */
export function CopyField({ label, value, display }: { label: string; value: string; display?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard?.writeText(value).then(
      () => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      },
      () => setCopied(false),
    );
  };
  return (
    <div className="copy-field">
      <span className="copy-label">{label}</span>
      <code className="copy-value">{display ?? value}</code>
      <button type="button" className="btn btn-small" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

/** Pretty JSON for schemas and results. */
export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre className="json" aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** What the driver declares about a channel's tier: its tone by risk, and what it allows. */
export function tierLook(tiers: TierSpec[] | undefined, tier: string): { tone: Tone; title: string } {
  const spec = tiers?.find((t) => t.name === tier);
  // An undeclared tier is shown as a warning: nobody said how little it allows.
  const tone: Tone = spec?.risk === 'low' ? 'neutral' : spec?.risk === 'high' ? 'bad' : 'warn';
  return { tone, title: spec ? `Permission tier: ${spec.description}` : 'Permission tier' };
}

const OUTCOME_MARK: Record<Outcome, string> = { succeeded: '✓', failed: '✕', denied: '⊘', timed_out: '◷', cancelled: '↶', lost: '⚠', rejected: '!' };

/** How a call ended: its own colour and mark, and the word (never colour alone). */
export function OutcomeBadge({ outcome }: { outcome: Outcome }) {
  return (
    <span className={`badge outcome outcome-${outcome}`} title={`${outcomeWords(outcome)}: ${OUTCOME_MEANING[outcome]}`}>
      <span aria-hidden="true">{OUTCOME_MARK[outcome]} </span>
      {outcomeWords(outcome)}
    </span>
  );
}

/** Maps an invocation state to a badge tone. */
export function stateTone(state: string | undefined): Tone {
  switch (state) {
    case 'succeeded':
      return 'ok';
    case 'failed':
    case 'rejected':
      return 'bad';
    case 'cancelled':
      return 'neutral';
    case 'waiting':
      return 'warn';
    case 'action':
      return 'accent';
    case 'running':
    case 'accepted':
      return 'info';
    default:
      return 'neutral';
  }
}
