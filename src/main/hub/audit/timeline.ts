/**
 * The timeline: a projection of recorded kernel events (an event + the call's immutable facts +
 * what the kernel says of its outcome → an audit entry), plus decisions and rejected requests,
 * committed to the audit store in batches and fed to live subscribers (the panel) with their ids
 * once stored. Every entry is masked first: no live secret of the hub reaches the audit or the panel.
 */
import type { InteractionKind, InvocationState, JsonValue, ProgressDetail, RuntimeEvent } from '../../kernel';
import { boundedEntry } from './bounded';
import type { AuditStore } from './store';
import { GONE_HINT, isGone } from './watch';
import type { CallContext } from '../call-context';
import { HubError } from '../errors';
import { outcomeOf } from '../../../shared/audit-record';
import type { Outcome } from '../../../shared/audit-record';
import { Emitter } from '../../../shared/emitter';
import type { AuditEntry, AuditPage, AuditQuery, CallOptions, Disposer } from '../types';

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Longest an event waits in the queue before its batch commits. */
const FLUSH_MS = 20;
/**
 * A batch this big commits at once, in the turn of the event that filled it; a queue left longer
 * (a retry after the store failed) commits this many per turn of the event loop. Either way one
 * commit is well under a millisecond of SQLite and hashing, and one call in about 16 carries it.
 */
export const COMMIT_BATCH = 48;
/** Events kept for another try after a failed commit, at most. */
const MAX_REQUEUED = 10_000;
/** Wait before trying a failed commit again (a released lock or freed disk is used within this). */
const RETRY_MS = 200;

/** What a call hears when its audit rows cannot be written (and what new calls hear until they can). */
export function auditUnavailable(why: string): HubError {
  return new HubError('core', 'Unavailable', `the audit log cannot be written (${why})`, {
    hint: isGone(why)
      ? GONE_HINT
      : 'free disk space (or repair the audit file) in the Uplink data directory; the hub retries by itself and `uplink doctor` shows the audit state',
  });
}

/** The invocation's state after an event. */
export function stateAfter(kind: RuntimeEvent['kind']): InvocationState {
  switch (kind) {
    case 'accepted':
    case 'approval_requested':
    case 'approval_granted':
    case 'approval_denied':
      return 'accepted';
    case 'started':
    case 'progress':
    case 'cancellation_requested':
      return 'running';
    case 'succeeded':
    case 'failed':
    case 'cancelled':
      return kind;
    default: {
      const never: never = kind;
      return never;
    }
  }
}

/** What the kernel says of an event's invocation, beyond the event itself (terminal events). */
export interface EventOutcome {
  interaction?: InteractionKind;
  /** A `succeeded` event's output (left out for sensitive calls). */
  output?: JsonValue;
  /** A `failed` event's error as the agent hears it. */
  error?: HubError;
  /** Operator-only detail of a failure, or of what a success found (left out for sensitive calls). */
  detail?: string;
  /** How the call ended, where its event alone does not say (else `error`'s, else derived). */
  ended?: Outcome;
}

/** The audit entry for a kernel event of a call (`ctx`, its facts) or of an unknown invocation. */
export function eventEntry(e: RuntimeEvent, ctx: CallContext | undefined, now: () => number, outcome: EventOutcome = {}): Omit<AuditEntry, 'id'> {
  const entry: Omit<AuditEntry, 'id'> = {
    at: e.at ?? now(),
    type: 'event',
    kind: e.kind,
    invocation_id: e.invocation_id,
    sequence: e.sequence,
    state: stateAfter(e.kind),
  };
  if (e.provider_id) entry.provider_id = e.provider_id;
  if (!ctx) {
    if (e.error) {
      entry.error_code = e.error.code;
      entry.message = e.error.message;
    }
    return entry;
  }
  entry.channel = ctx.channel;
  entry.op = ctx.op;
  entry.capability_id = ctx.capability_id;
  entry.agent = ctx.recorded;
  if (outcome.interaction) entry.interaction = outcome.interaction;
  if (e.kind === 'accepted') {
    if (ctx.args !== undefined) entry.args = ctx.args;
    // The broker permits every read-only call: said here, with no decision row on the hot path.
    if (ctx.safety === 'read_only') {
      entry.authorized = 'default_policy';
      entry.granted = true;
    }
  }
  if (e.approval?.by) entry.by = e.approval.by;
  if (e.approval?.reason) entry.reason = e.approval.reason;
  if (TERMINAL.has(e.kind)) {
    entry.duration_ms = entry.at - ctx.accepted_at;
    if (e.kind === 'succeeded' && outcome.output !== undefined && !ctx.sensitive) entry.output = outcome.output;
    if (e.error) {
      entry.error_code = e.error.code;
      if (outcome.error) {
        entry.error_kind = outcome.error.kind;
        entry.message = outcome.error.message;
        if (outcome.error.hint) entry.hint = outcome.error.hint;
      } else {
        entry.message = e.error.message;
      }
    }
    // A failure's detail, or what a success found that the operator must see (a forged reply).
    if (outcome.detail && !ctx.sensitive) entry.detail = outcome.detail.slice(0, 8192);
    const ended = outcome.ended ?? outcome.error?.outcome;
    if (ended) entry.outcome = ended;
  }
  return entry;
}

