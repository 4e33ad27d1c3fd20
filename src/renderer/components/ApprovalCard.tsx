/**
 * One approval prompt: props in, `onDecide` out (the Reason text lives in the parent view). Once a
 * decision is sent (`deciding`), every button is disabled — a decision is final.
 */
import { useState } from 'react';
import { escapeControl } from '../../shared/escape';
import type { ArgConstraints, Decision, DecisionScope, PendingApproval } from '../../shared/panel-types';
import { isGlob, scopeInWords } from '../../shared/arg-constraints';
import type { JsonValue } from '../../shared/wire';
import { revealApprovalArgs } from '../actions';
import { describeRequest, formatDuration, recordAgentLabel } from '../format';
import { ArgsView } from './ArgsView';
import { opPhrase } from '../../shared/op-phrase';
import { middleClip, riskCues } from '../../shared/risk';
import { Badge, Kbd } from './common';
import { WouldFailNote } from './WouldFailNote';

/** The four actions, their labels and shortcut keys (shown on the buttons). */
export const DECISION_BUTTONS: ReadonlyArray<{ decision: Decision; label: string; key: string; tone: string; help: string }> = [
  { decision: 'once', label: 'Approve once', key: 'A', tone: 'btn-primary', help: 'Run this one request' },
  { decision: 'session', label: 'Approve for session', key: 'S', tone: '', help: 'Also approve matching requests for the rest of this agent session' },
  { decision: 'always', label: 'Always', key: 'L', tone: '', help: 'Create a standing rule; edit or revoke it in Rules & settings' },
  { decision: 'deny', label: 'Deny', key: 'D', tone: 'btn-danger', help: 'Refuse; the Reason, if any, is returned to the agent' },
];

/**
 * The decisions this panel can make on a prompt: another hub's prompt only once or deny, since
 * session grants and rules belong to the hub that enforces them.
 */
/** The agent a prompt's scope and "deny all" name: its authenticated id. */
const agentId = (a: PendingApproval): string => a.agent.agent_id ?? 'unauthenticated';

export function decisionButtons(a: PendingApproval): typeof DECISION_BUTTONS {
  return a.hub === undefined ? DECISION_BUTTONS : DECISION_BUTTONS.filter((b) => b.decision === 'once' || b.decision === 'deny');
}

export interface ApprovalCardProps {
  approval: PendingApproval;
  now: number;
  deciding?: Decision;
  /** The focused card: the keyboard shortcuts act on it. */
  next: boolean;
  /** How many identical prompts this card stands for (decided together); 1 when alone. */
  count?: number;
  /** `scope`: what "session"/"always" cover when the operator changed it (the hub checks it). */
  onDecide: (decision: Decision, reason: string, scope?: DecisionScope) => void;
  reason: string;
  onReason: (reason: string) => void;
  /** The scope being edited (kept by the parent so the keyboard decides with it too). */
  scope?: ScopeEdit;
  onScope?: (scope: ScopeEdit) => void;
  /** Denies every pending prompt of this card's authenticated agent (with the Reason). */
  onDenyAll?: () => void;
  /** Whether the full arguments are shown (kept by the parent: the keyboard asks for it). */
  argsOpen?: boolean;
  onArgsOpen?: (open: boolean) => void;
  /** The keyboard's first press on a card that needs care: what the second press will do. */
  confirmHint?: string | undefined;
}

/** Longer than this (or multi-line), the one-line arguments get an expander. */
const ARGS_LINE_MAX = 90;
/** A string arg longer than this is cut in the middle on the one line (its end stays visible). */
export const ARG_TEXT_MAX = 72;

/**
 * Args as one inert line: `key: "text"  n: 5`, strings quoted, control characters escaped, a long
 * string cut in the middle with the cut and its full length marked. `cut`: how many args were cut.
 */
