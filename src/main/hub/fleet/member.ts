/**
 * A hub as a fleet member (docs/fleet.md): the `Hub` a hub with a `fleet` section in its
 * config.json is to its edges. Loaded only then, so a hub without one never loads the NATS client.
 */
import type { InteractionKind, JsonValue, SelectionExplanation } from '../../kernel';
import { driverOfChannel } from '../../drivers';
import type { ApprovalPreview, ChannelEntry, DoctorReport, DriverInfo, ExternalStatus, RecvBatch, SendReceipt, TraceEntry, TraceFilter } from '../../drivers';
import type { RuleScope } from '../approvals';
import { checkBounds } from '../bounds';
import type { FleetSettings } from '../config';
import type { AgentCredential, AgentSummary } from '../credentials';
import { HubError, toHubError } from '../errors';
import type { DecideResult, Hub, ProviderView } from '../hub';
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
  FleetChange,
  FleetHistoryEntry,
  FleetMembership,
  HubDoctor,
  HubSendRequest,
  OpDescription,
  PendingApproval,
  SessionGrant,
  StandingRuleStatus,
} from '../types';
import { Fleet } from './fleet';
import type { FleetOptions } from './fleet';
import { declared, splitFleetChannel } from './names';
import type { FleetBody } from './request';
import type { FleetCheckpoint } from './witness';
import type { AuditCheckpoint } from '../audit';

/** A hub that is a fleet member: the Hub interface, whose fleet status is always a membership. */
export interface FleetHub extends Hub {
  fleetStatus(): FleetMembership;
  /** Tells the fleet this hub's audit checkpoint, signed by its key; the others write it down (`<dataDir>/fleet/witness/<hub>.jsonl`). */
  publishCheckpoint(c: FleetCheckpoint): void;
}

/**
 * `core` as a fleet member. It defines every method of `Hub`, so that each says what the fleet
 * means for it: a `<hub>/<channel>` call goes to that hub, listings merge every connected hub's,
 * a name of another hub is refused where only its own hub can act, and the rest is `core`'s.
 * A name prefixed with this hub's own name is just a longer way to say a local one.
 */
export class FleetMember implements FleetHub {
  readonly #core: Hub;
  readonly #fleet: Fleet;
  readonly #own: string;

  constructor(core: Hub, fleet: Fleet) {
    this.#core = core;
    this.#fleet = fleet;
    this.#own = fleet.settings.name;
  }

  get dataDir(): string {
    return this.#core.dataDir;
  }