/** What the timeline needs of the hub's secret mask (credentials' `SecretMask`). */
export interface EntryMask {
  maskFields<T extends object>(record: T, skip?: ReadonlySet<string>): T;
}

/**
 * Fields the hub fills from its own vocabulary — ids, enums, numbers, times — which no driver,
 * agent or person writes: not scanned for secrets (every other field is, new ones included).
 */
const HUB_FIELDS: ReadonlySet<string> = new Set([
  'at',
  'type',
  'kind',
  'invocation_id',
  'sequence',
  'capability_id',
  'provider_id',
  'interaction',
  'state',
  'error_code',
  'error_kind',
  'authorized',
  'granted',
  'duration_ms',
  'decision',
  'rule_id',
  'outcome',
]);

/** Batches entries into the audit store and feeds live subscribers. */
export class Timeline {
  #audit: AuditStore;
  #secrets: EntryMask | undefined;
  #pending: Array<Omit<AuditEntry, 'id'>> = [];
  /**
   * The journal lines holding a prefix of `#pending`, oldest first: where each line's entries end
   * in `#pending` (exclusive) and its seq. A commit ends on a line's end, so its mark never
   * covers a line only part of which is stored.
   */
  #lines: Array<{ end: number; seq: number }> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #soon: ReturnType<typeof setImmediate> | undefined;
  #entries = new Emitter<AuditEntry>();

  constructor(audit: AuditStore, secrets?: EntryMask) {
    this.#audit = audit;
    this.#secrets = secrets;
  }

  subscribe(listener: (e: AuditEntry) => void): Disposer {
    return this.#entries.on(listener);
  }

