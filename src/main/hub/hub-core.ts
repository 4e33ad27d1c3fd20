/**
 * The hub implementation: wires drivers into the kernel as providers, the broker in as policy,
 * and every kernel event into the audit store and the live timeline. Calls run as kernel
 * invocations; what the agent gets back is the op's result or one rendered DriverError.
 */
import { randomBytes } from 'node:crypto';
import { Runtime, SoftwareUseError } from '../kernel';
import type { InteractionKind, JsonValue, ProgressDetail, RuntimeEvent, SelectionExplanation } from '../kernel';
import { driverOfChannel, ExternalDriver } from '../drivers';
import type { ApprovalPreview, ChannelEntry, DoctorReport, Driver, DriverInfo, ExternalStatus, InvokeContext, RecvBatch, SendReceipt, TraceEntry, TraceFilter } from '../drivers';
import { createExternalDrivers, externalEntries, externalStatus, trustEntry } from './driver-admin';
import { AuditStore } from './audit';
import { ApprovalBroker } from './approvals';
import type { RuleScope } from './approvals';
import { AgentCredentialStore } from './credentials';
import type { AgentCredential, AgentSummary } from './credentials';
import { CallTable } from './call-context';
import type { CallContext } from './call-context';
import { ConfigStore } from './config';
import type { FleetSettings } from './config';
import { DriverProvider, providerIdFor } from './channels';
import { ending, HubError, isDriverError, mapKernelError, toHubError } from './errors';
import type { DecideResult, Hub, ProviderView } from './hub';
import { redactArgs, isSensitive } from './audit';
import { checkCall } from './channels';
import { setApprovalTimeout } from './approvals';
import type { CheckedCall } from './channels';
import { auditUnavailable, eventEntry, kernelText, startProgress, Timeline } from './audit';
import type { EventOutcome } from './audit';
import { checkBounds, deepPlaceholder, MAX_DEPTH, nestsDeeperThan } from './bounds';
import { ChannelRegistry, withDeadline } from './channels';
import { dataPaths, ensureDataDir } from './data-dir';
import { Emitter } from '../../shared/emitter';
import type {
  AgentIdentity,
  ApprovalDecision,
  ApprovalEvent,
  AuditEntry,
  AuditPage,
  AuditQuery,
  CallOptions,
  Disposer,
  DriverOverview,
  HubDoctor,
  HubSendRequest,
  OpDescription,
  PendingApproval,
  SessionGrant,
  StandingRuleStatus,
} from './types';
import { sectionSchema } from './driver-admin';
import type { DriverSet } from './driver-admin';

/** Options of `createHub`. */
export interface HubOptions {
  dataDir: string;
  /** The drivers, or a DriverSet that builds them with live config sections (`loadDrivers`). */
  drivers: Driver[] | DriverSet;
  /** Overrides config `hub.driver_timeout_ms` (tests). */
  driverTimeoutMs?: number;
  /** How often a long call reports progress (default 2000 ms). */
  progressIntervalMs?: number;
  /** Deadline for `Driver.preview` before the prompt shows without it (default 4000 ms). */
  previewTimeoutMs?: number;
  /** How long pending prompts wait for a panel to re-attach after the last one left (default 15 s). */
  panelGraceMs?: number;
  /** Watch config.json for changes (default true). */
  watchConfig?: boolean;
  now?: () => number;
}

/** Creates a hub on a data directory with the given drivers. */
export function createHub(options: HubOptions): Hub {
  return new HubCore(options);
}

/** The hub's `fleet` section, read once at start like `hub.drivers`. */
export function fleetSettingsOf(hub: Hub): FleetSettings | undefined {
  return hub instanceof HubCore ? hub.fleetSettings() : undefined;
}

