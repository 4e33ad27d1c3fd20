/**
 * The timeline: kernel events enriched with the hub's call context (channel, op, agent, provider,
 * interaction, timings), decisions and rejected requests, committed to the audit store in batches
 * and fed to live subscribers (the panel) with their ids once stored.
 */
import type { ErrorCode, InvocationState, RuntimeEvent } from '../kernel';
import type { AuditStore } from './audit-store';
import type { CallContext } from './call-context';
import { HubError } from './errors';
import type { AuditEntry, AuditPage, AuditQuery, CallOptions, Disposer } from './types';

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
/** Longest an event waits in the queue before its batch commits. */
const FLUSH_MS = 20;
/** A batch this big commits at once. */
const FLUSH_MAX = 256;
/** Events kept for another try after a failed commit, at most. */
const MAX_REQUEUED = 10_000;
/** Wait before trying a failed commit again. */
const RETRY_MS = 1000;

/** What a call hears when its audit rows cannot be written (and what new calls hear until they can). */
export function auditUnavailable(why: string): HubError {
  return new HubError('core', 'Unavailable', `the audit log cannot be written (${why})`, {
    hint: 'free disk space (or repair the audit file) in the Uplink data directory; the hub retries by itself and `uplink doctor` shows the audit state',
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

/** Kernel wire messages carry their own hint; the hub renders its own, so keep only the first part. */
export function kernelText(message: string): string {
  const i = message.indexOf(' — hint:');
  return i >= 0 ? message.slice(0, i) : message;
}

/** The audit entry for a kernel event; `describe` gives the agent-facing error of a failure. */
export function eventEntry(e: RuntimeEvent, ctx: CallContext | undefined, now: () => number, describe: (ctx: CallContext, code: ErrorCode, message: string) => HubError): Omit<AuditEntry, 'id'> {
  const entry: Omit<AuditEntry, 'id'> = { at: e.at ?? now(), type: 'event', kind: e.kind, invocation_id: e.invocation_id, sequence: e.sequence, state: stateAfter(e.kind) };
  if (e.provider_id) entry.provider_id = e.provider_id;
  if (!ctx) {
    if (e.error) {
      entry.error_code = e.error.code;
      entry.message = kernelText(e.error.message);
    }
    return entry;
  }
  entry.channel = ctx.channel;
  entry.op = ctx.op;
  entry.capability_id = ctx.capability_id;
  entry.agent = ctx.agent;
  if (ctx.provider_id) entry.provider_id = ctx.provider_id;
  if (ctx.interaction) entry.interaction = ctx.interaction;
  if (e.kind === 'accepted') {
    if (ctx.args !== undefined) entry.args = ctx.args;
    if (ctx.authorized) {
      entry.authorized = ctx.authorized;
      entry.granted = true;
    }
  }
  if (e.approval?.by) entry.by = e.approval.by;
  if (e.approval?.reason) entry.reason = e.approval.reason;
  if (TERMINAL.has(e.kind)) {
    entry.duration_ms = entry.at - ctx.accepted_at;
    if (e.kind === 'succeeded' && ctx.output !== undefined && !ctx.sensitive) entry.output = ctx.output;
    if (e.error) {
      const err = describe(ctx, e.error.code, e.error.message);
      entry.error_code = e.error.code;
      entry.error_kind = err.kind;
      entry.message = err.message;
      if (err.hint) entry.hint = err.hint;
      // Operator-only detail; never for calls carrying sensitive text.
      if (!ctx.sensitive) {
        const detail = [ctx.detail, ctx.driverError?.evidence && `evidence: ${ctx.driverError.evidence}`].filter(Boolean).join('\n');
        if (detail) entry.detail = detail.slice(0, 8192);
      }
    }
  }
  return entry;
}

/** Batches entries into the audit store and feeds live subscribers. */
export class Timeline {
  #audit: AuditStore;
  #pending: Array<Omit<AuditEntry, 'id'>> = [];
  /** How many of `#pending` (always a prefix) are in the journal, and the line holding the last. */
  #journaled = 0;
  #journalSeq = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #listeners = new Set<(e: AuditEntry) => void>();

  constructor(audit: AuditStore) {
    this.#audit = audit;
  }

  subscribe(listener: (e: AuditEntry) => void): Disposer {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Queues an entry. Decisions (`durable`) commit at once, fsynced, together with everything
   * queued before them — before they take effect, so a decision an agent heard of survives a
   * crash. Other entries commit in batches within FLUSH_MS (one WAL commit for many events).
   */
  record(entry: Omit<AuditEntry, 'id'>, durable = false): void {
    this.#pending.push(entry);
    if (durable || this.#pending.length >= FLUSH_MAX) {
      this.flush(durable);
      return;
    }
    this.#timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /**
   * Before a reply or error leaves the hub: makes what is queued survive a kill -9 with one
   * journal write; the SQLite commit follows with the batch (within FLUSH_MS), off the reply's
   * path. Without a journal (the disk refused it) it commits now instead.
   */
  beforeReply(): boolean {
    if (this.#pending.length === this.#journaled) return true;
    try {
      this.#journalSeq = this.#audit.journal(this.#pending.slice(this.#journaled));
      this.#journaled = this.#pending.length;
      return true;
    } catch {
      return this.flush();
    }
  }

  /**
   * Commits what is queued (fsynced with `durable`); returns whether it did. A failed durable
   * commit throws the audit's `Unavailable` error.
   */
  flush(durable = false): boolean {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return true;
    const journaled = this.#journaled;
    const batch = this.#pending.splice(0);
    this.#journaled = 0;
    let stored: AuditEntry[];
    try {
      stored = this.#audit.appendMany(batch, durable, journaled > 0 ? this.#journalSeq : undefined);
    } catch (e) {
      // A decision that cannot be recorded must not take effect (it is dropped — the last entry,
      // the one that asked for this commit — and the caller hears why). Journaled entries stay in
      // the journal for a later replay; other events are queued again for the next commit, up to
      // a bound (best effort when SQLite keeps failing).
      this.#pending.unshift(...batch.slice(journaled, durable ? -1 : undefined));
      // While SQLite keeps failing, only the newest MAX_REQUEUED events wait for the next try.
      if (this.#pending.length > MAX_REQUEUED) this.#pending.splice(0, this.#pending.length - MAX_REQUEUED);
      if (this.#pending.length > 0) this.#timer ??= setTimeout(() => this.flush(), RETRY_MS);
      if (durable) throw auditUnavailable(this.#audit.failure() ?? String((e as Error)?.message ?? e));
      return false;
    }
    for (const entry of stored) {
      for (const l of this.#listeners) {
        try {
          l(entry);
        } catch {
          // A timeline listener's failure must not break a call.
        }
      }
    }
    return true;
  }

  /** Reads the store (after committing what is queued). */
  query(q: AuditQuery): AuditPage {
    this.flush();
    return this.#audit.query(q);
  }
}

/** Periodic progress while a call waits for the operator or runs long, plus kernel progress events. */
export function startProgress(ctx: CallContext, options: CallOptions, every: number, now: () => number): () => void {
  if (!options.onProgress) return () => undefined;
  const report = options.onProgress;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    const secs = Math.round((now() - ctx.accepted_at) / 1000);
    const waiting = ctx.approval_id !== undefined && !ctx.started;
    try {
      report({ progress: ticks, message: waiting ? `waiting for operator approval of ${ctx.op} on ${ctx.channel} (${secs} s)` : `${ctx.capability_id} running (${secs} s)` });
    } catch {
      // A broken progress sink must not fail the call.
    }
  }, every);
  timer.unref?.();
  ctx.onProgress = (p) => {
    ticks++;
    report({ progress: ticks, ...(p.total !== undefined ? { total: p.total } : {}), message: p.message ?? `${ctx.capability_id} progress ${p.progress}` });
  };
  return () => clearInterval(timer);
}