  /**
   * Queues an entry. Decisions (`durable`) commit at once, fsynced, together with everything
   * queued before them — before they take effect, so a decision an agent heard of survives a
   * crash. Other entries commit in batches: COMMIT_BATCH at once, or what is queued FLUSH_MS
   * after the first of them (one WAL commit for many events).
   */
  record(entry: Omit<AuditEntry, 'id'>, durable = false): void {
    const ended = entry.outcome === undefined ? outcomeOf(entry) : undefined;
    if (ended) entry = { ...entry, outcome: ended };
    // Bounded now (a screenshot's output summarized), so the queue never holds a delivered payload.
    if (entry.output !== undefined) entry = boundedEntry(entry);
    // Masked before anything keeps it (the queue, the journal, the store, the panel's live feed),
    // once bounded: an output is scanned here as stored, at most its first 16 KiB.
    if (this.#secrets) entry = this.#secrets.maskFields(entry, HUB_FIELDS);
    this.#pending.push(entry);
    if (durable) {
      this.flush(true);
      return;
    }
    // Committed in this turn: a commit left to a later one runs while the event loop waits for
    // something, such as a driver's answer, which it would then hold back.
    if (this.#pending.length >= COMMIT_BATCH) this.flush();
    else this.#timer ??= setTimeout(() => this.#commitSoon(), FLUSH_MS);
  }

  /**
   * Before a reply or error leaves the hub: makes what is queued survive a kill -9 with one
   * journal write; the SQLite commit follows with the batch (within FLUSH_MS), off the reply's
   * path. Without a journal (the disk refused it) it commits now instead.
   */
  beforeReply(): boolean {
    return this.#journalRest(false) || this.flush();
  }

  /**
   * Commits what is queued now (fsynced with `durable`); returns whether it did, or (a decision)
   * made it durable in the journal instead. A decision that can be neither throws the audit's
   * `Unavailable` error and does not take effect.
   */
  flush(durable = false): boolean {
    this.#unschedule();
    if (this.#pending.length === 0) return true;
    const failed = this.#commit(this.#pending.length, durable);
    if (!failed) return true;
    // A decision takes effect once it is durable: fsynced in the journal when the table is
    // locked or failing. When even that fails it is dropped and the caller hears why.
    if (durable && !this.#journalRest(true)) {
      this.#pending.pop();
      this.#bound();
      throw auditUnavailable(this.#audit.failure() ?? String((failed.error as Error)?.message ?? failed.error));
    }
    this.#bound();
    return durable;
  }

  /**
   * Commits the queue when its time is up (or a retry is due): at most COMMIT_BATCH entries in one
   * turn of the event loop (a commit is synchronous; a long one would hold every call waiting
   * behind it), the rest in the turns after, until the queue is empty.
   */
  #commitSoon(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#soon ??= setImmediate(() => {
      this.#soon = undefined;
      if (this.#pending.length === 0) return;
      // Ends on a journal line's end (a line bigger than a batch goes whole).
      let count = Math.min(this.#pending.length, COMMIT_BATCH);
      const straddled = this.#lines.find((l) => l.end > count);
      if (straddled) count = this.#lines.findLast((l) => l.end <= count)?.end ?? straddled.end;
      if (this.#commit(count, false)) this.#bound();
      else if (this.#pending.length > 0) this.#commitSoon();
    });
  }

  /**
   * Commits the first `count` queued entries, marking the last journal line they end; returns
   * undefined when it did, else what the store threw. On failure nothing of them is stored: they stay queued, the journaled ones
   * with their lines (the store keeps the journal file they are in), and a retry is set.
   */
  #commit(count: number, durable: boolean): { error: unknown } | undefined {
    const batch = count === this.#pending.length ? this.#pending : this.#pending.slice(0, count);
    const line = this.#lines.findLast((l) => l.end <= count);
    let stored: AuditEntry[];
    try {
      stored = this.#audit.appendMany(batch, durable, line?.seq);
    } catch (error) {
      this.#unschedule();
      this.#timer = setTimeout(() => this.#commitSoon(), RETRY_MS);
      return { error };
    }
    this.#pending.splice(0, count);
    this.#lines = this.#lines.filter((l) => l.end > count).map((l) => ({ end: l.end - count, seq: l.seq }));
    for (const entry of stored) this.#entries.emit(entry);
    return undefined;
  }

  #unschedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#soon) clearImmediate(this.#soon);
    this.#soon = undefined;
  }

  /** How many of `#pending` (always a prefix) are in the journal. */
  get #journaled(): number {
    return this.#lines.at(-1)?.end ?? 0;
  }

  /** Journals what is queued and not journaled yet (fsynced with `sync`); returns whether all of it is. */
  #journalRest(sync: boolean): boolean {
    if (this.#pending.length === this.#journaled) return true;
    try {
      const seq = this.#audit.journal(this.#pending.slice(this.#journaled), sync);
      this.#lines.push({ end: this.#pending.length, seq });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * While the store keeps failing, at most MAX_REQUEUED entries wait in memory: past that the
   * journaled ones are left to the journal (retired, replayed before any later commit), then only
   * the newest of the rest wait (best effort: none of them was answered on).
   */
  #bound(): void {
    if (this.#pending.length <= MAX_REQUEUED) return;
    if (this.#journaled > 0) {
      this.#audit.retireJournal();
      this.#pending.splice(0, this.#journaled);
      this.#lines = [];
    }
    if (this.#pending.length > MAX_REQUEUED) this.#pending.splice(0, this.#pending.length - MAX_REQUEUED);
  }

  /**
   * At shutdown, before the store closes: commits what is queued, or else journals it (fsynced)
   * for the next process to replay; no retry is left behind to run against a closed store.
   */
  close(): void {
    if (!this.flush()) this.#journalRest(true);
    this.#unschedule();
  }

  /** Reads the store (after committing what is queued). */
  query(q: AuditQuery): AuditPage {
    this.flush();
    return this.#audit.query(q);
  }
}

/**
 * Periodic progress while a call waits for the operator (`waiting`) or runs long; `forward` turns
 * the call's kernel `progress` events into the caller's progress.
 */
export function startProgress(
  ctx: CallContext,
  options: CallOptions,
  every: number,
  now: () => number,
  waiting: () => boolean,
): { stop: () => void; forward?: (progress: ProgressDetail) => void } {
  if (!options.onProgress) return { stop: () => undefined };
  const report = options.onProgress;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    const secs = Math.round((now() - ctx.accepted_at) / 1000);
    try {
      report({
        progress: ticks,
        message: waiting() ? `waiting for operator approval of ${ctx.op} on ${ctx.channel} (${secs} s)` : `${ctx.capability_id} running (${secs} s)`,
      });
    } catch {
      // A broken progress sink must not fail the call.
    }
  }, every);
  timer.unref?.();
  const forward = (p: ProgressDetail): void => {
    ticks++;
    report({ progress: ticks, ...(p.total !== undefined ? { total: p.total } : {}), message: p.message ?? `${ctx.capability_id} progress ${p.progress}` });
  };
  return { stop: () => clearInterval(timer), forward };
}
