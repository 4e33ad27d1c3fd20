/**
 * One retained invocation, stored compactly: the event history is a flat number array of
 * (kind code, timestamp) pairs, the rare approval/progress details live in a side list, and the
 * abort controller exists only while the provider runs. Wire objects (snapshots, events,
 * receipts) are built on demand.
 */
import type { LazyAbort } from './lazy-signal';
import type { OfferEntry } from './registry';
import type {
  ApprovalDetail,
  HostSnapshot,
  InvocationReceipt,
  InvocationSnapshot,
  InvocationState,
  JsonValue,
  ProgressDetail,
  RuntimeDiagnostic,
  RuntimeEvent,
  RuntimeEventKind,
  SoftwareUseErrorWire,
} from './types';

/** Event kinds by their compact code (the index). */
export const KIND_CODES = [
  'accepted',
  'started',
  'cancellation_requested',
  'succeeded',
  'failed',
  'cancelled',
  'approval_requested',
  'approval_granted',
  'approval_denied',
  'progress',
] as const satisfies readonly RuntimeEventKind[];

export const enum Kind {
  Accepted = 0,
  Started = 1,
  CancellationRequested = 2,
  Succeeded = 3,
  Failed = 4,
  Cancelled = 5,
  ApprovalRequested = 6,
  ApprovalGranted = 7,
  ApprovalDenied = 8,
  Progress = 9,
}

/** Detail attached to one event (approval or progress, both Uplink extensions). */
interface EventExtra {
  sequence: number;
  approval?: ApprovalDetail;
  progress?: ProgressDetail;
}

/** The runtime's record of one invocation. */
export class Invocation {
  readonly id: string;
  readonly entry: OfferEntry;
  /** The context given to `start` (frozen), handed to the policy, the provider and every listener. */
  readonly context: unknown;
  state: InvocationState = 'accepted';
  /** Flat pairs: [kind code, at, kind code, at, ...]. */
  log: number[] = [];
  extras: EventExtra[] | undefined = undefined;
  output: JsonValue | undefined = undefined;
  error: SoftwareUseErrorWire | undefined = undefined;
  /** Present only while the provider runs; dropped at the terminal state. */
  controller: LazyAbort | undefined = undefined;
  /** Callers of `wait`, answered with the terminal snapshot once the terminal event is recorded. */
  waiters: Array<(snapshot: InvocationSnapshot) => void> | undefined = undefined;
  /** The first operator-only diagnostic about this invocation (host snapshots only, never an event). */
  diagnostic: RuntimeDiagnostic | undefined = undefined;
  /** What ended it, for the host: the provider's thrown value or the denial's cause. */
  cause: unknown = undefined;
  /** Released by its host: no longer findable, and skipped by the eviction queue. */
  released = false;

  constructor(id: string, entry: OfferEntry, context: unknown) {
    this.id = id;
    this.entry = entry;
    this.context = context;
  }

  get terminal(): boolean {
    return this.state === 'succeeded' || this.state === 'failed' || this.state === 'cancelled';
  }

  /** Whether the terminal event has been recorded (the state turns terminal a moment earlier). */
  get closed(): boolean {
    const code = this.log[this.log.length - 2];
    return code === Kind.Succeeded || code === Kind.Failed || code === Kind.Cancelled;
  }

  get lastSequence(): number {
    return this.log.length >> 1;
  }

  /** Appends an event and returns its sequence. */
  append(kind: Kind, at: number, extra?: { approval?: ApprovalDetail; progress?: ProgressDetail }): number {
    this.log.push(kind, at);
    const sequence = this.log.length >> 1;
    if (extra !== undefined) (this.extras ??= []).push({ sequence, ...extra });
    return sequence;
  }

  /** Drops what only an active invocation needs and trims the history to its exact size. */
  settle(): void {
    this.controller = undefined;
    this.log = this.log.slice();
  }

  receipt(): InvocationReceipt {
    const offer = this.entry.offer;
    return { invocation_id: this.id, provider_id: offer.provider.id, capability_version: offer.capability.version, interaction: offer.interaction };
  }

  snapshot(): InvocationSnapshot {
    const snap: InvocationSnapshot = { receipt: this.receipt(), state: this.state, last_event_sequence: this.lastSequence };
    if (this.state === 'succeeded') snap.result = { output: this.output as JsonValue };
    if (this.error !== undefined) snap.error = this.error;
    return snap;
  }

  /** The snapshot with what ended it (`cause`, `diagnostic`), for the host only. */
  hostSnapshot(): HostSnapshot {
    const snap: HostSnapshot = this.snapshot();
    if (this.cause !== undefined) snap.cause = this.cause;
    if (this.diagnostic !== undefined) snap.diagnostic = this.diagnostic;
    return snap;
  }

  /** The wire event with this sequence (1-based; the caller checks bounds); `extra` is its detail, if any. */
  event(sequence: number, extra?: EventExtra): RuntimeEvent {
    const code = this.log[(sequence - 1) * 2]! as Kind;
    const event: RuntimeEvent = {
      invocation_id: this.id,
      sequence,
      kind: KIND_CODES[code],
      provider_id: this.entry.offer.provider.id,
      at: this.log[(sequence - 1) * 2 + 1]!,
    };
    if (code === Kind.Failed && this.error !== undefined) event.error = this.error;
    if (extra !== undefined) {
      if (extra.approval !== undefined) event.approval = extra.approval;
      if (extra.progress !== undefined) event.progress = extra.progress;
    }
    return event;
  }

  /** The most recent event, as a listener receives it; `hasExtra` when it was appended with detail. */
  lastEvent(hasExtra: boolean): RuntimeEvent {
    return this.event(this.lastSequence, hasExtra ? this.extras?.[this.extras.length - 1] : undefined);
  }

  /** Every event with a sequence greater than `after`, in order. */
  eventsAfter(after: number): RuntimeEvent[] {
    const out: RuntimeEvent[] = [];
    const extras = this.extras;
    let e = 0;
    if (extras !== undefined) while (e < extras.length && extras[e]!.sequence <= after) e++;
    for (let sequence = after + 1, last = this.lastSequence; sequence <= last; sequence++) {
      let extra: EventExtra | undefined;
      if (extras !== undefined && e < extras.length && extras[e]!.sequence === sequence) extra = extras[e++];
      out.push(this.event(sequence, extra));
    }
    return out;
  }
}
