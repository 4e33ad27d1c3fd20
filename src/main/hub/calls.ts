/**
 * The call path: bounds and checks, the call's context, a kernel invocation, its audit before the
 * reply, and the agent's error from what ended it. Every channel op, `send` and `recv` runs here.
 * What a driver hands back — its output, its progress, its error with hint and evidence — is
 * masked here for the agent (the timeline masks what is recorded): no live secret of the hub leaves.
 */
import { randomBytes } from 'node:crypto';
import { SoftwareUseError } from '../kernel';
import type { HostSnapshot, InteractionKind, JsonValue, Runtime, RuntimeEvent } from '../kernel';
import type { ApprovalPreview, InvokeContext } from '../drivers';
import type { ApprovalBroker } from './approvals';
import type { AuditStore, EventOutcome, Timeline } from './audit';
import { auditUnavailable, eventEntry, isSensitive, redactArgs, startProgress } from './audit';
import { checkBounds, deepPlaceholder, MAX_DEPTH, nestsDeeperThan } from './bounds';
import { authenticatedAgent, declaredClient } from './call-context';
import type { CallContext } from './call-context';
import { checkCall, withDeadline } from './channels';
import type { ChannelRegistry, CheckedCall } from './channels';
import type { SecretMask } from './credentials';
import { ending, evidenceText, HubError, isDriverError, mapKernelError, toHubError } from './errors';
import type { AgentIdentity, CallOptions, OpDescription } from './types';

/** What the call path needs of the hub around it. */
export interface CallHost {
  registry: ChannelRegistry;
  runtime: Runtime<CallContext>;
  broker: ApprovalBroker;
  timeline: Timeline;
  audit: AuditStore;
  now: () => number;
  /** The interaction kind of each provider (kernel events name the provider, not the kind). */
  interactions: ReadonlyMap<string, InteractionKind>;
  /** The hub's live secrets: masked in what a driver returns before the agent gets it. */
  secrets: SecretMask;
  /** How often a long call reports progress. */
  progressIntervalMs: number;
  driverTimeout(): number;
  closed(): boolean;
}

/** Runs calls as kernel invocations and records them. */
export class CallPath {
  #host: CallHost;
  #runtime: Runtime<CallContext>;
  #registry: ChannelRegistry;
  #broker: ApprovalBroker;
  #timeline: Timeline;
  #audit: AuditStore;
  #now: () => number;
  #interactions: ReadonlyMap<string, InteractionKind>;
  #secrets: SecretMask;
  /** Invocation ids: a random prefix per hub (several processes share the audit) plus a counter. */
  #idPrefix = randomBytes(4).toString('hex');
  #idCounter = 0;

  constructor(host: CallHost) {
    this.#host = host;
    this.#runtime = host.runtime;
    this.#registry = host.registry;
    this.#broker = host.broker;
    this.#timeline = host.timeline;
    this.#audit = host.audit;
    this.#now = host.now;
    this.#interactions = host.interactions;
    this.#secrets = host.secrets;
  }