class HubCore implements Hub {
  readonly dataDir: string;
  #now: () => number;
  #config: ConfigStore;
  #audit: AuditStore;
  #calls = new CallTable();
  #registry: ChannelRegistry;
  #broker: ApprovalBroker;
  #agents: AgentCredentialStore;
  #runtime: Runtime;
  #providers: DriverProvider[] = [];
  /** Interaction kind by provider id (kernel events name the provider, not the kind). */
  #interactions = new Map<string, InteractionKind>();
  /** Where a call's kernel `progress` events go, for calls whose caller wants progress. */
  #progress = new Map<string, (progress: ProgressDetail) => void>();
  /** Invocation ids: a random prefix per hub (several processes share the audit) plus a counter. */
  #idPrefix = randomBytes(4).toString('hex');
  #idCounter = 0;
  #timeline: Timeline;
  #disposers: Disposer[] = [];
  #options: HubOptions;
  #closed = false;
  /** Drivers left out by `hub.drivers`, and names there that match no driver (doctor says so). */
  #disabled: string[] = [];
  /** The out-of-process drivers that run (admitted or waiting to be). */
  #external: ExternalDriver[] = [];
  #unknownDrivers: string[] = [];
  #auditListeners = new Emitter<string | undefined>();

  constructor(options: HubOptions) {
    this.#options = options;
    this.dataDir = ensureDataDir(options.dataDir);
    const paths = dataPaths(this.dataDir);
    this.#now = options.now ?? Date.now;
    const set: DriverSet = Array.isArray(options.drivers) ? { configSchemas: {}, create: () => options.drivers as Driver[] } : options.drivers;
    const schemas = Object.fromEntries(Object.entries(set.configSchemas).map(([k, v]) => [k, sectionSchema(v)]));
    this.#config = new ConfigStore(paths.config, schemas);
    if (options.watchConfig !== false) this.#disposers.push(this.#config.watch());
    this.#audit = new AuditStore(paths.audit);
    this.#agents = new AgentCredentialStore(this.dataDir);
    this.#audit.onFailureChange = (failure) => this.#auditListeners.emit(failure);
    this.#timeline = new Timeline(this.#audit);
    // A broken config file is recorded once per distinct error (the file is the operator's input).
    const configRejected = (error: string): void =>
      this.#timeline.record({ at: this.#now(), type: 'rejected', kind: 'rejected', op: 'config', state: 'rejected', error_kind: 'Invalid', message: `${error} (${this.#config.fallback()})`, hint: 'fix the file; it is reloaded on save' });
    const startupError = this.#config.error();
    if (startupError) configRejected(startupError);
    this.#disposers.push(this.#config.onError(configRejected));
    const builtIn = set.create((name) => this.#config.section(name));
    // Out-of-process drivers are built but not started: each starts on its first call, once admitted.
    const entries = externalEntries(this.#config).filter((e) => !builtIn.some((d) => d.info().id === e.id));
    this.#external = createExternalDrivers(this.#config, this.dataDir, entries, () => Math.min(this.#driverTimeout(), 15_000));
    const created: Driver[] = [...builtIn, ...this.#external];
    // `hub.drivers` lets an operator run only some drivers (a server without a display needs no
    // desktop driver, and `doctor` should not fail for it). Read once, at start.
    const wanted = this.#config.get().hub.drivers;
    const enabled = wanted ? created.filter((d) => wanted.includes(d.info().id)) : created;
    for (const d of created) if (!enabled.includes(d)) void d.dispose?.();
    this.#external = this.#external.filter((d) => enabled.includes(d));
    this.#disabled = created.filter((d) => !enabled.includes(d)).map((d) => d.info().id);
    this.#unknownDrivers = (wanted ?? []).filter((id) => !created.some((d) => d.info().id === id));
    this.#registry = new ChannelRegistry(enabled, () => Math.min(this.#driverTimeout(), 15_000));
    this.#broker = new ApprovalBroker({
      calls: this.#calls,
      config: this.#config,
      audit: this.#audit,
      record: (entry, durable) => this.#timeline.record(entry, durable),
      preview: (ctx) => this.#preview(ctx),
      precheck: (ctx, args, interaction) => this.#precheck(ctx, args, interaction),
      opParams: () => this.#registry.drivers().flatMap(({ id }) => this.#registry.opsOf(id).map((o) => ({ driver: id, ...o }))),
      now: this.#now,
      ...(options.panelGraceMs !== undefined ? { panelGraceMs: options.panelGraceMs } : {}),
    });
    this.#runtime = new Runtime({ policy: this.#broker.policy, now: this.#now });
    for (const { id, driver } of this.#registry.drivers()) this.#registerProviders(id, driver);
    // An external driver's ops are known once it has started, and may change when it restarts
    // (a built-in served out of process, too).
    for (const d of enabled) if (d instanceof ExternalDriver) this.#disposers.push(d.onChange((what) => what === 'ops' && this.#reregister(d)));
    this.#disposers.push(this.#runtime.subscribe((e) => this.#onEvent(e)));
  }

  #registerProviders(id: string, driver: Driver): void {
    const ops = this.#registry.opsOf(id);
    const kinds = [...new Set(ops.flatMap((o) => o.interactions))];
    for (const kind of kinds) {
      const provider = new DriverProvider(driver, kind, ops.filter((o) => o.interactions.includes(kind)), this.#calls, (args) => this.#deadlineFor(args));
      this.#runtime.register(provider);
      this.#providers.push(provider);
      this.#interactions.set(providerIdFor(id, kind), kind);
    }
  }

  /** Replaces an external driver's providers with ones for the ops it now declares. */
  #reregister(driver: ExternalDriver): void {
    if (this.#closed) return;
    const id = driver.id;
    for (const p of this.#providers.filter((x) => x.driverId === id)) this.#runtime.unregister(providerIdFor(id, p.interaction));
    this.#providers = this.#providers.filter((x) => x.driverId !== id);
    this.#registry.refresh(id);
    try {
      this.#registerProviders(id, driver);
    } catch (e) {
      // Ops the kernel refuses (a schema it cannot compile): none of them is offered, and doctor says why.
      for (const p of this.#providers.filter((x) => x.driverId === id)) this.#runtime.unregister(providerIdFor(id, p.interaction));
      this.#providers = this.#providers.filter((x) => x.driverId !== id);
      driver.refuse(`${id}'s ops cannot be offered: ${(e as Error).message}`);
      this.#registry.refresh(id);
    }
  }

  fleetSettings(): FleetSettings | undefined {
    return this.#config.get().fleet;
  }

  #driverTimeout(): number {
    return this.#options.driverTimeoutMs ?? this.#config.get().hub.driver_timeout_ms;
  }

  /**
   * Ops with their own timeout (await-idle, ask) get that plus a margin, so `ask` (default 120 s)
   * is never cut off by the 90 s driver deadline. The kernel has applied the schema's defaults, so
   * an omitted `timeout_ms` arrives as its default.
   */
  #deadlineFor(args: JsonValue): number {
    const base = this.#driverTimeout();
    const timeout = args && typeof args === 'object' && !Array.isArray(args) ? args.timeout_ms : undefined;
    return typeof timeout === 'number' ? Math.max(base, timeout + 5000) : base;
  }

  // ── channels ──────────────────────────────────────────────────────────────────────────────
  overview(): Promise<DriverOverview[]> {
    return this.#registry.overview();
  }

  listChannels(): Promise<ChannelEntry[]> {
    return this.#registry.listAll();
  }

  drivers(): DriverInfo[] {
    return this.#registry.drivers().map(({ driver }) => driver.info());
  }

  async ops(channel: string): Promise<OpDescription[]> {
    return (await this.#registry.describe(channel)).ops;
  }

  async lookAt(channel: string): Promise<ApprovalPreview | undefined> {
    const canonical = (await this.#registry.describe(channel)).channel.channel;
    const { id, driver, addr } = this.#registry.resolve(canonical);
    if (!driver.preview) return undefined;
    return withDeadline(id, 'preview()', this.#options.previewTimeoutMs ?? 4000, () => driver.preview!(addr, 'screenshot', {}));
  }

  async describe(channel: string, op?: string, agent?: AgentIdentity): Promise<{ channel: ChannelEntry; ops: OpDescription[] }> {
    try {
      return await this.#registry.describe(channel, op);
    } catch (e) {
      // An unknown channel or op asked about by an agent is bad input too: it goes to the audit.
      const err = toHubError(channel, e);
      throw agent ? this.recordRejected({ channel, ...(op ? { op } : {}), agent }, err) : err;
    }
  }

  async driverReports(): Promise<DoctorReport[]> {
    return Promise.all(this.#registry.drivers().map(({ id }) => this.#registry.doctorOf(id)));
  }

  configStatus(problem?: string): HubDoctor['config'] {
    const error = this.#config.error() === undefined ? problem : `${this.#config.error()} (${this.#config.fallback()})`;
    return { ok: error === undefined, path: this.#config.path, ...(error ? { error } : {}) };
  }

  async doctor(): Promise<HubDoctor> {
    const drivers = await this.driverReports();
    const unknown = this.#unknownDrivers.length
      ? `hub.drivers names ${this.#unknownDrivers.join(', ')}, which no driver is (known: ${[...this.#disabled, ...this.#registry.drivers().map((d) => d.id)].sort().join(', ')})`
      : undefined;
    const config = this.configStatus(unknown);
    let audit: HubDoctor['audit'] = { ok: true, path: this.#audit.path };
    try {
      this.#audit.lastId();
      const error = this.#audit.failure() ? `the audit log cannot be written (${this.#audit.failure()}); new calls are refused until it can` : this.#audit.damage();
      if (error) audit = { ok: false, path: this.#audit.path, error };
    } catch (e) {
      audit = { ok: false, path: this.#audit.path, error: (e as Error).message };
    }
    const agentsError = this.#agents.error();
    const agents = { ok: agentsError === undefined, path: this.#agents.path, ...(agentsError ? { error: `${agentsError} — no named agent token is accepted until it is fixed` } : {}) };
    const warnings = this.#broker.ruleWarnings();
    return {
      ok: config.ok && audit.ok && agents.ok && drivers.every((d) => d.ok),
      drivers,
      config,
      audit,
      agents,
      panels_attached: this.#broker.panelsAttached(),
      ...(this.#disabled.length ? { disabled: this.#disabled } : {}),
      ...(warnings.length ? { warnings } : {}),
    };
  }

  // ── calls ─────────────────────────────────────────────────────────────────────────────────
  invoke(channel: string, op: string, args: JsonValue | undefined, options: CallOptions): Promise<JsonValue> {
    return this.#call(channel, op, args ?? {}, options);
  }

  async send(channel: string, request: HubSendRequest, options: CallOptions): Promise<SendReceipt> {
    const args = { message: request.message, reply_hint: request.reply_hint ?? 'full' } as JsonValue;
    return (await this.#call(channel, 'send', args, options)) as unknown as SendReceipt;
  }

  async recv(cursor: number | undefined, options: CallOptions & { driver?: string }): Promise<RecvBatch> {
    // A driver out of process says its kind in its handshake: one that cannot start is not a candidate.
    if (options.driver === undefined) await Promise.all(this.#registry.drivers().map(({ driver }) => driver instanceof ExternalDriver && driver.ensureStarted().catch(() => undefined)));
    const messaging = this.#registry.drivers().filter(({ driver }) => driver.info().kind !== 'capability');
    const id = options.driver ?? messaging[0]?.id;
    if (!id) throw new HubError('core', 'NotFound', 'no messaging driver is enabled', { hint: 'run `uplink doctor` to see the enabled drivers' });
    return (await this.#call(`${id}:*`, 'recv', cursor === undefined ? {} : { cursor }, options)) as unknown as RecvBatch;
  }

  async #call(channel: string, op: string, args: JsonValue, options: CallOptions): Promise<JsonValue> {
    const agent = options.agent;
    let checked: CheckedCall;
    let bounded = false;
    try {
      // Bounds first: nothing below may recurse over or store an unbounded value.
      checkBounds(channel, op, args);
      bounded = true;
      if (this.#closed) throw new HubError('core', 'Unavailable', 'the hub is shutting down', { hint: 'start it again and retry' });
      this.#auditWritable();
      checked = await checkCall(this.#registry, channel, op, args, options, Math.min(this.#driverTimeout(), 15_000));
    } catch (e) {
      const err = ending(toHubError(bounded ? channel : undefined, e), { type: 'rejected' });
      this.#rejected(channel, op, args, agent, err, undefined, bounded);
      this.#replyAudited();
      throw err;
    }
    const { spec, labels } = checked;
    const invocationId = `inv-${this.#idPrefix}-${(++this.#idCounter).toString(36)}`;
    const ctx: CallContext = {
      invocation_id: invocationId,
      channel,
      driver: driverOfChannel(channel),
      op,
      capability_id: spec.capability_id,
      safety: spec.mutating ? 'mutating' : 'read_only',
      agent,
      args: redactArgs(args, spec.sensitive_args),
      rawArgs: args,
      labels,
      accepted_at: this.#now(),
      sensitive: isSensitive(args, spec.sensitive_args),
    };
    this.#calls.add(ctx);
    const progress = startProgress(ctx, options, this.#options.progressIntervalMs ?? 2000, this.#now, () => this.#awaitingApproval(invocationId));
    if (progress.forward) this.#progress.set(invocationId, progress.forward);
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
        await this.#runtime.start({
          invocation_id: invocationId,
          capability_id: spec.capability_id,
          version_requirement: '^1',
          input: { channel, args },
          constraints: { ...(options.provider ? { provider_id: options.provider } : {}), ...(checked.interaction ? { interaction: checked.interaction } : {}) },
        });
      } catch (e) {
        // The kernel can refuse after the policy asked (runtime disposed, retention full): withdraw
        // the prompt so the operator is not left deciding a call that will never run.
        this.#broker.abandon(invocationId, 'cancelled');
        const err = ending(this.#mapError(ctx, e, options), { type: 'rejected' });
        this.#rejected(channel, op, ctx.args, agent, err, ctx);
        throw err;
      }
      const last = await this.#runtime.wait(invocationId);
      if (last.state !== 'succeeded') throw ending(this.#mapError(ctx, new SoftwareUseError(last.error?.code ?? 'cancelled', last.error?.message ?? 'cancelled'), options), { state: last.state });
      output = last.result!.output;
    } catch (e) {
      this.#replyAudited();
      throw e;
    } finally {
      progress.stop();
      clearImmediate(listen);
      if (listening) signal!.removeEventListener('abort', onAbort);
      this.#done(invocationId);
    }
    this.#replyAudited();
    return output;
  }

  /** The call is over: nothing of it stays in memory (the kernel forgets it, output and all). */
  #done(invocationId: string): void {
    try {
      this.#runtime.release(invocationId);
    } catch {
      // Never admitted (the start was refused), or already evicted: nothing is retained.
    }
    this.#broker.forget(invocationId);
    this.#progress.delete(invocationId);
    this.#calls.delete(invocationId);
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
  #replyAudited(): void {
    if (!this.#timeline.beforeReply()) throw auditUnavailable(this.#audit.failure() ?? 'the last write failed');
  }

  /** Refuses a new call while the audit cannot be written, after one more try of what is queued. */
  #auditWritable(): void {
    if (this.#audit.failure() === undefined) return;
    this.#timeline.flush();
    const failure = this.#audit.failure();
    if (failure !== undefined) throw auditUnavailable(failure);
  }

  #mapError(ctx: CallContext, e: unknown, options: Pick<CallOptions, 'provider' | 'interaction'>): HubError {
    if (e instanceof HubError) return e;
    if (!(e instanceof SoftwareUseError)) return toHubError(ctx.channel, e);
    const deny = this.#broker.denial(ctx.invocation_id);
    // Nobody refused a prompt the stopping hub withdrew: the agent should retry later, not give up.
    if (deny?.unavailable) return new HubError('core', 'Unavailable', deny.reason, { ...(deny.hint ? { hint: deny.hint } : {}), code: e.code, outcome: 'denied' });
    if (deny?.error) return deny.error;
    const err = mapKernelError({
      channel: ctx.channel,
      op: ctx.op,
      code: e.code,
      message: kernelText(e.message),
      denyReason: e.code === 'policy_denied' ? deny?.reason : undefined,
      denyHint: e.code === 'policy_denied' ? deny?.hint : undefined,
      driverError: e.code === 'provider_failed' ? this.#driverError(ctx.invocation_id) : undefined,
      constraints: { provider_id: options.provider, interaction: options.interaction },
    });
    if (e.code === 'policy_denied' && deny?.timedOut) err.outcome = 'timed_out';
    return err;
  }

  recordRejected(request: { channel?: string; op?: string; agent: AgentIdentity }, error: HubError): HubError {
    this.#rejected(request.channel ?? '', request.op ?? '', undefined, request.agent, ending(error, { type: 'rejected' }), undefined, false);
    return this.#timeline.beforeReply() ? error : auditUnavailable(this.#audit.failure() ?? 'the last write failed');
  }

  // ── timeline ──────────────────────────────────────────────────────────────────────────────
  subscribe(listener: (entry: AuditEntry) => void): Disposer {
    return this.#timeline.subscribe(listener);
  }

  queryAudit(query: AuditQuery): AuditPage {
    return this.#timeline.query(query);
  }

  auditFailure(): string | undefined {
    return this.#audit.failure();
  }

  onAuditChange(listener: (failure: string | undefined) => void): Disposer {
    return this.#auditListeners.on(listener);
  }

  /** Records a refusal; `bounded` says the request passed the bounds (else nothing looks it up). */
  #rejected(channel: string, op: string, args: JsonValue | undefined, agent: AgentIdentity, err: HubError, ctx?: CallContext, bounded = true): void {
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
      ...(err.evidence && !sensitive ? { detail: `evidence: ${err.evidence}`.slice(0, 8192) } : {}),
    });
  }

  /** Projects each kernel event into the timeline, with the call's facts and the kernel's outcome. */
  #onEvent(e: RuntimeEvent): void {
    const ctx = this.#calls.get(e.invocation_id);
    if (e.kind === 'progress' && e.progress) this.#progress.get(e.invocation_id)?.(e.progress);
    const outcome: EventOutcome = {};
    if (ctx) {
      const interaction = e.provider_id === undefined ? undefined : this.#interactions.get(e.provider_id);
      if (interaction) outcome.interaction = interaction;
      if (e.kind === 'succeeded' && !ctx.sensitive) outcome.output = this.#runtime.peek(e.invocation_id).result?.output;
      if (e.kind === 'failed' && e.error) {
        outcome.error = ending(this.#mapError(ctx, new SoftwareUseError(e.error.code, e.error.message), {}), { state: 'failed' });
        if (!ctx.sensitive) {
          const detail = this.#operatorDetail(e.invocation_id);
          if (detail) outcome.detail = detail;
        }
      }
    }
    // A prompt the stopping hub withdrew ends cancelled in the kernel, but nobody cancelled it: as its decision says, it was denied.
    if (e.kind === 'cancelled' && this.#broker.denial(e.invocation_id)?.unavailable) outcome.ended = 'denied';
    this.#timeline.record(eventEntry(e, ctx, this.#now, outcome));
    if (e.kind === 'cancelled') this.#broker.abandon(e.invocation_id, 'cancelled');
  }

  /** The driver's own DriverError behind a `provider_failed`, meant for the agent. */
  #driverError(invocationId: string): HubError | undefined {
    try {
      const thrown = this.#runtime.diagnostic(invocationId)?.error;
      return isDriverError(thrown) ? HubError.fromDriverError(this.#calls.get(invocationId)?.channel, thrown) : undefined;
    } catch {
      return undefined; // not retained (never admitted), or a thrown value that breaks on inspection
    }
  }

  /** What the operator sees of a failure in the audit: the kernel's diagnostic and the driver's evidence. */
  #operatorDetail(invocationId: string): string | undefined {
    const d = this.#runtime.diagnostic(invocationId);
    if (!d) return undefined;
    const evidence = this.#driverError(invocationId)?.evidence;
    return [`${d.kind}: ${d.detail}`, evidence && `evidence: ${evidence}`].filter(Boolean).join('\n');
  }

  async #preview(ctx: CallContext): Promise<ApprovalPreview | undefined> {
    const { driver, addr } = this.#registry.resolve(ctx.channel);
    if (!driver.preview) return undefined;
    // A driver hides text under its own `sensitive: true` flag and then needs the real text (to say
    // "type 27 characters"); fields named by sensitive_args stay redacted, the driver knows nothing of them.
    const raw = ctx.rawArgs;
    const flagged = !!raw && typeof raw === 'object' && !Array.isArray(raw) && raw.sensitive === true;
    const args = ctx.sensitive && !flagged ? ctx.args : raw;
    return withDeadline(ctx.driver, 'preview()', this.#options.previewTimeoutMs ?? 4000, () => driver.preview!(addr, ctx.op, args ?? {}));
  }

  /**
   * The driver's refusal of a call before the operator is asked. Only a refusal counts (Rejected,
   * NotFound, Invalid): a slow, broken or momentarily unavailable check proves nothing, the prompt
   * goes ahead and the op checks again when it acts.
   */
  async #precheck(ctx: CallContext, args: JsonValue, interaction: InteractionKind): Promise<HubError | undefined> {
    try {
      const { driver, addr } = this.#registry.resolve(ctx.channel);
      if (!driver.precheck) return undefined;
      const invokeCtx: InvokeContext = { interaction, agent: ctx.agent.name, invocation_id: ctx.invocation_id, ...(ctx.agent.caller ? { caller: ctx.agent.caller } : {}) };
      await withDeadline(ctx.driver, 'precheck()', Math.min(this.#driverTimeout(), 15_000), () => driver.precheck!(addr, ctx.op, args, invokeCtx));
      return undefined;
    } catch (e) {
      return isDriverError(e) && ['Rejected', 'NotFound', 'Invalid'].includes(e.kind) ? HubError.fromDriverError(ctx.channel, e) : undefined;
    }
  }

  // ── approvals ─────────────────────────────────────────────────────────────────────────────
  attachPanel(): Disposer {
    return this.#broker.attachPanel();
  }

  panelsAttached(): number {
    return this.#broker.panelsAttached();
  }

  revealApprovalArgs(approvalId: string, by: string): JsonValue {
    return this.#broker.reveal(approvalId, by);
  }

  pendingApprovals(): PendingApproval[] {
    return this.#broker.pending();
  }

  subscribeApprovals(listener: (event: ApprovalEvent) => void): Disposer {
    return this.#broker.subscribe(listener);
  }

  async decide(approvalId: string, decision: ApprovalDecision): Promise<DecideResult> {
    return this.#broker.decide(approvalId, decision);
  }

  async denyAll(agentId: string, by: string, reason?: string): Promise<string[]> {
    return this.#broker.denyAll(agentId, by, reason);
  }

  listRules(): StandingRuleStatus[] {
    return this.#broker.rules();
  }

  async revokeRule(ruleId: string, by: string): Promise<void> {
    this.#broker.revokeRule(ruleId, by);
  }

  async confirmRule(ruleId: string, digest: string, by: string): Promise<void> {
    this.#broker.confirmRule(ruleId, digest, by);
  }

  async updateRule(ruleId: string, scope: RuleScope, by: string): Promise<void> {
    this.#broker.updateRule(ruleId, scope, by);
  }

  listSessionGrants(): SessionGrant[] {
    return this.#broker.sessionGrants();
  }

  async revokeSessionGrant(grantId: string, by: string): Promise<void> {
    this.#broker.revokeSessionGrant(grantId, by);
  }

  approvalTimeoutMs(): number {
    return this.#config.get().approvals.timeout_ms;
  }

  async setApprovalTimeoutMs(ms: number, by: string): Promise<void> {
    setApprovalTimeout(this.#config, (e, d) => this.#timeline.record(e, d), this.#now(), ms, by);
  }

  // ── agent credentials ────────────────────────────────────────────────────────────────────
  listAgents(): AgentSummary[] {
    return this.#agents.list();
  }

  async createAgent(name: string, by: string): Promise<{ id: string; token: string }> {
    const created = this.#agents.create(name, by, this.#now());
    this.#agentDecision('agent-create', created.id, by, `agent ${created.id} created`);
    return created;
  }

  async revokeAgent(name: string, by: string): Promise<void> {
    this.#agents.revoke(name, this.#now());
    this.#agentDecision('agent-revoke', name, by, `agent ${name} revoked; its token is refused from now on`);
  }

  authenticateAgent(bearer: string | undefined): AgentCredential | undefined {
    return this.#agents.authenticate(bearer);
  }

  /** The operator's change to a credential, fsynced like any decision (the token is never in it). */
  #agentDecision(op: string, id: string, by: string, reason: string): void {
    this.#timeline.record({ at: this.#now(), type: 'decision', kind: 'decision', op, authorized: 'operator', by, reason, granted: op === 'agent-create', args: { name: id } }, true);
  }

  // ── human-only controls ──────────────────────────────────────────────────────────────────
  async setTier(channel: string, tier: string, by: AgentIdentity): Promise<void> {
    const { id, driver, addr } = this.#registry.resolve(channel);
    if (by.kind !== 'panel' && by.kind !== 'cli') throw new HubError(id, 'Rejected', 'only a person at the panel or the CLI can set a tier', { hint: 'ask the operator to set it in the panel' });
    // A driver out of process offers setTier once its handshake said so.
    await this.#registry.ready(channel);
    if (!driver.setTier) throw new HubError(id, 'Unavailable', `${id} has no permission tiers`);
    await withDeadline(id, 'setTier()', this.#driverTimeout(), () => driver.setTier!(addr, tier)).catch((e: unknown) => {
      throw toHubError(channel, e);
    });
    const authorized = by.kind === 'cli' ? 'cli' : 'operator';
    this.#timeline.record({ at: this.#now(), type: 'decision', kind: 'decision', channel, op: 'set-tier', agent: by, authorized, by: by.user ?? by.name, reason: `tier set to ${tier}`, granted: true }, true);
  }

  // ── out-of-process drivers ───────────────────────────────────────────────────────────────
  driverStatus(): Promise<ExternalStatus[]> {
    return Promise.all(this.#external.map((d) => externalStatus(d, this.dataDir)));
  }

  driverTrace(id: string, filter?: TraceFilter): TraceEntry[] {
    return this.#externalDriver(id).trace(filter);
  }

  async trustDriver(id: string, sha256: string, by: string): Promise<ExternalStatus> {
    const driver = this.#externalDriver(id);
    const { file } = await trustEntry(this.#config, this.dataDir, id, sha256);
    this.#timeline.record({ at: this.#now(), type: 'decision', kind: 'decision', op: 'driver-trust', authorized: 'operator', by, reason: `external driver ${id} trusted: ${file} with sha256 ${sha256}`, granted: true, args: { driver: id, file, sha256 } }, true);
    await driver.restart().catch(() => undefined);
    return externalStatus(driver, this.dataDir);
  }

  async restartDriver(id: string, by: string): Promise<ExternalStatus> {
    const driver = this.#externalDriver(id);
    this.#timeline.record({ at: this.#now(), type: 'decision', kind: 'decision', op: 'driver-restart', authorized: 'operator', by, reason: `external driver ${id} restarted`, granted: true, args: { driver: id } }, true);
    // Why it did not come up is in the status (admission, version, stderr), which the panel shows.
    await driver.restart().catch(() => undefined);
    return externalStatus(driver, this.dataDir);
  }

  #externalDriver(id: string): ExternalDriver {
    const driver = this.#external.find((d) => d.id === id);
    if (!driver) throw new HubError('core', 'NotFound', `no external driver ${id} runs in this hub (external: ${this.#external.map((d) => d.id).join(', ') || 'none'})`, { hint: 'add it to external_drivers (and hub.drivers, when present) in config.json and restart the hub' });
    return driver;
  }

  // ── kernel views ─────────────────────────────────────────────────────────────────────────
  providers(): ProviderView[] {
    return this.#providers.map((p) => ({
      provider_id: providerIdFor(p.driverId, p.interaction),
      version: p.descriptor().version,
      driver: p.driverId,
      interaction: p.interaction,
      capabilities: p.capabilities().map((c) => c.spec.id),
    }));
  }

  /** Which provider a call would pin; `versionRequirement` defaults to the `^1` every hub call uses. */
  async explainSelection(capabilityId: string, constraints?: { provider_id?: string; interaction?: InteractionKind }, versionRequirement = '^1'): Promise<SelectionExplanation> {
    return this.#runtime.explainSelection({ capability_id: capabilityId, version_requirement: versionRequirement, constraints: constraints ?? {} });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.#broker.pending()) this.#broker.abandon(p.invocation_id, 'closed');
    await Promise.resolve(this.#runtime.dispose()).catch(() => undefined);
    // Let cancelled invocations settle their terminal events into the store.
    await new Promise((r) => setTimeout(r, 10));
    for (const d of this.#disposers.splice(0)) d();
    await Promise.all(this.#registry.drivers().map(({ driver }) => driver.dispose?.().catch(() => undefined)));
    this.#timeline.flush();
    this.#config.close();
    this.#audit.close();
  }
}