export function argsSummary(args: JsonValue): { line: string; cut: number } {
  let cut = 0;
  const one = (v: JsonValue): string => {
    if (typeof v !== 'string') return escapeControl(JSON.stringify(v));
    const clipped = middleClip(v, ARG_TEXT_MAX);
    if (!clipped.cut) return `"${escapeControl(v)}"`;
    cut++;
    return `"${escapeControl(clipped.text)}" (${[...v].length} chars)`;
  };
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return { line: one(args), cut };
  const entries = Object.entries(args);
  const line = entries.length === 0 ? 'no arguments' : entries.map(([k, v]) => `${escapeControl(k)}: ${one(v)}`).join('  ');
  return { line, cut };
}

export const argsLine = (args: JsonValue): string => argsSummary(args).line;

/** Whether a prompt needs a closer look before a keyboard approval: a cut argument or a risk cue. */
export function needsCare(a: Pick<PendingApproval, 'args'>): { cut: number; cues: string[] } {
  return { cut: argsSummary(a.args).cut, cues: riskCues(a.args) };
}

/**
 * Arguments on one line (wrapped, never cut at its end); the full readable view behind an expander
 * when they do not fit. `open`/`onOpen` let the list know the full text is on screen.
 */
function Args({ args, open: shownOpen, onOpen }: { args: JsonValue; open?: boolean | undefined; onOpen?: ((open: boolean) => void) | undefined }) {
  const [ownOpen, setOwnOpen] = useState(false);
  const open = shownOpen ?? ownOpen;
  const setOpen = onOpen ?? setOwnOpen;
  const { line, cut } = argsSummary(args);
  const long = cut > 0 || line.length > ARGS_LINE_MAX || /\\n/.test(line);
  return (
    <div className="args-box">
      {open ? (
        <ArgsView args={args} />
      ) : (
        <code className="args-line" title={line}>
          {line}
        </code>
      )}
      {cut > 0 && !open && (
        <span className="args-cut" role="note">
          {cut === 1 ? '1 argument is' : `${cut} arguments are`} cut in the middle
        </span>
      )}
      {long && (
        <button type="button" className="btn btn-small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Collapse' : 'Show all'}
        </button>
      )}
    </div>
  );
}

/** The target's screenshot with the mark drawn in image pixels, whatever size the image is shown at. */
function Screenshot({ approval }: { approval: PendingApproval }) {
  const [size, setSize] = useState<{ w: number; h: number }>();
  const p = approval.preview;
  if (!p?.image_png) return null;
  const m = p.mark;
  const mw = m?.width ?? 24;
  const mh = m?.height ?? 24;
  return (
    <figure className="shot">
      <div className="shot-frame">
        <img
          src={`data:image/png;base64,${p.image_png}`}
          alt={`Current screenshot of ${approval.channel}`}
          onLoad={(e) => setSize({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight })}
        />
        {m && size && (
          <svg className="shot-mark" viewBox={`0 0 ${size.w} ${size.h}`} preserveAspectRatio="none" aria-hidden="true">
            <rect x={m.width ? m.x : m.x - mw / 2} y={m.height ? m.y : m.y - mh / 2} width={mw} height={mh} rx="3" vectorEffect="non-scaling-stroke" />
          </svg>
        )}
      </div>
      <figcaption>{m ? 'Where the action lands is marked in red.' : 'The target window now.'}</figcaption>
    </figure>
  );
}

/** Why the prompt's picture of the target may be wrong: shown above everything else in the body. */
function PreviewWarnings({ approval }: { approval: PendingApproval }) {
  const warnings = approval.preview?.warnings ?? [];
  if (!warnings.length) return null;
  return (
    <ul className="preview-warnings" aria-label="Preview warnings">
      {warnings.map((w, i) => (
        <li key={i}>⚠ {escapeControl(w)}</li>
      ))}
    </ul>
  );
}

/**
 * The target's last lines of text (a terminal pane), or why they are not shown. In full on the
 * focused card; the others show only the last line (where the keys land) so a busy queue stays compact.
 */