  /**
   * Ops with their own timeout (await-idle, ask) get that plus a margin, so `ask` (default 120 s)
   * is never cut off by the 90 s driver deadline. An omitted `timeout_ms` counts as the default
   * its schema gives it, which is what the kernel fills in before the driver sees the args.
   */
  #deadlineFor(spec: OpDescription, args: JsonValue): number {
    const base = this.#host.driverTimeout();
    let timeout: unknown = args && typeof args === 'object' && !Array.isArray(args) ? args.timeout_ms : undefined;
    if (timeout === undefined) timeout = schemaDefault(spec.params_schema, 'timeout_ms');
    return typeof timeout === 'number' ? Math.max(base, timeout + 5000) : base;
  }

  async run(channel: string, op: string, args: JsonValue, options: CallOptions): Promise<JsonValue> {
    const agent = options.agent;
    let checked: CheckedCall;
    let bounded = false;
    try {
      // Bounds first: nothing below may recurse over or store an unbounded value.
      checkBounds(channel, op, args);
      bounded = true;
      if (this.#host.closed()) throw new HubError('core', 'Unavailable', 'the hub is shutting down', { hint: 'start it again and retry' });
      this.#auditWritable();
      checked = await checkCall(this.#registry, channel, op, args, options, Math.min(this.#host.driverTimeout(), 15_000));
    } catch (e) {
      const err = ending(this.#secrets.maskError(toHubError(bounded ? channel : undefined, e)), { type: 'rejected' });
      this.rejected(channel, op, args, agent, err, undefined, bounded);
      const synced = this.#replyDurable();
      if (synced) await synced;
      throw err;
    }
    const { spec, labels, address } = checked;
    const invocationId = `inv-${this.#idPrefix}-${(++this.#idCounter).toString(36)}`;
    const facts = {
      invocation_id: invocationId,
      agent: authenticatedAgent(agent),
      declared: declaredClient(agent),
      ...(agent.session !== undefined ? { session: agent.session } : {}),
      ...(agent.caller !== undefined ? { caller: Object.freeze({ ...agent.caller }) } : {}),
      recorded: Object.freeze({ ...agent }),
      address,
      channel,
      driver: address.driver,
      op,
      capability_id: spec.capability_id,
      safety: spec.mutating ? ('mutating' as const) : ('read_only' as const),
      args: redactArgs(args, spec.sensitive_args),
      rawArgs: args,
      labels: Object.freeze([...labels]),
      accepted_at: this.#now(),
      deadline_ms: this.#deadlineFor(spec, args),
      sensitive: isSensitive(args, spec.sensitive_args),
    };
    const progress = startProgress(facts, options, this.#host.progressIntervalMs, this.#now, () => this.#awaitingApproval(invocationId));
    const ctx: CallContext = progress.forward ? { ...facts, progress: progress.forward } : facts;
    const onAbort = (): void => void this.#runtime.cancel(invocationId).catch(() => undefined);
    // Adding and removing a listener on the caller's signal costs more than a quick call, which
    // ends within the event-loop turn that started it: a call listens only once it outlives that
    // turn, and an abort that came first is seen then.
    const signal = options.signal;
    let listening = false;
    const listen = signal
      ? setImmediate(() => {
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
          listening = true;
        })
      : undefined;
    let output: JsonValue;
    try {
      try {
        await this.#runtime.start(
          {
            invocation_id: invocationId,
            capability_id: spec.capability_id,
            version_requirement: '^1',
            input: { channel, args },
            constraints: {
              ...(options.provider ? { provider_id: options.provider } : {}),
              ...(checked.interaction ? { interaction: checked.interaction } : {}),
            },
          },
          ctx,
        );
      } catch (e) {
        // The kernel can refuse after the policy asked (runtime disposed, retention full): withdraw
        // the prompt so the operator is not left deciding a call that will never run.
        this.#broker.abandon(invocationId, 'cancelled');
        const err = ending(e instanceof SoftwareUseError ? this.#mapError(ctx, e, e.cause, options) : this.#secrets.maskError(toHubError(channel, e)), {
          type: 'rejected',
        });
        this.rejected(channel, op, ctx.args, agent, err, ctx);
        throw err;
      }
      const last = await this.#runtime.wait(invocationId);
      if (last.state !== 'succeeded') throw ending(this.#endError(ctx, last, options), { state: last.state });
      output = this.#secrets.mask(last.result!.output);
    } catch (e) {
      const synced = this.#replyDurable();
      if (synced) await synced;
      throw e;
    } finally {
      progress.stop();
      clearImmediate(listen);
      if (listening) signal!.removeEventListener('abort', onAbort);
      this.#done(invocationId);
    }
    const synced = this.#replyDurable();
    if (synced) await synced;
    return output;
  }

  /** The call is over: nothing of it stays in memory (the kernel forgets it, output and all). */
  #done(invocationId: string): void {
    try {
      this.#runtime.release(invocationId);
    } catch {
      // Never admitted (the start was refused), or already evicted: nothing is retained.
    }
  }

  /** Admitted and not yet started: the broker asked the operator (permits start at once). */
  #awaitingApproval(invocationId: string): boolean {
    try {
      return this.#runtime.peek(invocationId).state === 'accepted';
    } catch {
      return false;
    }
  }

  /**
   * Before any reply or error leaves: decisions by a person or rule were committed (fsynced) when
   * made; the call's own entries (its read-only permit on `accepted`, its outcome, a refusal) are
   * journaled now, so a kill -9 after the agent heard the answer cannot lose them, and commit with
   * the batch. When they can be neither journaled nor committed, the caller hears that instead.
   */
  replyAudited(): void {
    if (!this.#timeline.beforeReply()) throw auditUnavailable(this.#audit.failure() ?? 'the last write failed');
  }

  /**
   * `replyAudited`, and while the store is not committing (its file locked, the disk full) the
   * journal's fsync to wait for before the reply leaves, off the event loop; undefined (nothing
   * to wait for, not even a microtask) otherwise.
   */
  #replyDurable(): Promise<void> | undefined {
    this.replyAudited();
    return this.#audit.journalSynced()?.catch((e: unknown) => {
      throw auditUnavailable(`the journal could not be synced to disk: ${String((e as Error)?.message ?? e)}`);
    });
  }

  /** Refuses a new call while the audit cannot be written, after one more try of what is queued. */
  #auditWritable(): void {
    if (this.#audit.failure() === undefined) return;
    this.#timeline.flush();
    const failure = this.#audit.failure();
    if (failure !== undefined) throw auditUnavailable(failure);
  }

  /** The agent's error for a kernel error and its cause (the broker's denial, the driver's throw), masked. */
  #mapError(ctx: CallContext, e: Pick<SoftwareUseError, 'code' | 'message'>, cause: unknown, options: Pick<CallOptions, 'provider' | 'interaction'>): HubError {
    return this.#secrets.maskError(
      mapKernelError({
        channel: ctx.channel,
        op: ctx.op,
        code: e.code,
        // The kernel's own words without its hint: the agent's error carries the hub's hint.
        message: e instanceof SoftwareUseError ? e.text : cause instanceof SoftwareUseError ? cause.text : e.message,
        cause,
        constraints: { provider_id: options.provider, interaction: options.interaction },
      }),
    );
  }

  /** The agent's error for a call that did not succeed, from the kernel's host snapshot. */
  #endError(ctx: CallContext, last: HostSnapshot, options: Pick<CallOptions, 'provider' | 'interaction'>): HubError {
    return this.#mapError(ctx, last.error ?? { code: 'cancelled', message: 'cancelled' }, last.cause, options);
  }

  /** Records a refusal; `bounded` says the request passed the bounds (else nothing looks it up). */
  rejected(channel: string, op: string, args: JsonValue | undefined, agent: AgentIdentity, err: HubError, ctx?: CallContext, bounded = true): void {
    let stored = args;
    let sensitive = ctx?.sensitive === true;
    if (!ctx && !bounded) {
      sensitive = !!args && typeof args === 'object' && !Array.isArray(args) && args.sensitive === true;
      stored = nestsDeeperThan(args, MAX_DEPTH) ? deepPlaceholder() : sensitive ? redactArgs(args, []) : args;
    } else if (!ctx) {
      try {
        const { sensitive_args } = this.#registry.op(channel, op);
        stored = redactArgs(args, sensitive_args);
        sensitive = isSensitive(args, sensitive_args);
      } catch {
        sensitive = isSensitive(args, []);
        stored = redactArgs(args, []);
      }
    }
    this.#timeline.record({
      at: this.#now(),
      type: 'rejected',
      kind: 'rejected',
      ...(ctx ? { invocation_id: ctx.invocation_id, capability_id: ctx.capability_id } : {}),
      ...(channel ? { channel: String(channel) } : {}),
      ...(op ? { op: String(op) } : {}),
      agent,
      state: 'rejected',
      ...(err.outcome ? { outcome: err.outcome } : {}),
      error_kind: err.kind,
      ...(err.code ? { error_code: err.code } : {}),
      message: err.message,
      ...(err.hint ? { hint: err.hint } : {}),
      ...(stored !== undefined ? { args: stored } : {}),
      // The driver's evidence (e.g. what changed about a desktop target) is for the operator.
      ...(err.evidence !== undefined && !sensitive ? { detail: `evidence: ${evidenceText(err.evidence)}`.slice(0, 8192) } : {}),
    });
  }

  /** Projects each kernel event into the timeline, with the call's context and the kernel's outcome. */
  onEvent(e: RuntimeEvent, ctx: CallContext | undefined): void {
    if (e.kind === 'progress' && e.progress) ctx?.progress?.(this.#secrets.mask(e.progress));
    const outcome: EventOutcome = {};
    if (ctx) {
      const interaction = e.provider_id === undefined ? undefined : this.#interactions.get(e.provider_id);
      if (interaction) outcome.interaction = interaction;
      // Masked by the timeline once bounded for the audit (a large output is scanned in full only for the agent).
      if (e.kind === 'succeeded' && !ctx.sensitive) {
        outcome.output = this.#runtime.peek(e.invocation_id).result?.output;
        const forged = ctx.op === 'recv' ? forgedReplies(outcome.output) : undefined;
        if (forged) outcome.detail = forged;
      }
      if (e.kind === 'failed' && e.error) {
        const last = this.#runtime.peek(e.invocation_id);
        outcome.error = ending(this.#mapError(ctx, e.error, last.cause, {}), { state: 'failed' });
        if (!ctx.sensitive) {
          const detail = operatorDetail(last, outcome.error);
          if (detail) outcome.detail = detail;
        }
      }
    }
    this.#timeline.record(eventEntry(e, ctx, this.#now, outcome));
    if (e.kind === 'cancelled') this.#broker.abandon(e.invocation_id, 'cancelled');
  }
}

/** What the approval prompt shows of the call's target (the driver's preview), bounded in time. */
export async function previewFor(registry: ChannelRegistry, ctx: CallContext, timeoutMs: number): Promise<ApprovalPreview | undefined> {
  const { driver, addr } = registry.resolve(ctx.channel);
  if (!driver.preview) return undefined;
  // A driver hides text under its own `sensitive: true` flag and then needs the real text (to say
  // "type 27 characters"); fields named by sensitive_args stay redacted, the driver knows nothing of them.
  const raw = ctx.rawArgs;
  const flagged = !!raw && typeof raw === 'object' && !Array.isArray(raw) && raw.sensitive === true;
  const args = ctx.sensitive && !flagged ? ctx.args : raw;
  return withDeadline(ctx.driver, 'preview()', timeoutMs, () => driver.preview!(addr, ctx.op, args ?? {}));
}

/**
 * The driver's refusal of a call before the operator is asked. Only a refusal counts (Rejected,
 * NotFound, Invalid): a slow, broken or momentarily unavailable check proves nothing, the prompt
 * goes ahead and the op checks again when it acts.
 */
export async function precheckFor(
  registry: ChannelRegistry,
  ctx: CallContext,
  args: JsonValue,
  interaction: InteractionKind,
  timeoutMs: number,
): Promise<HubError | undefined> {
  try {
    const { driver, addr } = registry.resolve(ctx.channel);
    if (!driver.precheck) return undefined;
    const invokeCtx: InvokeContext = { interaction, agent: ctx.agent.id, invocation_id: ctx.invocation_id, ...(ctx.caller ? { caller: ctx.caller } : {}) };
    await withDeadline(ctx.driver, 'precheck()', timeoutMs, () => driver.precheck!(addr, ctx.op, args, invokeCtx));
    return undefined;
  } catch (e) {
    return isDriverError(e) && ['Rejected', 'NotFound', 'Invalid'].includes(e.kind) ? HubError.fromDriverError(ctx.channel, e) : undefined;
  }
}

/** What the operator sees of a failure in the audit: the kernel's diagnostic and the driver's evidence. */
function operatorDetail(last: HostSnapshot, error: HubError): string | undefined {
  const d = last.diagnostic;
  if (!d) return undefined;
  const evidence = isDriverError(last.cause) ? error.evidence : undefined;
  return [`${d.kind}: ${d.detail}`, evidence !== undefined && `evidence: ${evidenceText(evidence)}`].filter(Boolean).join('\n');
}

/**
 * What the operator is told of replies a driver saw outside their addressee's channel (an item
 * marked `not_from_addressee`): someone other than the addressee wrote an answer to another
 * agent's question. The agent gets them marked and without their id; the record says who and where.
 */
function forgedReplies(output: JsonValue | undefined): string | undefined {
  const items = output && typeof output === 'object' && !Array.isArray(output) && Array.isArray(output.items) ? output.items : [];
  const lines: string[] = [];
  for (const item of items) {
    if (!item || typeof item !== 'object' || Array.isArray(item) || item.not_from_addressee !== true) continue;
    const text = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '?');
    lines.push(
      `reply not from its addressee: ${text(item.channel)} shows ${JSON.stringify(text(item.raw).slice(0, 300))} for an id sent to ${text(item.sent_to)}`,
    );
  }
  return lines.length ? lines.join('\n') : undefined;
}

/** The default a params schema gives one top-level arg, if it gives one. */
function schemaDefault(schema: unknown, name: string): unknown {
  if (!schema || typeof schema !== 'object') return undefined;
  const property = (schema as { properties?: Record<string, unknown> }).properties?.[name];
  return property && typeof property === 'object' ? (property as { default?: unknown }).default : undefined;
}
