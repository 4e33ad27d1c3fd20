/**
 * The hub implementation: wires drivers into the kernel as providers, the broker in as policy,
 * and every kernel event into the audit store and the live timeline. Calls run as kernel
 * invocations; what the agent gets back is the op's result or one rendered DriverError.
 */
import { Runtime } from '../kernel';
import type { InteractionKind, JsonValue, SelectionExplanation } from '../kernel';
import { ExternalDriver } from '../drivers';
import type {
  ApprovalPreview,
  ChannelEntry,
  DoctorReport,
  Driver,
  DriverInfo,
  ExternalStatus,
  RecvBatch,
  SendReceipt,
  TraceEntry,
  TraceFilter,
} from '../drivers';
import { createExternalDrivers, externalEntries, ExternalDriverAdmin } from './driver-admin';
import { AuditStore, auditUnavailable, Timeline } from './audit';
import type { AuditCheckpoint } from './audit';
import { ApprovalBroker, setApprovalTimeout } from './approvals';
import type { RuleScope } from './approvals';
import { AgentCredentialStore, liveSecrets, readToken } from './credentials';
import type { AgentCredential, AgentSummary, SecretMask } from './credentials';
import type { CallContext } from './call-context';
import { ConfigStore } from './config';
import type { FleetSettings } from './config';
import { ChannelRegistry, DriverProviders, withDeadline } from './channels';
import { ending, HubError, toHubError } from './errors';
import type { DecideResult, Hub, ProviderView } from './hub';
import { CallPath, precheckFor, previewFor } from './calls';
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
  /** How often a pending prompt's precheck runs again while a panel is attached (default 5000 ms; 0: never). */
  recheckMs?: number;
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
  #registry: ChannelRegistry;
  #broker: ApprovalBroker;
  #agents: AgentCredentialStore;
  /** The live secrets of this data directory, masked in whatever a driver returns. */
  #secrets: SecretMask;
  #runtime: Runtime<CallContext>;
  #calls: CallPath;
  #providers: DriverProviders;
  #timeline: Timeline;
  #disposers: Disposer[] = [];
  #options: HubOptions;
  #closed = false;
  /** Drivers left out by `hub.drivers`, and names there that match no driver (doctor says so). */
  #disabled: string[] = [];
  /** The out-of-process drivers that run (admitted or waiting to be). */
  #external: ExternalDriver[] = [];
  #unknownDrivers: string[] = [];
  #admin: ExternalDriverAdmin;
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
    this.#secrets = liveSecrets(this.dataDir);
    // The MCP token, if the data directory has one yet (the HTTP server registers the rest it issues).
    readToken(this.dataDir);
    this.#agents = new AgentCredentialStore(this.dataDir);
    this.#audit.onFailureChange = (failure) => this.#auditListeners.emit(failure);
    this.#timeline = new Timeline(this.#audit, this.#secrets);
    // A broken config file is recorded once per distinct error (the file is the operator's input).
    const configRejected = (error: string): void =>
      this.#timeline.record({
        at: this.#now(),
        type: 'rejected',
        kind: 'rejected',
        op: 'config',
        state: 'rejected',
        error_kind: 'Invalid',
        message: `${error} (${this.#config.fallback()})`,
        hint: 'fix the file; it is reloaded on save',
      });
    const startupError = this.#config.error();
    if (startupError) configRejected(startupError);
    this.#disposers.push(this.#config.onError(configRejected));
    const builtIn = set.create((name) => this.#config.section(name));
    // Out-of-process drivers are built but not started: each starts on its first call, once admitted.
    const entries = externalEntries(this.#config).filter((e) => !builtIn.some((d) => d.info().id === e.id));
    this.#external = createExternalDrivers(
      this.#config,
      this.dataDir,
      entries,
      () => Math.min(this.#driverTimeout(), 15_000),
      (id, integrity) => this.#admin.admitted(id, integrity),
    );
    const created: Driver[] = [...builtIn, ...this.#external];
    // `hub.drivers` lets an operator run only some drivers (a server without a display needs no
    // desktop driver, and `doctor` should not fail for it). Read once, at start.
    const wanted = this.#config.get().hub.drivers;
    const enabled = wanted ? created.filter((d) => wanted.includes(d.info().id)) : created;
    for (const d of created) if (!enabled.includes(d)) void d.dispose?.();
    this.#external = this.#external.filter((d) => enabled.includes(d));
    this.#admin = new ExternalDriverAdmin(this.#external, {
      config: this.#config,
      dataDir: this.dataDir,
      record: (e, d) => this.#timeline.record(e, d),
      query: (q) => this.#timeline.query(q),
      now: this.#now,
      leftOut: entries.filter((e) => !this.#external.some((d) => d.id === e.id)),
    });
    this.#disabled = created.filter((d) => !enabled.includes(d)).map((d) => d.info().id);
    this.#unknownDrivers = (wanted ?? []).filter((id) => !created.some((d) => d.info().id === id));
    this.#registry = new ChannelRegistry(enabled, () => Math.min(this.#driverTimeout(), 15_000));
    this.#broker = new ApprovalBroker({
      config: this.#config,
      audit: this.#audit,
      record: (entry, durable) => this.#timeline.record(entry, durable),
      preview: async (ctx) => this.#secrets.mask(await previewFor(this.#registry, ctx, this.#options.previewTimeoutMs ?? 4000)),
      // What a check says reaches the panel too (a prompt's would_fail): masked like a preview.
      precheck: async (ctx, args, interaction) => {
        const error = await precheckFor(this.#registry, ctx, args, interaction, Math.min(this.#driverTimeout(), 15_000));
        return error && this.#secrets.maskError(error);
      },
      opParams: () => this.#registry.drivers().flatMap(({ id }) => this.#registry.opsOf(id).map((o) => ({ driver: id, ...o }))),
      now: this.#now,
      ...(options.panelGraceMs !== undefined ? { panelGraceMs: options.panelGraceMs } : {}),
      ...(options.recheckMs !== undefined ? { recheckMs: options.recheckMs } : {}),
    });
    this.#runtime = new Runtime<CallContext>({ policy: this.#broker.policy, now: this.#now });
    this.#providers = new DriverProviders(this.#runtime, this.#registry);
    for (const { id, driver } of this.#registry.drivers()) this.#providers.register(id, driver);
    // An external driver's ops are known once it has started, and may change when it restarts
    // (a built-in served out of process, too).
    for (const d of enabled)
      if (d instanceof ExternalDriver) this.#disposers.push(d.onChange((what) => what === 'ops' && !this.#closed && this.#providers.reregister(d)));
    this.#calls = new CallPath({
      registry: this.#registry,
      runtime: this.#runtime,
      broker: this.#broker,
      timeline: this.#timeline,
      audit: this.#audit,
      now: this.#now,
      interactions: this.#providers.interactions,
      secrets: this.#secrets,
      progressIntervalMs: options.progressIntervalMs ?? 2000,
      driverTimeout: () => this.#driverTimeout(),
      closed: () => this.#closed,
    });
    this.#disposers.push(this.#runtime.subscribe((e, ctx) => this.#calls.onEvent(e, ctx)));
  }

  fleetSettings(): FleetSettings | undefined {
    return this.#config.get().fleet;
  }

  #driverTimeout(): number {
    return this.#options.driverTimeoutMs ?? this.#config.get().hub.driver_timeout_ms;
  }

  // ── channels ──────────────────────────────────────────────────────────────────────────────
  async overview(): Promise<DriverOverview[]> {
    return this.#secrets.mask(await this.#registry.overview());
  }

  // What drivers say of their channels (titles, labels) and of their health reaches agents too: masked.
  async listChannels(): Promise<ChannelEntry[]> {
    return this.#secrets.mask(await this.#registry.listAll());
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
    return this.#secrets.mask(await withDeadline(id, 'preview()', this.#options.previewTimeoutMs ?? 4000, () => driver.preview!(addr, 'screenshot', {})));
  }

  async describe(channel: string, op?: string, agent?: AgentIdentity): Promise<{ channel: ChannelEntry; ops: OpDescription[] }> {
    try {
      return this.#secrets.mask(await this.#registry.describe(channel, op));
    } catch (e) {
      // An unknown channel or op asked about by an agent is bad input too: it goes to the audit.
      const err = this.#secrets.maskError(toHubError(channel, e));
      throw agent ? this.recordRejected({ channel, ...(op ? { op } : {}), agent }, err) : err;
    }
  }

  async driverReports(): Promise<DoctorReport[]> {
    return this.#secrets.mask(await Promise.all(this.#registry.drivers().map(({ id }) => this.#registry.doctorOf(id))));
  }

  onConfigChange(listener: () => void): Disposer {
    const off = [this.#config.onChange(() => listener()), this.#config.onError(() => listener())];
    return () => off.forEach((d) => d());
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
    const audit = await this.#audit.health();
    const agents = this.#agents.health();
    const warnings = this.#broker.rules.warnings();
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
    return this.#calls.run(channel, op, args ?? {}, options);
  }

  async send(channel: string, request: HubSendRequest, options: CallOptions): Promise<SendReceipt> {
    const args = { message: request.message, reply_hint: request.reply_hint ?? 'full' } as JsonValue;
    return (await this.#calls.run(channel, 'send', args, options)) as unknown as SendReceipt;
  }

  async messagingDrivers(): Promise<string[]> {
    // A driver out of process says its kind in its handshake: one that cannot start is not a candidate.
    await Promise.all(this.#registry.drivers().map(({ driver }) => driver instanceof ExternalDriver && driver.ensureStarted().catch(() => undefined)));
    return this.#registry
      .drivers()
      .filter(({ driver }) => driver.info().kind !== 'capability')
      .map(({ id }) => id);
  }

  async recv(cursor: number | undefined, options: CallOptions & { driver?: string }): Promise<RecvBatch> {
    const id = options.driver ?? (await this.messagingDrivers())[0];
    if (!id) throw new HubError('core', 'NotFound', 'no messaging driver is enabled', { hint: 'run `uplink doctor` to see the enabled drivers' });
    return (await this.#calls.run(`${id}:*`, 'recv', cursor === undefined ? {} : { cursor }, options)) as unknown as RecvBatch;
  }

  recordRejected(request: { channel?: string; op?: string; agent: AgentIdentity }, error: HubError): HubError {
    this.#calls.rejected(request.channel ?? '', request.op ?? '', undefined, request.agent, ending(error, { type: 'rejected' }), undefined, false);
    return this.#timeline.beforeReply() ? error : auditUnavailable(this.#audit.failure() ?? 'the last write failed');
  }

  recordLost(last: readonly AuditEntry[]): void {
    for (const e of last) {
      const waiting = e.kind === 'approval_requested';
      this.#timeline.record({
        at: this.#now(),
        type: 'event',
        kind: 'failed',
        invocation_id: e.invocation_id!,
        sequence: (e.sequence ?? 0) + 1,
        ...(e.channel !== undefined ? { channel: e.channel } : {}),
        ...(e.op !== undefined ? { op: e.op } : {}),
        ...(e.capability_id !== undefined ? { capability_id: e.capability_id } : {}),
        ...(e.agent ? { agent: e.agent } : {}),
        ...(e.provider_id !== undefined ? { provider_id: e.provider_id } : {}),
        ...(e.interaction !== undefined ? { interaction: e.interaction } : {}),
        state: 'failed',
        error_code: 'internal',
        error_kind: 'Unavailable',
        message: waiting
          ? 'lost with the hub: it stopped (killed or crashed) while the call waited for the operator, so it did not run'
          : 'lost with the hub: it stopped (killed or crashed) before the call ended',
        hint: waiting ? 'retry it if it is still wanted' : 'it may have run part-way: check its channel before retrying',
        outcome: 'lost',
      });
    }
    this.#timeline.flush(true);
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

  onAuditCheckpoint(listener: (checkpoint: AuditCheckpoint) => void): Disposer {
    return this.#audit.onCheckpoint(listener);
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

  refreshApproval(approvalId: string, by: string): Promise<PendingApproval> {
    return this.#broker.refresh(approvalId, by);
  }

  async denyAll(agentId: string, by: string, reason?: string): Promise<string[]> {
    return this.#broker.denyAll(agentId, by, reason);
  }

  listRules(): StandingRuleStatus[] {
    return this.#broker.rules.list();
  }

  async revokeRule(ruleId: string, by: string): Promise<void> {
    this.#broker.rules.revoke(ruleId, by);
  }

  async confirmRule(ruleId: string, digest: string, by: string): Promise<void> {
    this.#broker.rules.confirm(ruleId, digest, by);
  }

  async updateRule(ruleId: string, scope: RuleScope, by: string): Promise<void> {
    this.#broker.rules.update(ruleId, scope, by);
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
    this.#timeline.record(
      { at: this.#now(), type: 'decision', kind: 'decision', op, authorized: 'operator', by, reason, granted: op === 'agent-create', args: { name: id } },
      true,
    );
  }

  // ── human-only controls ──────────────────────────────────────────────────────────────────
  async setTier(channel: string, tier: string, by: AgentIdentity): Promise<void> {
    const { id, driver, addr } = this.#registry.resolve(channel);
    if (by.kind !== 'panel' && by.kind !== 'cli')
      throw new HubError(id, 'Rejected', 'only a person at the panel or the CLI can set a tier', { hint: 'ask the operator to set it in the panel' });
    // A driver out of process offers setTier once its handshake said so.
    await this.#registry.ready(channel);
    if (!driver.setTier) throw new HubError(id, 'Unavailable', `${id} has no permission tiers`);
    await withDeadline(id, 'setTier()', this.#driverTimeout(), () => driver.setTier!(addr, tier)).catch((e: unknown) => {
      throw toHubError(channel, e);
    });
    const authorized = by.kind === 'cli' ? 'cli' : 'operator';
    this.#timeline.record(
      {
        at: this.#now(),
        type: 'decision',
        kind: 'decision',
        channel,
        op: 'set-tier',
        agent: by,
        authorized,
        by: by.user ?? by.name,
        reason: `tier set to ${tier}`,
        granted: true,
      },
      true,
    );
  }

  // ── out-of-process drivers ───────────────────────────────────────────────────────────────
  // A driver's stderr and protocol trace are its text too: masked like its results.
  async driverStatus(): Promise<ExternalStatus[]> {
    return this.#secrets.mask(await this.#admin.status());
  }

  driverTrace(id: string, filter?: TraceFilter): TraceEntry[] {
    return this.#secrets.mask(this.#admin.trace(id, filter));
  }

  async trustDriver(id: string, sha256: string, by: string): Promise<ExternalStatus> {
    return this.#secrets.mask(await this.#admin.trust(id, sha256, by));
  }

  async restartDriver(id: string, by: string, progress?: (step: string) => void): Promise<ExternalStatus> {
    return this.#secrets.mask(await this.#admin.restart(id, by, progress));
  }

  // ── kernel views ─────────────────────────────────────────────────────────────────────────
  providers(): ProviderView[] {
    return this.#providers.views();
  }

  /** Which provider a call would pin; `versionRequirement` defaults to the `^1` every hub call uses. */
  async explainSelection(
    capabilityId: string,
    constraints?: { provider_id?: string; interaction?: InteractionKind },
    versionRequirement = '^1',
  ): Promise<SelectionExplanation> {
    return this.#runtime.explainSelection({ capability_id: capabilityId, version_requirement: versionRequirement, constraints: constraints ?? {} });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.#broker.pending()) this.#broker.abandon(p.invocation_id, 'closed');
    // Withdrawn prompts settle in the kernel as denials (the agent hears the hub stopped) before
    // disposing cancels whatever still runs.
    await new Promise((r) => setImmediate(r));
    await Promise.resolve(this.#runtime.dispose()).catch(() => undefined);
    // Let cancelled invocations settle their terminal events into the store.
    await new Promise((r) => setTimeout(r, 10));
    for (const d of this.#disposers.splice(0)) d();
    await Promise.all(this.#registry.drivers().map(({ driver }) => driver.dispose?.().catch(() => undefined)));
    this.#timeline.close();
    this.#config.close();
    this.#audit.close();
  }

  // ── fleet: this hub alone is in no fleet (joinFleet wraps it in a member that is) ──────────
  fleetStatus(): ReturnType<Hub['fleetStatus']> {
    return { member: false };
  }

  fleetHistory(_query: Parameters<Hub['fleetHistory']>[0]): ReturnType<Hub['fleetHistory']> {
    return { entries: [] };
  }

  subscribeFleet(_listener: Parameters<Hub['subscribeFleet']>[0]): Disposer {
    return () => undefined;
  }
}