function PaneLines({ approval, focused }: { approval: PendingApproval; focused: boolean }) {
  const [toggled, setToggled] = useState<boolean>();
  const p = approval.preview;
  if (p?.lines_hidden) return <p className="pane-lines-hidden">{escapeControl(p.lines_hidden)}</p>;
  if (!p?.lines?.length) return null;
  const open = toggled ?? focused;
  const shown = open ? p.lines : p.lines.slice(-1);
  return (
    <section className={`pane-lines ${open ? '' : 'pane-lines-short'}`} aria-label={`Last lines of ${escapeControl(approval.channel)}`}>
      <pre>{shown.map(escapeControl).join('\n')}</pre>
      {p.lines.length > 1 && (
        <button type="button" className="btn btn-small" aria-expanded={open} onClick={() => setToggled(!open)}>
          {open ? 'Less' : `${p.lines.length} lines`}
        </button>
      )}
    </section>
  );
}

/**
 * Sensitive text is redacted in the prompt (it is never stored), but the operator decides what is
 * injected, so Reveal fetches it from the hub's memory while the prompt is pending.
 */
function SensitiveArgs({
  approval: a,
  open,
  onOpen,
}: {
  approval: PendingApproval;
  open?: boolean | undefined;
  onOpen?: ((open: boolean) => void) | undefined;
}) {
  const [revealed, setRevealed] = useState<JsonValue>();
  const [busy, setBusy] = useState(false);
  const toggle = async (): Promise<void> => {
    if (revealed !== undefined) return setRevealed(undefined);
    setBusy(true);
    try {
      setRevealed(await revealApprovalArgs(a.approval_id));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Args args={revealed ?? a.args} open={open} onOpen={onOpen} />
      <button
        type="button"
        className="btn btn-small"
        disabled={busy}
        onClick={() => void toggle()}
        title="Show the sensitive text this request would inject (it is not stored; the audit notes that you looked)"
      >
        {revealed === undefined ? 'Reveal' : 'Hide'}
      </button>
    </>
  );
}

/** The op list an operator typed: names or globs separated by commas or spaces. */
export function parseOps(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** The scope as typed, for one decision: only what differs from the hub's default. */
export function scopeFor(decision: Decision, edit: ScopeEdit): DecisionScope | undefined {
  if (decision !== 'session' && decision !== 'always') return undefined;
  const channel = edit.channel.trim();
  const ops = parseOps(edit.ops);
  const scope: DecisionScope = {
    ...(decision === 'always' && edit.agent === 'any' ? { agent: 'any' as const } : {}),
    ...(channel ? { channel } : {}),
    ...(ops.length ? { ops } : {}),
    ...(edit.args && Object.keys(edit.args).length ? { args: edit.args } : {}),
  };
  return Object.keys(scope).length ? scope : undefined;
}

/** The request's args split into those a scope may constrain (exact values to start from) and sensitive ones. */
export function constrainableArgs(a: PendingApproval): { args: ArgConstraints; sensitive: string[] } {
  const out: { args: ArgConstraints; sensitive: string[] } = { args: {}, sensitive: [] };
  if (a.args === null || typeof a.args !== 'object' || Array.isArray(a.args)) return out;
  // The hub names what it redacted: an agent's own text that merely looks redacted stays the agent's.
  const redacted = new Set(a.redacted_args);
  for (const [k, v] of Object.entries(a.args)) {
    if (redacted.has(k)) out.sensitive.push(k);
    else out.args[k] = v;
  }
  return out;
}

/** What "for the session" and "always" will cover, in words (button titles and the scope panel). */
export function scopeWords(a: PendingApproval, edit: ScopeEdit): { session: string; always: string } {
  const typed = parseOps(edit.ops);
  const ops = typed.length ? typed : [a.op];
  const channel = edit.channel.trim();
  const alwaysChannel = channel || a.rule_channel;
  return {
    session: `${scopeInWords({ ops, channel: channel || a.channel, args: edit.args, agent: agentId(a) })}, this session only`,
    always: alwaysChannel
      ? scopeInWords({ ops, channel: alwaysChannel, args: edit.args, agent: edit.agent === 'any' ? undefined : agentId(a) })
      : 'nothing yet: this channel has no stable label (label it, or name a label glob under Scope)',
  };
}

/**
 * The scope panel, behind the Scope button so the compact queue keeps its height: what "for the
 * session" and "always" cover in words, and fields to narrow or widen it (a label glob, a list of
 * ops, any agent). The hub checks the scope and refuses one naming a reusable id, so the card stays.
 */
function ScopePanel({
  approval: a,
  edit,
  onEdit,
  disabled,
  id,
}: {
  approval: PendingApproval;
  edit: ScopeEdit;
  onEdit: (e: ScopeEdit) => void;
  disabled: boolean;
  id: string;
}) {
  const words = scopeWords(a, edit);
  const who = escapeControl(agentId(a));
  return (
    <section className="scope" id={id} aria-label="What session and always cover">
      <p className="small">
        <b>For the session:</b> {escapeControl(words.session)}.
        <br />
        <b>Always:</b> {escapeControl(words.always)}.
      </p>
      <div className="inline-form">
        <label>
          Agent
          <select value={edit.agent} onChange={(e) => onEdit({ ...edit, agent: e.target.value as 'this' | 'any' })} disabled={disabled}>
            <option value="this">this agent ({who})</option>
            <option value="any">any agent (Always only)</option>
          </select>
        </label>
        <label>
          Channel
          <input
            value={edit.channel}
            onChange={(e) => onEdit({ ...edit, channel: e.target.value })}
            placeholder={a.rule_channel ?? a.channel}
            maxLength={256}
            disabled={disabled}
            title="A label or a glob over labels, e.g. tmux:build-*; never a pane or window id"
          />
        </label>
        <label>
          Ops
          <input
            value={edit.ops}
            onChange={(e) => onEdit({ ...edit, ops: e.target.value })}
            placeholder={a.op}
            maxLength={1000}
            disabled={disabled}
            title="Op names or globs, separated by commas"
          />
        </label>
      </div>
      <ArgsScope approval={a} edit={edit} onEdit={onEdit} disabled={disabled} />
    </section>
  );
}

/**
 * "Only these args": each of the request's args can be required as it is, or, for text, as a glob
 * typed over it. Unticked args are free; sensitive ones are never offered (their value would be
 * stored in plain text). The hub checks the names and globs and refuses what it cannot keep.
 */
function ArgsScope({ approval: a, edit, onEdit, disabled }: { approval: PendingApproval; edit: ScopeEdit; onEdit: (e: ScopeEdit) => void; disabled: boolean }) {
  const offered = constrainableArgs(a);
  const names = Object.keys(offered.args);
  if (!names.length && !offered.sensitive.length) return null;
  const args = edit.args;
  const set = (next: ArgConstraints | undefined): void => onEdit({ ...edit, ...(next ? { args: next } : { args: undefined }) });
  const without = (name: string): ArgConstraints => Object.fromEntries(Object.entries(args ?? {}).filter(([k]) => k !== name));
  return (
    <div className="scope-args">
      <label>
        <input
          type="checkbox"
          checked={args !== undefined}
          disabled={disabled || !names.length}
          onChange={(e) => set(e.target.checked ? { ...offered.args } : undefined)}
        />
        Only these args
      </label>
      {args !== undefined && (
        <ul>
          {names.map((name) => {
            const original = offered.args[name]!;
            const c = args[name];
            const label = escapeControl(name);
            return (
              <li key={name}>
                <label>
                  <input
                    type="checkbox"
                    checked={c !== undefined}
                    disabled={disabled}
                    onChange={(e) => set(e.target.checked ? { ...args, [name]: original } : without(name))}
                  />
                  {label}
                </label>{' '}
                {typeof original === 'string' ? (
                  <input
                    aria-label={`${label} (text or glob)`}
                    value={c === undefined ? original : isGlob(c) ? c.glob : typeof c === 'string' ? c : original}
                    onChange={(e) => set({ ...args, [name]: e.target.value === original ? original : { glob: e.target.value } })}
                    disabled={disabled || c === undefined}
                    maxLength={512}
                    title="Exactly this text, or a glob once edited: * matches any run of characters, ? one"
                  />
                ) : (
                  <code title="Exactly this value">{escapeControl(JSON.stringify(original))}</code>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {offered.sensitive.length > 0 && <p className="small muted">{escapeControl(offered.sensitive.join(', '))}: sensitive, cannot be constrained.</p>}
    </div>
  );
}

/** The scope fields as typed on a card; blank means the hub's default. */
export type ScopeEdit = { agent: 'this' | 'any'; channel: string; ops: string; args?: ArgConstraints | undefined };
export const DEFAULT_SCOPE: ScopeEdit = { agent: 'this', channel: '', ops: '' };

export function ApprovalCard({ approval: a, now, deciding, next, count = 1, onDecide, reason, onReason, onDenyAll, ...props }: ApprovalCardProps) {
  // A prompt stamped by a clock ahead of this one (another hub's, or this instant's rounding) has not waited yet.
  const waited = Math.max(0, now - a.requested_at);
  const left = Math.max(0, a.expires_at - now);
  const total = Math.max(1, a.expires_at - a.requested_at);
  const urgent = left < 15_000;
  const reasonId = `reason-${a.approval_id}`;
  const [ownScope, setOwnScope] = useState<ScopeEdit>(DEFAULT_SCOPE);
  const scope = props.scope ?? ownScope;
  const setScope = props.onScope ?? setOwnScope;
  const [scopeOpen, setScopeOpen] = useState(false);
  const words = scopeWords(a, scope);
  const covers = (d: Decision): string => (d === 'session' ? ` — covers ${words.session}` : d === 'always' ? ` — covers ${words.always}` : '');
  const hub = a.hub === undefined ? undefined : escapeControl(a.hub);
  return (
    <article
      className={`approval ${next ? 'approval-next' : ''} ${deciding ? 'approval-deciding' : ''}`}
      aria-label={escapeControl(
        `${recordAgentLabel(a.agent)} wants to ${opPhrase(a.op)} on ${a.channel}${a.hub !== undefined ? ` on hub ${a.hub}` : ''}${count > 1 ? ` (${count} identical requests)` : ''}`,
      )}
      aria-current={next ? 'true' : undefined}
      data-approval-id={a.approval_id}
    >
      <header className="approval-head">
        <div className="approval-title">
          {count > 1 && (
            <span className="approval-count" title="Identical requests, decided together">
              {count}×{' '}
            </span>
          )}
          <span className="agent">{escapeControl(recordAgentLabel(a.agent))}</span>
          <span className="muted"> wants to </span>
          <span className="op" title={`op ${a.op}`}>
            {escapeControl(opPhrase(a.op))}
          </span>
          <span className="muted"> on </span>
          <span className="channel">{escapeControl(a.channel)}</span>
          {a.channel_labels.length > 0 && <span className="labels"> ({escapeControl(a.channel_labels.join(', '))})</span>}
          {hub !== undefined && (
            <>
              {' '}
              <Badge tone="accent" title={`This prompt belongs to hub ${hub} of the fleet: it records and enforces your decision`}>
                on hub {hub}
              </Badge>
            </>
          )}
          {riskCues(a.args).map((cue) => (
            <Badge key={cue} tone="bad" title={`The arguments contain ${cue}: read them in full before you approve`}>
              ⚠ {cue}
            </Badge>
          ))}
          {onDenyAll && hub === undefined && (
            <button
              type="button"
              className="btn btn-small btn-quiet-danger"
              disabled={!!deciding}
              onClick={onDenyAll}
              title="Deny every request this agent has waiting: asks first, with how many and a reason for all of them"
            >
              Deny all from {escapeControl(agentId(a))}
            </button>
          )}
        </div>
        <div className={`countdown ${urgent ? 'countdown-urgent' : ''}`} title="Denied automatically when the time runs out">
          <span>
            waited {formatDuration(waited)} · <span aria-label="time until automatic deny">auto-deny in {formatDuration(left)}</span>
          </span>
          <div className="countdown-bar" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round((left / total) * 100)}>
            <div style={{ width: `${(left / total) * 100}%` }} />
          </div>
        </div>
      </header>
      <div className="approval-sub">
        <p className="will-do">{escapeControl(describeRequest(a))}</p>
        <div className="approval-meta">
          <Badge tone="neutral" title="Provider">
            {a.provider_id}
          </Badge>
          <Badge tone="info" title="Interaction kind">
            {a.interaction}
          </Badge>
          <Badge tone="neutral" title="Capability">
            {a.capability_id}
          </Badge>
          <Badge tone="neutral" title="Agent connection">
            {a.agent.kind}
          </Badge>
        </div>
      </div>
      <WouldFailNote approval={a} disabled={!!deciding} onDeny={(why) => onDecide('deny', why)} />
      <PreviewWarnings approval={a} />
      <div className="approval-body">
        <section aria-label="Arguments">
          {a.sensitive && hub === undefined ? (
            <SensitiveArgs approval={a} open={props.argsOpen} onOpen={props.onArgsOpen} />
          ) : (
            <Args args={a.args} open={props.argsOpen} onOpen={props.onArgsOpen} />
          )}
          {a.sensitive && hub !== undefined && <p className="small muted">Sensitive text is hidden; it can be revealed only on hub {hub}&apos;s own panel.</p>}
        </section>
        <Screenshot approval={a} />
        <PaneLines approval={a} focused={next} />
      </div>
      {hub !== undefined && (
        <p className="small muted remote-note">
          From here you can approve this once or deny it; rules and session grants for hub {hub} are made on its own panel.
        </p>
      )}
      {scopeOpen && hub === undefined && <ScopePanel approval={a} edit={scope} onEdit={setScope} disabled={!!deciding} id={`scope-${a.approval_id}`} />}
      {props.confirmHint && (
        <p className="confirm-hint" role="status">
          {props.confirmHint}
        </p>
      )}
      <footer className="approval-actions">
        <label className="reason" htmlFor={reasonId}>
          <span className="sr-only">Reason</span>
          <input
            id={reasonId}
            type="text"
            value={reason}
            placeholder="Reason (optional; sent to the agent when you deny)"
            onChange={(e) => onReason(e.target.value)}
            disabled={!!deciding}
            maxLength={2000}
          />
        </label>
        <div className="buttons">
          {decisionButtons(a).map((b) => (
            <button
              key={b.decision}
              type="button"
              className={`btn ${b.tone}`}
              disabled={!!deciding}
              aria-keyshortcuts={next ? b.key : undefined}
              title={escapeControl(`${b.help}${covers(b.decision)}${next ? ` (${b.key})` : ''}`)}
              onClick={() => onDecide(b.decision, reason, scopeFor(b.decision, scope))}
            >
              {deciding === b.decision ? 'Sending…' : count > 1 ? `${b.label} (${count})` : b.label}
              {next && <Kbd>{b.key}</Kbd>}
            </button>
          ))}
          {hub === undefined && (
            <button
              type="button"
              className="btn btn-small"
              aria-expanded={scopeOpen}
              aria-controls={`scope-${a.approval_id}`}
              disabled={!!deciding}
              onClick={() => setScopeOpen(!scopeOpen)}
              title="What session and always cover, and change it"
            >
              Scope
            </button>
          )}
        </div>
      </footer>
    </article>
  );
}
