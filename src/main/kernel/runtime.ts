/**
 * The sua runtime: registration, deterministic selection, policy, schema contracts and the
 * asynchronous invocation lifecycle (docs/kernel.md). Pure: no I/O; time comes in through `now`.
 *
 * Invariants worth knowing when reading this file:
 * - An invocation is active while `state` is `accepted` or `running`; `controller` is set only
 *   while its provider runs, and every late provider callback checks it is still the current one.
 * - A start that rejects leaves nothing behind: records are created only after every check passed.
 * - Events are recorded first and delivered to listeners through one queue, so listeners see
 *   every invocation's events in order even when they call back into the runtime.
 * - Because a listener may cancel, dispose or start at any event, each step after an emit
 *   re-checks the invocation's state (or controller) before going on.
 * - The request the policy and provider see is the runtime's own checked copy, never the caller's
 *   object, so what was validated is what runs.
 * - A call's context (Uplink extension: who asks, under which terms) is frozen at `start` and
 *   handed unchanged to the policy, the provider and every listener; nothing is looked up by id.
 */
import { PROVIDER_BAD_RESULT, PROVIDER_FAILED, SoftwareUseError, describeThrown } from './errors';
import { Invocation, Kind } from './invocation';
import * as msg from './messages';
import type { CheckedDecision } from './policy';
import { checkDecision, checkOutcome, defaultPolicy } from './policy';
import type { Verdict } from './provider-result';
import { judgeResult, readProgress } from './provider-result';
import type { OfferEntry } from './registry';
import { Registry } from './registry';
import { Retention } from './retention';
import { EventBus } from './event-bus';
import { LazyAbort } from './lazy-signal';
import { checkCursor, checkInvocationId, checkQuery, checkRequest, checkSelection } from './request';
import type {
  ApprovalDetail,
  CapabilityOffer,
  CapabilityProvider,
  CapabilityQuery,
  CapabilitySpec,
  EventPage,
  HostSnapshot,
  InvocationPort,
  InvocationReceipt,
  InvocationRequest,
  InvocationSnapshot,
  Policy,
  ProgressDetail,
  ProviderListing,
  RuntimeDiagnostic,
  RuntimeListener,
  RuntimeOptions,
  SelectionCandidate,
  SelectionExplanation,
  SelectionQuery,
  SoftwareUseErrorWire,
} from './types';

const DEFAULT_MAX_RETAINED = 10_000;