  // ── where a name lives ─────────────────────────────────────────────────────────────────
  /** The hub and its own name for `name`, when another hub owns it. */
  #remote(name: string): { hub: string; channel: string } | undefined {
    const at = splitFleetChannel(name);
    return at && at.hub !== this.#own ? at : undefined;
  }

  /** `name` without this hub's own prefix. */
  #local(name: string): string {
    const at = splitFleetChannel(name);
    return at && at.hub === this.#own ? at.channel : name;
  }

  /** `name` as this hub's, or refused: what it names is acted on only by the hub that owns it. */
  #localOnly(name: string, what: string, why: string, hint: (hub: string) => string): string {
    const at = this.#remote(name);
    if (!at) return this.#local(name);
    throw new HubError('fleet', 'Invalid', `${what} ${name} is hub ${at.hub}'s: ${why}`, { hint: hint(at.hub) });
  }

  /** A refusal before the call left this hub is this hub's to record, like any refused request. */
  #refused(channel: string, op: string, agent: AgentIdentity | undefined, e: unknown): never {
    const err = toHubError(channel, e);
    throw agent && err.driver === 'fleet' ? this.#core.recordRejected({ channel, op, agent }, err) : err;
  }

  async #call(
    at: { hub: string; channel: string },
    full: string,
    op: string,
    body: Extract<FleetBody, { method: 'invoke' | 'send' }>,
    options: CallOptions,
  ): Promise<JsonValue> {
    try {
      checkBounds(full, op, 'args' in body ? body.args : undefined);
      return await this.#fleet.requests.request(at.hub, options.onProgress ? { ...body, progress: true } : body, options.signal, undefined, options.onProgress);
    } catch (e) {
      return this.#refused(full, op, options.agent, e);
    }
  }

  /** Each connected hub's channels, prefixed with its name; a hub that does not answer has none now. */
  #remoteChannels(): Promise<Array<{ hub: string; channels: ChannelEntry[] }>> {
    const fleet = this.#fleet;
    return Promise.all(
      fleet.presence.hubs().map(async (hub) => {
        try {
          const list = (await fleet.requests.request(hub, { method: 'channels' }, undefined, fleet.listTimeoutMs)) as unknown as ChannelEntry[];
          return { hub, channels: Array.isArray(list) ? list.map((c) => prefixed(hub, c)) : [] };
        } catch {
          return { hub, channels: [] };
        }
      }),
    );
  }

  // ── channels and ops ───────────────────────────────────────────────────────────────────
  async overview(): Promise<DriverOverview[]> {
    // Another hub's drivers, as the panel lists them: `<hub>/<driver>`, healthy while it answers.
    const [mine, theirs] = await Promise.all([this.#core.overview(), this.#remoteChannels()]);
    const remoteDrivers = theirs.flatMap(({ hub, channels }) =>
      [...new Set(channels.map((c) => driverOfChannel(c.channel)))].map((driver) => ({
        driver,
        info: { id: driver, kind: 'both' as const, summary: `a driver of hub ${hub}` },
        health: { driver, ok: true, lines: [`on hub ${hub} of the fleet`] },
        channels: channels.filter((c) => driverOfChannel(c.channel) === driver),
      })),
    );
    return [...mine, ...remoteDrivers];
  }

  /** This hub's drivers only: another hub's appear in `overview` as `<hub>/<driver>`. */
  drivers(): DriverInfo[] {
    return this.#core.drivers();
  }

  async listChannels(): Promise<ChannelEntry[]> {
    const [mine, theirs] = await Promise.all([this.#core.listChannels(), this.#remoteChannels()]);
    return [...mine, ...theirs.flatMap((t) => t.channels)];
  }

  async ops(channel: string): Promise<OpDescription[]> {
    return this.#remote(channel) ? (await this.describe(channel)).ops : this.#core.ops(this.#local(channel));
  }

  async lookAt(channel: string): Promise<ApprovalPreview | undefined> {
    // No live frame crosses the fleet: "no preview" sends the panel to the recorded screenshot op.
    return this.#remote(channel) ? undefined : this.#core.lookAt(this.#local(channel));
  }

  async describe(channel: string, op?: string, agent?: AgentIdentity): Promise<{ channel: ChannelEntry; ops: OpDescription[] }> {
    const at = this.#remote(channel);
    if (!at) return this.#core.describe(this.#local(channel), op, agent);
    try {
      const got = (await this.#fleet.requests.request(at.hub, {
        method: 'describe',
        channel: at.channel,
        ...(op ? { op } : {}),
        ...(agent ? { agent: declared(agent) } : {}),
      })) as unknown as { channel: ChannelEntry; ops: OpDescription[] };
      return { ...got, channel: prefixed(at.hub, got.channel) };
    } catch (e) {
      return this.#refused(channel, op ?? '', agent, e);
    }
  }

  async doctor(): Promise<HubDoctor> {
    const report = await this.#core.doctor();
    const s = this.#fleet.status();
    const lines = [s.problem, s.warning, droppedLine(s.dropped)].filter((x): x is string => Boolean(x)).map((x) => `fleet ${s.name}: ${x}`);
    const fleet = { ok: s.connected && !s.problem, line: membershipLine(s) };
    return { ...report, fleet, ...(lines.length ? { warnings: [...(report.warnings ?? []), ...lines] } : {}) };
  }

  configStatus(): HubDoctor['config'] {
    return this.#core.configStatus();
  }

  onConfigChange(listener: () => void): Disposer {
    return this.#core.onConfigChange(listener);
  }

  driverReports(): Promise<DoctorReport[]> {
    return this.#core.driverReports();
  }

  // ── calls ──────────────────────────────────────────────────────────────────────────────
  invoke(channel: string, op: string, args: JsonValue | undefined, options: CallOptions): Promise<JsonValue> {
    const at = this.#remote(channel);
    if (!at) return this.#core.invoke(this.#local(channel), op, args, options);
    const body = {
      method: 'invoke' as const,
      channel: at.channel,
      op,
      args: args ?? {},
      agent: declared(options.agent),
      ...(options.expect ? { expect: options.expect } : {}),
      ...(options.interaction ? { interaction: options.interaction } : {}),
    };
    return this.#call(at, channel, op, body, options);
  }

  async send(channel: string, request: HubSendRequest, options: CallOptions): Promise<SendReceipt> {
    const at = this.#remote(channel);
    if (!at) return this.#core.send(this.#local(channel), request, options);
    const body = {
      method: 'send' as const,
      channel: at.channel,
      message: request.message,
      ...(request.reply_hint ? { reply_hint: request.reply_hint } : {}),
      agent: declared(options.agent),
    };
    return (await this.#call(at, channel, 'send', body, options)) as unknown as SendReceipt;
  }

  async recv(cursor: number | undefined, options: CallOptions & { driver?: string }): Promise<RecvBatch> {
    if (options.driver === undefined) return this.#core.recv(cursor, options);
    let driver: string;
    try {
      driver = this.#localOnly(
        options.driver,
        'driver',
        "recv reads the messages of this hub's own drivers",
        (hub) => `read them on hub ${hub}; its channels take send here as <hub>/<channel>`,
      );
    } catch (e) {
      return this.#refused(`${options.driver}:*`, 'recv', options.agent, e);
    }
    return this.#core.recv(cursor, { ...options, driver });
  }

  messagingDrivers(): Promise<string[]> {
    return this.#core.messagingDrivers();
  }

  recordRejected(request: { channel?: string; op?: string; agent: AgentIdentity }, error: HubError): HubError {
    return this.#core.recordRejected(request, error);
  }

  recordLost(last: readonly AuditEntry[]): void {
    this.#core.recordLost?.(last);
  }

  // ── timeline: this hub's own (the fleet's merged history is fleetHistory) ─────────────
  subscribe(listener: (entry: AuditEntry) => void): Disposer {
    return this.#core.subscribe(listener);
  }

  queryAudit(query: AuditQuery): AuditPage {
    return this.#core.queryAudit(query);
  }

  auditFailure(): string | undefined {
    return this.#core.auditFailure();
  }

  onAuditChange(listener: (failure: string | undefined) => void): Disposer {
    return this.#core.onAuditChange(listener);
  }

  onAuditCheckpoint(listener: (checkpoint: AuditCheckpoint) => void): Disposer {
    return this.#core.onAuditCheckpoint(listener);
  }

  // ── approvals: every hub's prompts; standing authority stays with each hub ─────────────
  attachPanel(): Disposer {
    // Other hubs learn at once that an operator is watching here (their prompts then ask).
    const detach = this.#core.attachPanel();
    this.#fleet.presence.announce();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      detach();
      this.#fleet.presence.announce();
    };
  }

  panelsAttached(): number {
    return this.#core.panelsAttached();
  }

  pendingApprovals(): PendingApproval[] {
    return [...this.#core.pendingApprovals(), ...this.#fleet.prompts.list()].sort((a, b) => a.requested_at - b.requested_at);
  }

  revealApprovalArgs(approvalId: string, by: string): JsonValue {
    const at = this.#remote(approvalId);
    if (!at) return this.#core.revealApprovalArgs(approvalId, by);
    throw new HubError('fleet', 'Rejected', `the sensitive args of hub ${at.hub}'s prompt stay on that hub`, {
      hint: `reveal them on hub ${at.hub}'s own panel`,
    });
  }

  subscribeApprovals(listener: (event: ApprovalEvent) => void): Disposer {
    const offCore = this.#core.subscribeApprovals(listener);
    const offFleet = this.#fleet.prompts.onApprovals(listener);
    return () => (offCore(), offFleet());
  }

  async decide(approvalId: string, decision: ApprovalDecision): Promise<DecideResult> {
    const at = this.#remote(approvalId);
    if (!at) return this.#core.decide(approvalId, decision);
    if (decision.kind !== 'once' && decision.kind !== 'deny') {
      throw new HubError('fleet', 'Rejected', `a prompt of hub ${at.hub} can be approved once or denied from this panel`, {
        hint: `approve it for the session or always on hub ${at.hub}'s own panel, where its rules live`,
      });
    }
    const body = {
      method: 'decide' as const,
      approval_id: at.channel,
      decision: decision.kind,
      by: decision.by.slice(0, 256),
      ...(decision.reason ? { reason: decision.reason.slice(0, 2000) } : {}),
    };
    const got = (await this.#fleet.requests.request(at.hub, body)) as { granted?: unknown };
    return { approval_id: approvalId, granted: got.granted === true };
  }

  refreshApproval(approvalId: string, by: string): Promise<PendingApproval> {
    const at = this.#remote(approvalId);
    if (!at) return this.#core.refreshApproval(approvalId, by);
    return Promise.reject(
      new HubError('fleet', 'Rejected', `the preview of hub ${at.hub}'s prompt is refreshed on that hub`, {
        hint: `look at it on hub ${at.hub}'s own panel; a change there reaches this panel`,
      }),
    );
  }

  /** This hub's own prompts of that agent; another hub's are denied one by one (`decide`). */
  denyAll(agentId: string, by: string, reason?: string): Promise<string[]> {
    return this.#core.denyAll(agentId, by, reason);
  }

  listRules(): StandingRuleStatus[] {
    return this.#core.listRules();
  }

  revokeRule(ruleId: string, by: string): Promise<void> {
    return this.#core.revokeRule(ruleId, by);
  }

  confirmRule(ruleId: string, digest: string, by: string): Promise<void> {
    return this.#core.confirmRule(ruleId, digest, by);
  }

  async updateRule(ruleId: string, scope: RuleScope, by: string): Promise<void> {
    const channel = this.#localOnly(
      scope.channel,
      'channel',
      "this hub's rules decide its own channels' calls",
      (hub) => `write the rule on hub ${hub}'s own panel, where its calls are decided`,
    );
    return this.#core.updateRule(ruleId, { ...scope, channel }, by);
  }

  listSessionGrants(): SessionGrant[] {
    return this.#core.listSessionGrants();
  }

  revokeSessionGrant(grantId: string, by: string): Promise<void> {
    return this.#core.revokeSessionGrant(grantId, by);
  }

  approvalTimeoutMs(): number {
    return this.#core.approvalTimeoutMs();
  }

  setApprovalTimeoutMs(ms: number, by: string): Promise<void> {
    return this.#core.setApprovalTimeoutMs(ms, by);
  }

  // ── agent credentials: this hub's own ──────────────────────────────────────────────────
  listAgents(): AgentSummary[] {
    return this.#core.listAgents();
  }

  createAgent(name: string, by: string): Promise<{ id: string; token: string }> {
    return this.#core.createAgent(name, by);
  }

  revokeAgent(name: string, by: string): Promise<void> {
    return this.#core.revokeAgent(name, by);
  }

  authenticateAgent(bearer: string | undefined): AgentCredential | undefined {
    return this.#core.authenticateAgent(bearer);
  }

  // ── human-only controls ────────────────────────────────────────────────────────────────
  async setTier(channel: string, tier: string, by: AgentIdentity): Promise<void> {
    const own = this.#localOnly(
      channel,
      'channel',
      'a tier is set by a person at the hub that owns the channel',
      (hub) => `set it on hub ${hub}'s own panel, or with \`uplink tier\` on that host`,
    );
    return this.#core.setTier(own, tier, by);
  }

  // ── out-of-process drivers: this hub's own ─────────────────────────────────────────────
  driverStatus(): Promise<ExternalStatus[]> {
    return this.#core.driverStatus();
  }

  driverTrace(id: string, filter?: TraceFilter): TraceEntry[] {
    return this.#core.driverTrace(this.#ownDriver(id, 'traced'), filter);
  }

  async trustDriver(id: string, sha256: string, by: string): Promise<ExternalStatus> {
    return this.#core.trustDriver(this.#ownDriver(id, 'trusted'), sha256, by);
  }

  async restartDriver(id: string, by: string, progress?: (step: string) => void): Promise<ExternalStatus> {
    return this.#core.restartDriver(this.#ownDriver(id, 'restarted'), by, progress);
  }

  #ownDriver(id: string, done: string): string {
    return this.#localOnly(id, 'driver', `an external driver is ${done} on the hub that runs it`, (hub) => `open hub ${hub}'s own panel`);
  }

  // ── kernel views: this hub's kernel ────────────────────────────────────────────────────
  providers(): ProviderView[] {
    return this.#core.providers();
  }

  async explainSelection(
    capabilityId: string,
    constraints?: { provider_id?: string; interaction?: InteractionKind },
    versionRequirement?: string,
  ): Promise<SelectionExplanation> {
    // Provider ids have a slash of their own (`uplink/tmux`): only the capability names a hub.
    const own = this.#localOnly(capabilityId, 'capability', "each hub's own kernel selects the providers of its calls", (hub) => `ask hub ${hub}'s own panel`);
    return this.#core.explainSelection(own, constraints, versionRequirement);
  }

  // ── fleet ──────────────────────────────────────────────────────────────────────────────
  fleetStatus(): FleetMembership {
    return this.#fleet.status();
  }

  publishCheckpoint(c: FleetCheckpoint): void {
    this.#fleet.publishCheckpoint(c);
  }

  fleetHistory(query: { hub?: string; before?: number; limit?: number }): { entries: FleetHistoryEntry[]; next_before?: number } {
    return this.#fleet.history(query);
  }

  subscribeFleet(listener: (change: FleetChange) => void): Disposer {
    return this.#fleet.onFleet(listener);
  }

  async close(): Promise<void> {
    await this.#fleet.close();
    await this.#core.close();
  }
}

