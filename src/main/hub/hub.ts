/**
 * The `Hub` interface: one per user session, hosted by `uplink serve`, the Electron main, or
 * embedded in `uplink mcp`/CLI. Edges talk only to this interface.
 *
 * Errors: every method that can fail for an agent or operator rejects with a `HubError`
 * (`./errors`), a `DriverError` that also knows its driver name and renders the exact
 * `uplink error [<driver>:<Kind>]: … — hint: …` line via `hubError.rendered`.
 */
import type { InteractionKind, JsonValue, SelectionExplanation } from '../kernel';
import type { HubError } from './errors';
import type { ApprovalPreview, ChannelEntry, DoctorReport, DriverInfo, ExternalStatus, RecvBatch, SendReceipt, TraceEntry, TraceFilter } from '../drivers';
import type { AgentCredential, AgentSummary } from './credentials';
import type {
  AuditCheckpoint,
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
  FleetStatus,
  HubDoctor,
  HubSendRequest,
  OpDescription,
  PendingApproval,
  StandingRuleStatus,
  SessionGrant,
} from './types';
import type { RuleScope } from './approvals';

/** What `decide` reports when it took effect. */
export interface DecideResult {
  approval_id: string;
  granted: boolean;
  /** Set for `always`: the id of the rule appended to the config file. */
  rule_id?: string;
}

/** One registered kernel provider, for the panel's provider view. */
export interface ProviderView {
  provider_id: string;
  /** The provider's own version (its descriptor's). */
  version: string;
  driver: string;
  interaction: InteractionKind;
  capabilities: string[];
}

/** The hub: channel registry, op↔capability mapping, approval broker, config and audit. */
export interface Hub {
  /** The data directory (`config.json`, `token`, `audit.sqlite`, `hub.json`). */
  readonly dataDir: string;

  // ── channels and ops ──────────────────────────────────────────────────────────────────────
  /** Every driver with its info, doctor health and channels (a failing driver is listed with `error`). */
  overview(): Promise<DriverOverview[]>;
  /** Who each driver is (its id, kind and declared tiers); no driver I/O. */
  drivers(): DriverInfo[];
  /** Every channel of every driver (the MCP `channel_list` / CLI `channels` payload). */
  listChannels(): Promise<ChannelEntry[]>;
  /** The ops of a channel's driver (`NotFound` for an unknown driver or channel). */
  ops(channel: string): Promise<OpDescription[]>;
  /**
   * Operator only: what the channel's target looks like now, from the driver's preview of a
   * `screenshot` (the picture an approval prompt shows, with its warnings). Looking is not an
   * action: no kernel call and no audit row, so a live view may ask several times a second.
   * `undefined` when the driver has no preview.
   */
  lookAt(channel: string): Promise<ApprovalPreview | undefined>;
  /**
   * A channel and its ops, or one op when `op` is given (`NotFound` naming the valid ops). With
   * `agent`, a failure is recorded in the audit as a rejected request.
   */
  describe(channel: string, op?: string, agent?: AgentIdentity): Promise<{ channel: ChannelEntry; ops: OpDescription[] }>;
  /** Hub + per-driver health; `ok` only when every driver and the config are healthy. */
  doctor(): Promise<HubDoctor>;
  /** The config file's state (doctor's `config`): a broken file says its error and which config is in force. */
  configStatus(): HubDoctor['config'];
  /** Told after config.json changes (an edit by anyone, a reload) or breaks: views that show it reload. */
  onConfigChange(listener: () => void): Disposer;
  /** Each driver's own doctor report. */
  driverReports(): Promise<DoctorReport[]>;

  // ── calls (every one is a kernel invocation, audited) ────────────────────────────────────
  /** Runs `<driver>.<op>` on a channel as `options.agent`; resolves with the op's result. */
  invoke(channel: string, op: string, args: JsonValue | undefined, options: CallOptions): Promise<JsonValue>;
  /** Runs `<driver>.send` (mutating) on a channel; resolves with the SendReceipt. */
  send(channel: string, request: HubSendRequest, options: CallOptions): Promise<SendReceipt>;
  /**
   * Runs `<driver>.recv` (read-only). `driver` defaults to the first messaging driver. Cursors are
   * per driver.
   */
  recv(cursor: number | undefined, options: CallOptions & { driver?: string }): Promise<RecvBatch>;
  /** This hub's messaging drivers (kind `messaging` or `both`), in config order; external ones are started to learn their kind. */
  messagingDrivers(): Promise<string[]>;

  /**
   * Records a request an edge refused before it reached the hub (malformed JSON args, bad tool
   * arguments), so every bad input is in the audit too. Returns the error to answer with: `error`
   * itself, or `[core:Unavailable]` when the refusal could not be audited (nothing is answered
   * unaudited, refusals included).
   */
  recordRejected(request: { channel?: string; op?: string; agent: AgentIdentity }, error: HubError): HubError;

  /**
   * Ends calls an earlier hub of this data directory left open (it was killed or crashed): one
   * terminal `failed` entry each, outcome `lost`, after `last` (each call's newest entry), fsynced.
   * Optional: a hub without it only names them (`recordUnfinishedCalls`).
   */
  recordLost?(last: readonly AuditEntry[]): void;

  // ── timeline ──────────────────────────────────────────────────────────────────────────────
  /** Every audit entry as it is recorded (kernel events enriched, decisions, rejected requests). */
  subscribe(listener: (entry: AuditEntry) => void): Disposer;
  /** Reads the audit store (survives restarts). */
  queryAudit(query: AuditQuery): AuditPage;
  /** Why the audit cannot be written right now (new calls are refused meanwhile), or undefined. */
  auditFailure(): string | undefined;
  /** Told whenever `auditFailure()` changes. */
  onAuditChange(listener: (failure: string | undefined) => void): Disposer;
  /** Told each signed checkpoint of the audit's hash chain (a fleet publishes them for the others to witness). */
  onAuditCheckpoint(listener: (checkpoint: AuditCheckpoint) => void): Disposer;