function optionError(what: string): SoftwareUseError {
  return new SoftwareUseError('invalid_request', `invalid runtime options: ${what}`, { hint: 'see RuntimeOptions in src/main/kernel/types.ts' });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/** Marks an approval nobody will wait for as handled, so its rejection is not an unhandled one. */
function observe(decision: CheckedDecision): void {
  if (decision.kind === 'ask') decision.approval.then(undefined, () => undefined);
}

/**
 * The execution kernel; implements the agent port `InvocationPort`. `C` is the type of the call
 * context its host passes to `start` (Uplink extension).
 */
export class Runtime<C = unknown> implements InvocationPort {
  readonly #registry = new Registry();
  readonly #policy: Policy<C>;
  readonly #now: () => number;
  readonly #onDiagnostic: ((diagnostic: RuntimeDiagnostic) => void) | undefined;
  readonly #retained: Retention;
  readonly #bus = new EventBus();
  /** Ids whose start is waiting for an asynchronous policy decision (not yet retained). */
  readonly #pending = new Set<string>();
  #disposed = false;

  constructor(options: RuntimeOptions<C> = {}) {
    if (options === null || typeof options !== 'object') throw optionError('options must be an object');
    const { policy, maxRetained = DEFAULT_MAX_RETAINED, now, onDiagnostic } = options;
    if (policy !== undefined && typeof policy !== 'function') throw optionError('policy must be a function');
    if (!Number.isSafeInteger(maxRetained) || maxRetained <= 0) throw optionError('maxRetained must be a positive integer');
    if (now !== undefined && typeof now !== 'function') throw optionError('now must be a function');
    if (onDiagnostic !== undefined && typeof onDiagnostic !== 'function') throw optionError('onDiagnostic must be a function');
    this.#policy = policy ?? (defaultPolicy as Policy<C>);
    this.#retained = new Retention(maxRetained);
    this.#now = now ?? Date.now;
    this.#onDiagnostic = onDiagnostic;
  }

  /** Adds a provider; throws `SoftwareUseError` (synchronously) on any contract breach. */
  register(provider: CapabilityProvider<C>): void {
    if (this.#disposed) throw msg.disposedError();
    this.#registry.register(provider);
  }

  /** Removes a provider (false when none has that id); calls already running are not affected. */
  unregister(providerId: string): boolean {
    if (this.#disposed) throw msg.disposedError();
    return this.#registry.unregister(providerId);
  }

  async discover(query?: CapabilityQuery): Promise<CapabilityOffer[]> {
    const q = checkQuery(query);
    const out: CapabilityOffer[] = [];
    for (const { offer, spec } of this.#registry.offers()) {
      if (q.capabilityId !== undefined && offer.capability.id !== q.capabilityId) continue;
      if (q.providerId !== undefined && offer.provider.id !== q.providerId) continue;
      if (q.interaction !== undefined && offer.interaction !== q.interaction) continue;
      if (q.range !== undefined && !q.range.test(spec.version)) continue;
      out.push(offer);
    }
    return out;
  }

  /** Which offer `start` would pin for this selection, and why; never rejects. */
  async explainSelection(query: SelectionQuery): Promise<SelectionExplanation> {
    const candidates: SelectionCandidate[] = [];
    try {
      const selected = this.#registry.select(checkSelection(query), candidates);
      if (selected instanceof SoftwareUseError) return { error: selected.toWire(), candidates };
      return { selected: selected.offer, candidates };
    } catch (error) {
      const wire = error instanceof SoftwareUseError ? error.toWire() : msg.unexpectedError().toWire();
      return { error: wire, candidates };
    }
  }

  /** Registered providers (ordered by id) with the canonical specs of their capabilities. */
  providers(): ProviderListing[] {
    return this.#registry.providers();
  }

  /** The canonical spec of `capabilityId@version`, if registered. */
  specFor(capabilityId: string, version: string): CapabilitySpec | undefined {
    return this.#registry.spec(capabilityId, version);
  }

  /**
   * Starts an invocation. Uplink extension: `context` travels with the call, frozen, to the policy,
   * the provider and every listener.
   */
  async start(request: InvocationRequest, context?: C): Promise<InvocationReceipt> {
    let pendingId: string | undefined;
    try {
      if (this.#disposed) throw msg.disposedError();
      const ctx = (context !== null && typeof context === 'object' ? Object.freeze(context) : context) as C;
      const checked = checkRequest(request);
      const req = checked.request;
      const id = req.invocation_id;
      if (this.#retained.has(id) || this.#pending.has(id)) throw msg.duplicateError(id);
      const entry = this.#registry.select(checked);
      if (entry instanceof SoftwareUseError) throw entry;
      if (!entry.spec.validateInput(req.input)) {
        const e = msg.firstSchemaError(entry.spec.validateInput.errors);
        this.#diagnose({ invocation_id: id, kind: 'input_schema', detail: `${e.pointer || '/'} ${e.keyword}: ${e.message}` });
        throw msg.inputSchemaError(entry.spec, e.pointer, e.keyword);
      }
      this.#retained.check();

      let raw: unknown;
      try {
        raw = this.#policy({ request: req, offer: entry.offer, context: ctx });
        if (isThenable(raw)) {
          pendingId = id;
          this.#pending.add(id);
          raw = await raw;
        }
      } catch (error) {
        this.#diagnose({
          invocation_id: id,
          provider_id: entry.offer.provider.id,
          kind: 'policy_error',
          detail: `policy threw or rejected: ${describeThrown(error)}`,
        });
        throw SoftwareUseError.fromWire(msg.policyFailed(entry.spec));
      }
      if (pendingId !== undefined) {
        this.#pending.delete(pendingId);
        pendingId = undefined;
      }

      const decision = checkDecision(raw);
      if (this.#disposed) {
        observe(decision);
        throw msg.disposedError(); // disposed while the policy decided
      }
      switch (decision.kind) {
        case 'invalid':
          this.#diagnose({
            invocation_id: id,
            provider_id: entry.offer.provider.id,
            kind: 'policy_error',
            detail: 'policy returned something that is not a permit, deny or ask decision',
          });
          throw SoftwareUseError.fromWire(msg.policyFailed(entry.spec));
        case 'deny': {
          const denied = SoftwareUseError.fromWire(msg.policyDenied(entry.spec, decision.reason));
          if (decision.cause !== undefined) denied.cause = decision.cause;
          throw denied;
        }
        case 'permit': {
          const inv = this.#admit(id, entry, ctx);
          this.#run(inv, req);
          return inv.receipt();
        }
        case 'ask': {
          let inv: Invocation;
          try {
            inv = this.#admit(id, entry, ctx);
          } catch (error) {
            observe(decision); // not admitted (the bound filled up meanwhile): nothing waits on it
            throw error;
          }
          // A listener may have cancelled it on `accepted`: then nothing is requested, but the
          // approval is still observed (its handlers see the terminal state and do nothing).
          if (inv.state === 'accepted') this.#emit(inv, Kind.ApprovalRequested);
          decision.approval.then(
            (outcome) => this.#approvalSettled(inv, req, outcome),
            (error: unknown) => this.#approvalRejected(inv, error),
          );
          return inv.receipt();
        }
        default: {
          const never: never = decision;
          return never;
        }
      }
    } catch (error) {
      if (pendingId !== undefined) this.#pending.delete(pendingId);
      if (error instanceof SoftwareUseError) throw error;
      this.#diagnose({ kind: 'provider_error', detail: `unexpected failure in start: ${describeThrown(error)}` });
      throw msg.unexpectedError();
    }
  }

  async get(invocationId: string): Promise<InvocationSnapshot> {
    return this.#find(invocationId).snapshot();
  }

  async events(invocationId: string, after?: number): Promise<EventPage> {
    const cursor = checkCursor(after);
    const inv = this.#find(invocationId);
    const events = inv.eventsAfter(cursor);
    const last = events[events.length - 1];
    return { events, next_cursor: last === undefined ? cursor : last.sequence, terminal: inv.closed };
  }

  async cancel(invocationId: string): Promise<InvocationSnapshot> {
    const inv = this.#find(invocationId);
    if (!inv.terminal) this.#cancel(inv);
    return inv.snapshot();
  }

  /**
   * Uplink extension: the terminal snapshot (with its result or error) once the terminal event is
   * recorded and delivered to subscribers; at once for an invocation that already ended. An abort
   * of `signal` only stops the waiting (it rejects with the signal's reason); the invocation goes on.
   */
  async wait(invocationId: string, signal?: AbortSignal): Promise<HostSnapshot> {
    const inv = this.#find(invocationId);
    if (inv.closed) return inv.hostSnapshot();
    signal?.throwIfAborted();
    return new Promise<HostSnapshot>((resolve, reject) => {
      const onAbort = (): void => {
        inv.waiters = inv.waiters?.filter((w) => w !== waiter);
        reject(signal!.reason);
      };
      const waiter = (snapshot: HostSnapshot): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(snapshot);
      };
      (inv.waiters ??= []).push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Uplink extension: forgets a terminal invocation its host is done with, output and all, so the
   * host's memory follows its need rather than the retention bound. Afterwards the id answers
   * `invocation_not_found` (as after eviction). Throws `invalid_request` for an active one.
   */
  release(invocationId: string): void {
    const inv = this.#find(invocationId);
    if (!inv.closed) throw msg.releaseActiveError(inv.id);
    this.#retained.release(inv);
  }

  /**
   * Uplink extension: `get`, synchronously and host side (with `cause` and `diagnostic`), for
   * subscribers that project an event as it happens.
   */
  peek(invocationId: string): HostSnapshot {
    return this.#find(invocationId).hostSnapshot();
  }

  /** Receives every event of every invocation, live and in order, with its context; returns the unsubscriber. */
  subscribe(listener: RuntimeListener<C>): () => void {
    return this.#bus.subscribe(listener as RuntimeListener);
  }

  /** Cancels every active invocation (aborting provider signals, best effort); later starts reject with `internal`. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    // Re-check each one: a listener or abort handler may have ended it while an earlier one was cancelled.
    for (const inv of this.#retained.active()) if (!inv.terminal) this.#cancel(inv);
  }

  #find(invocationId: string): Invocation {
    return this.#retained.find(checkInvocationId(invocationId));
  }

  #admit(id: string, entry: OfferEntry, context: C): Invocation {
    // Checked again here: a synchronous policy may itself have started this id meanwhile.
    if (this.#retained.has(id)) throw msg.duplicateError(id);
    const inv = new Invocation(id, entry, context);
    this.#retained.add(inv);
    this.#emit(inv, Kind.Accepted);
    return inv;
  }

  #run(inv: Invocation, request: InvocationRequest): void {
    if (inv.state !== 'accepted') return; // a listener cancelled it (or disposed the runtime) on `accepted`
    const controller = new LazyAbort();
    inv.state = 'running';
    inv.controller = controller;
    this.#emit(inv, Kind.Started);
    if (inv.controller !== controller) return; // a listener cancelled it on `started`
    let pending: Promise<unknown>;
    try {
      const report = (progress: ProgressDetail): void => this.#progress(inv, controller, progress);
      const abort = (reason: unknown): void => controller.abort(reason);
      pending = Promise.resolve(inv.entry.provider.invoke({ request, offer: inv.entry.offer, context: inv.context, report, abort }, controller.signal));
    } catch (error) {
      this.#providerFailed(inv, controller, error);
      return;
    }
    pending.then(
      (result) => this.#providerSettled(inv, controller, result),
      (error: unknown) => this.#providerFailed(inv, controller, error),
    );
  }

  #providerSettled(inv: Invocation, controller: LazyAbort, result: unknown): void {
    if (inv.controller !== controller) return; // cancelled (or disposed) first: that is what it reached
    let verdict: Verdict;
    try {
      verdict = judgeResult(result, inv.entry.spec);
    } catch (error) {
      // Judging cannot throw on a copied plain-JSON output; if it ever does, the invocation must
      // still end (a stuck `running` one would hold a retention slot forever).
      this.#diagnoseRun(inv, 'provider_error', `judging the provider result failed: ${describeThrown(error)}`);
      this.#fail(inv, PROVIDER_BAD_RESULT);
      return;
    }
    if (!verdict.ok) {
      this.#diagnoseRun(inv, verdict.kind, verdict.detail);
      inv.cause = verdict.cause;
      this.#fail(inv, verdict.error);
      return;
    }
    inv.output = verdict.output;
    inv.state = 'succeeded';
    this.#terminate(inv, Kind.Succeeded);
  }

  #providerFailed(inv: Invocation, controller: LazyAbort, error: unknown): void {
    if (inv.controller !== controller) return;
    this.#diagnoseRun(inv, 'provider_error', describeThrown(error), error);
    inv.cause = error;
    this.#fail(inv, PROVIDER_FAILED);
  }

  #progress(inv: Invocation, controller: LazyAbort, value: unknown): void {
    if (inv.controller !== controller) return; // not running (any more): ignored
    const detail = readProgress(value);
    if (detail !== undefined) this.#emit(inv, Kind.Progress, { progress: detail });
  }

  #approvalSettled(inv: Invocation, request: InvocationRequest, value: unknown): void {
    if (inv.state !== 'accepted') return; // cancelled or disposed while waiting
    const outcome = checkOutcome(value);
    if (!outcome.granted) {
      inv.cause = outcome.cause;
      this.#denied(inv, outcome.detail, msg.approvalDenied(inv.entry.spec, outcome.detail.reason));
      return;
    }
    this.#emit(inv, Kind.ApprovalGranted, { approval: outcome.detail });
    if (inv.state === 'accepted') this.#run(inv, request);
  }

  #approvalRejected(inv: Invocation, error: unknown): void {
    if (inv.state !== 'accepted') return;
    this.#diagnoseRun(inv, 'policy_error', `approval rejected: ${describeThrown(error)}`);
    this.#denied(inv, {}, msg.approvalFailed(inv.entry.spec));
  }

  #denied(inv: Invocation, detail: ApprovalDetail, error: SoftwareUseErrorWire): void {
    inv.state = 'failed'; // set first: listeners of approval_denied must not see it as still waiting
    inv.append(Kind.ApprovalDenied, this.#now(), { approval: detail });
    this.#bus.enqueue(inv, true);
    inv.error = error;
    this.#terminate(inv, Kind.Failed);
  }

  #cancel(inv: Invocation): void {
    const controller = inv.controller;
    inv.state = 'cancelled'; // set first, so re-entrant cancels and late provider results are no-ops
    inv.controller = undefined;
    inv.append(Kind.CancellationRequested, this.#now());
    this.#bus.enqueue(inv, false);
    controller?.abort();
    this.#terminate(inv, Kind.Cancelled);
  }

  #fail(inv: Invocation, error: SoftwareUseErrorWire): void {
    inv.error = error;
    inv.state = 'failed';
    this.#terminate(inv, Kind.Failed);
  }

  /** Records the terminal event; the caller has set `state` (and `error`/`output`). */
  #terminate(inv: Invocation, kind: Kind): void {
    inv.append(kind, this.#now());
    inv.settle();
    this.#retained.terminated(inv);
    // Snapshots are taken before listeners run: one may release the invocation on this event.
    const waiters = inv.waiters;
    inv.waiters = undefined;
    const snapshots = waiters?.map(() => inv.hostSnapshot());
    this.#bus.enqueue(inv, false);
    this.#bus.flush();
    // Waiters resume in a later microtask, after this delivery (even a re-entrant one) is done.
    waiters?.forEach((waiter, i) => waiter(snapshots![i]!));
  }

  #emit(inv: Invocation, kind: Kind, extra?: { approval?: ApprovalDetail; progress?: ProgressDetail }): void {
    inv.append(kind, this.#now(), extra);
    this.#bus.enqueue(inv, extra !== undefined);
    this.#bus.flush();
  }

  /** A diagnostic about a retained invocation: kept on its record (the first one) and reported. */
  #diagnoseRun(inv: Invocation, kind: RuntimeDiagnostic['kind'], detail: string, error?: unknown): void {
    const diagnostic: RuntimeDiagnostic = { invocation_id: inv.id, provider_id: inv.entry.offer.provider.id, kind, detail };
    if (error !== undefined) diagnostic.error = error;
    inv.diagnostic ??= diagnostic;
    this.#diagnose(diagnostic);
  }

  #diagnose(diagnostic: RuntimeDiagnostic): void {
    if (this.#onDiagnostic === undefined) return;
    try {
      this.#onDiagnostic(diagnostic);
    } catch {
      // The operator channel failing must not change the agent-visible outcome.
    }
  }
}