/** `fleet a at nats://…: connected; members b (connected), c (unreachable); known by key (roster), 0 messages dropped`. */
function membershipLine(s: FleetMembership): string {
  const others = s.members.filter((m) => m.state !== 'self').map((m) => `${m.hub} (${m.state})`);
  const dropped = Object.values(s.dropped).reduce((n, k) => n + k, 0);
  const known = s.identity === 'keys' ? 'members known by key (roster)' : 'members share a token (none is known by key)';
  return `fleet ${s.name} at ${s.url}: ${s.connected ? 'connected' : 'not connected'}; ${others.length ? `members ${others.join(', ')}` : 'no other member seen'}; ${known}, ${dropped} message${dropped === 1 ? '' : 's'} dropped`;
}

/** The fleet messages dropped so far, in one line, or undefined when none was. */
function droppedLine(dropped: Record<string, number>): string | undefined {
  const parts = Object.entries(dropped)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason.replace('_', ' ')} ${n}`);
  if (!parts.length) return undefined;
  return `dropped fleet messages: ${parts.join(', ')} — hint: a client holding a member's credentials, or a NATS user outside the roster, sends messages this hub does not believe; check the NATS server's connections`;
}

const prefixed = (hub: string, entry: ChannelEntry): ChannelEntry => ({ ...entry, channel: `${hub}/${entry.channel}` });

/**
 * `core` as a fleet member (see `FleetMember`). Connects in the background: until it has, a
 * remote call fails as unavailable and local work goes on.
 */
export function joinFleet(core: Hub, settings: FleetSettings, options: FleetOptions = {}): FleetHub {
  const fleet = new Fleet(core, settings, options);
  fleet.start();
  const member = new FleetMember(core, fleet);
  // Every checkpoint of this hub's audit goes to the others, who keep it as a witness copy.
  member.onAuditCheckpoint((c) => member.publishCheckpoint(c));
  return member;
}