  // ── approvals ─────────────────────────────────────────────────────────────────────────────
  /** Marks a panel as attached; mutating ops `ask` only while at least one is. Returns the detach. */
  attachPanel(): Disposer;
  /** How many panels are attached. */
  panelsAttached(): number;
  /** Pending approvals, oldest first. */
  pendingApprovals(): PendingApproval[];
  /**
   * The raw args of a pending approval whose args are redacted (operator only: panel). Never stored;
   * the audit records that `by` revealed them. `NotFound` once the prompt is decided.
   */
  revealApprovalArgs(approvalId: string, by: string): JsonValue;
  /** Approval added/resolved events. */
  subscribeApprovals(listener: (event: ApprovalEvent) => void): Disposer;
  /**
   * Decides a pending approval. FINAL: the first decision wins; a later one, or one after the
   * timeout, rejects with `Rejected` "already decided". The decision is durable before it takes
   * effect. `always` appends a standing rule to the config file.
   */
  decide(approvalId: string, decision: ApprovalDecision): Promise<DecideResult>;
  /**
   * The operator's fresh look at a pending prompt's target: its preview and precheck run again
   * (recorded as the operator's look; it stands for no read by the agent). The prompt as it is now.
   */
  refreshApproval(approvalId: string, by: string): Promise<PendingApproval>;
  /** Denies every pending approval of one authenticated agent with one reason; the ids denied. */
  denyAll(agentId: string, by: string, reason?: string): Promise<string[]>;
  /** Standing rules from the config file, with last use. */
  listRules(): StandingRuleStatus[];
  /** Removes a standing rule from the config file (`NotFound` if there is none). */
  revokeRule(ruleId: string, by: string): Promise<void>;
  /** Puts a proposed rule in force if it still has the content the operator saw (`digest`). */
  confirmRule(ruleId: string, digest: string, by: string): Promise<void>;
  /** Rewrites a rule's channel, ops and agent (checked like a prompt's scope); recorded. */
  updateRule(ruleId: string, scope: RuleScope, by: string): Promise<void>;
  /** Live "approve for the session" grants. */
  listSessionGrants(): SessionGrant[];
  /** Ends a session grant; recorded. */
  revokeSessionGrant(grantId: string, by: string): Promise<void>;
  /** The approval timeout in ms (config `approvals.timeout_ms`, default 120000). */
  approvalTimeoutMs(): number;
  /** Writes `approvals.timeout_ms` to the config file. */
  setApprovalTimeoutMs(ms: number, by: string): Promise<void>;

  // ── agent credentials (operator-only: panel and CLI) ─────────────────────────────────────
  /** Named agents in `<data dir>/agents.json`, revoked ones included (never their tokens). */
  listAgents(): AgentSummary[];
  /** Creates a named agent; the token is returned once and never stored. Audited (never the token). */
  createAgent(name: string, by: string): Promise<{ id: string; token: string }>;
  /** Revokes a named agent: its token gets 401 from now on. Audited. */
  revokeAgent(name: string, by: string): Promise<void>;
  /** The named agent a bearer token belongs to (not revoked), if any. */
  authenticateAgent(bearer: string | undefined): AgentCredential | undefined;

  // ── human-only controls ──────────────────────────────────────────────────────────────────
  /** Sets a channel's tier via `Driver.setTier` (panel/CLI only, never MCP); audited. */
  setTier(channel: string, tier: string, by: AgentIdentity): Promise<void>;

  // ── out-of-process drivers (operator only: panel and CLI, never MCP) ─────────────────────
  /** Every external driver: process state, admission, restarts, last exit, recent stderr. */
  driverStatus(): Promise<ExternalStatus[]>;
  /** An external driver's protocol trace, oldest first (payloads masked and cut). */
  driverTrace(id: string, filter?: TraceFilter): TraceEntry[];
  /** Admits an external driver with the hash the operator saw (refused if the file changed since); audited. */
  trustDriver(id: string, sha256: string, by: string): Promise<ExternalStatus>;
  /**
   * Stops an external driver's process and starts it again, forgetting its crash backoff; audited.
   * `progress` hears each step as it happens ("stopping notes (pid 4242)…", "starting notes…").
   */
  restartDriver(id: string, by: string, progress?: (step: string) => void): Promise<ExternalStatus>;

  // ── kernel views ─────────────────────────────────────────────────────────────────────────
  /** The registered providers and the capabilities each offers. */
  providers(): ProviderView[];
  /**
   * Why the kernel would pick which provider for `<driver>.<op>` under these constraints (the
   * kernel's own explanation: the offer it would pin, and why each candidate did or did not match).
   */
  explainSelection(
    capabilityId: string,
    constraints?: { provider_id?: string; interaction?: InteractionKind },
    versionRequirement?: string,
  ): Promise<SelectionExplanation>;

  // ── fleet (a hub whose config has no `fleet` section answers as a hub in no fleet) ────────
  /** Who is in the fleet, as this hub sees it; `member: false` when this hub is in none. */
  fleetStatus(): FleetStatus;
  /** The fleet's merged history, newest first (`before`: a cursor from an earlier page); empty outside a fleet. */
  fleetHistory(query: { hub?: string; before?: number; limit?: number }): { entries: FleetHistoryEntry[]; next_before?: number };
  /** Told when membership changes and of every record the merged history receives; never, outside a fleet. */
  subscribeFleet(listener: (change: FleetChange) => void): Disposer;

  /** Stops the hub: cancels active invocations, denies pending approvals, closes the store. */
  close(): Promise<void>;
}
