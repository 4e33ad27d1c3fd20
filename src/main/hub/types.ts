/**
 * The hub's public surface: what the edges (MCP server, panel API, CLI) call. Everything an agent
 * or the operator does goes through one `Hub`; every driver call runs as a kernel invocation.
 * Field names that reach a wire (panel, audit rows, JSON output) are snake_case.
 */
import type { InteractionKind, InvocationState } from '../kernel';
import type { AuditRecord, Outcome } from '../../shared/audit-record';
import type { AgentKind, Decision, PendingApproval } from '../../shared/approval';
import type { ArgConstraints } from '../../shared/arg-constraints';
import type { Static } from '@sinclair/typebox';
import type { StandingRuleSchema } from './config';
import type { CallerEnvironment, ChannelEntry, DoctorReport, DriverInfo, OpSpec, RecvBatch, ReplyHint, SendReceipt } from '../drivers';

/** Releases a subscription. */
export type Disposer = () => void;

/**
 * Who is asking: an MCP client, the CLI (OS user) or the panel. `agent_id` is who the caller
 * authenticated as (an MCP bearer token's agent, `stdio` for an embedded hub's own client); `name`
 * is what the client declared in its initialize — shown beside the id, never trusted.
 */
export interface AgentIdentity {
  kind: AgentKind;
  /** The authenticated agent; absent only on rows recorded before agents authenticated. */
  agent_id?: string;
  /** The declared client name (MCP clientInfo.name), or `uplink-cli` / `operator`. */
  name: string;
  version?: string;
  /** The OS user (CLI) or operator name (panel). */
  user?: string;
  /** One connection (an MCP session); "approve for the session" grants are scoped to it. */
  session?: string;
  /**
   * A caller outside the hub's process (an HTTP edge sets it, `{}` when nothing is established):
   * the process the hub found holding its connection. Passed to drivers, never stored.
   */
  caller?: CallerEnvironment;
}

/** A driver with its identity, health and channels, as the panel's channel list shows it. */
export interface DriverOverview {
  driver: string;
  info: DriverInfo;
  health: DoctorReport;
  channels: ChannelEntry[];
  /** Set when listing channels failed (the driver is still listed, with no channels). */
  error?: string;
}

/** An op as the hub describes it: the driver's OpSpec normalized, plus where it routes. */
export interface OpDescription extends OpSpec {
  /** Normalized: a missing `mutating` is `true` (fail closed). */
  mutating: boolean;
  capability_id: string;
  /** The MCP tool that takes this op. */
  tool: 'channel_observe' | 'channel_act' | 'channel_send' | 'channel_recv';
  interactions: InteractionKind[];
}

/** Options for one call into a driver through the kernel. */
export interface CallOptions {
  agent: AgentIdentity;
  /** Hard constraint: run through this interaction kind only. */
  interaction?: InteractionKind;
  /** Hard constraint: run on this provider only. */
  provider?: string;
  /**
   * The class the caller expects (MCP `channel_observe` = read_only, `channel_act` = mutating);
   * a mismatch is `Invalid` naming the right tool. Omitted = class-agnostic (CLI `invoke`, panel).
   */
  expect?: 'read_only' | 'mutating';
  /** Progress while the call runs (kernel/driver progress, approval waiting, elapsed time). */
  onProgress?: (progress: HubProgress) => void;
  /** Cancels the invocation (e.g. the MCP request was cancelled). */
  signal?: AbortSignal;
}

/** A progress report for a long call. */
export interface HubProgress {
  progress: number;
  total?: number;
  message: string;
}

/** How a call was allowed to run. */
export type Authorization = 'operator' | `rule:${string}` | 'session' | 'default_policy' | 'cli';
/** What a record's `authorized` says: how it was allowed, or why a prompt ended unanswered. */
export type RecordedAuthorization = Authorization | 'timeout' | 'cancelled' | 'closed';

/**
 * A mutating request waiting for the operator, in the one shape the hub raises, the fleet carries
 * and the panel shows (`src/shared/approval.ts`). Its `agent` is the caller's identity: what
 * leaves the hub is cut to the declared fields (never where the agent runs).
 */
export type { PendingApproval, WouldFail } from '../../shared/approval';

/** The operator's answer to a prompt. */
export type ApprovalDecisionKind = Decision;

/** The operator's answer to a pending approval. */
export interface ApprovalDecision {
  kind: ApprovalDecisionKind;
  /** For `deny`: returned to the agent. */
  reason?: string;
  /** Who decided (operator name). */
  by: string;
  /** What `session`/`always` covers when the operator narrowed or widened it; the hub checks it. */
  scope?: ApprovalScope;
}

/** What an approval for the session or always covers, as the operator chose it before the click. */
export interface ApprovalScope {
  /** `any`: every agent (`always` only); default: the request's authenticated agent. */
  agent?: 'this' | 'any';
  /** `<driver>:<label glob>`; default: the call's channel (session) or its stable label (always). */
  channel?: string;
  /** Op names or globs; default: the call's op. */
  ops?: string[];
  /** Covers only calls whose args meet these; default: any args. */
  args?: ArgConstraints;
}

/**
 * What one top-level arg must be for a grant or rule to cover a call: this exact JSON value, or a
 * string matching `{glob}` (`*`, `?`). A sensitive arg cannot be constrained.
 */
export type { ArgConstraint, ArgConstraints } from '../../shared/arg-constraints';

/** A live "approve for the session" grant (the panel lists and revokes them). */
export type { SessionGrantEntry as SessionGrant } from '../../shared/panel-types';

/** What happened to a pending approval. */
export type ApprovalEvent =
  | { type: 'added'; approval: PendingApproval }
  | {
      type: 'resolved';
      approval_id: string;
      granted: boolean;
      /** `timeout`: unanswered in time; `cancelled`: the invocation was cancelled; `closed`: the hub stopped. */
      authorized: RecordedAuthorization;
      by?: string;
      reason?: string;
      rule_id?: string;
      /** The operator's answer, when they gave one. */
      decision?: ApprovalDecisionKind;
    }
  /** Another hub's prompt left this hub's list undecided (that hub went out of reach); it decides it. */
  | { type: 'withdrawn'; approval_id: string; reason: string }
  /**
   * A pending prompt changed while it waits: checked again (approving it now would fail, its
   * `would_fail`, or no longer would) or its preview refreshed by the operator.
   */
  | { type: 'updated'; approval: PendingApproval };

/** A standing rule in `<data dir>/config.json` `approvals.rules`: auto-approves matching requests. */
/** A standing rule as the hub uses it: always with an id (derived for a hand-written rule without one). */
export type StandingRule = Static<typeof StandingRuleSchema> & { id: string };

/** A standing rule with its usage. */
export interface StandingRuleStatus extends StandingRule {
  /** Not in force: it reached config.json other than through the panel and waits for the operator. */
  proposed: boolean;
  /** What the operator confirms: the rule's exact content. */
  digest: string;
  /** Ms since the epoch of the last request it approved, if any. */
  last_used_at?: number;
  uses: number;
}

/** The type of an audit entry. */
export type AuditEntryType = AuditRecord['type'];

/**
 * One row of the audit store, and the item of the live timeline stream: the shared audit record
 * (`src/shared/audit-record.ts`). `detail` is operator-only (provider error text);
 * `error_*`/`message`/`hint` are what the agent saw. The live stream may carry the caller's full
 * `AgentIdentity` in `agent`; only the record's fields are stored or sent on.
 */
export type AuditEntry = Omit<AuditRecord, 'agent' | 'authorized'> & { agent?: AgentIdentity; authorized?: RecordedAuthorization };

/** Filters for the audit query (all optional, AND-ed). */
export interface AuditQuery {
  channel?: string;
  op?: string;
  /** The authenticated agent id. */
  agent?: string;
  state?: InvocationState | 'rejected';
  /** How the call ended: matches the entries that end calls. */
  outcome?: Outcome;
  type?: AuditEntryType;
  invocation_id?: string;
  /** Substring anywhere in channel, op, agent, args, output, message, hint, detail or reason. */
  text?: string;
  /** Entries with id < before (paging backwards from the newest). */
  before?: number;
  /** Entries with id > after (following forwards). */
  after?: number;
  /** Default 200, max 1000. */
  limit?: number;
}

/** A page of audit entries; newest first when paging with `before`, oldest first with `after`. */
export interface AuditPage {
  entries: AuditEntry[];
  /** Pass as `before` (backwards) or `after` (forwards) for the next page; undefined at the end. */
  next_cursor?: number;
}

/** The hub's own health, plus each driver's. */
export interface HubDoctor {
  ok: boolean;
  drivers: DoctorReport[];
  config: { ok: boolean; path: string; error?: string };
  audit: { ok: boolean; path: string; error?: string };
  panels_attached: number;
  /** Drivers left out by `hub.drivers` in the config file. */
  disabled?: string[];
  /** `<data dir>/agents.json`: when broken, no named agent token is accepted. */
  agents: { ok: boolean; path: string; error?: string };
  /** Things that work but not as the operator may think (e.g. rules that can never match). */
  warnings?: string[];
  /** A fleet member's membership in one line: where, who is connected, how members are known. */
  fleet?: { ok: boolean; line: string };
}

/** A send request as the edges take it (reply_hint defaults to `full`). */
export interface HubSendRequest {
  message: string;
  reply_hint?: ReplyHint;
}

export type { RecvBatch, SendReceipt };

// ── fleet ─────────────────────────────────────────────────────────────────────────────────
/** A hub of the fleet as this hub sees it. */
export interface FleetMemberStatus {
  hub: string;
  /** `self`: this hub; `connected`: heard from lately; `unreachable`: not heard from since `since`. */
  state: 'self' | 'connected' | 'unreachable';
  /** In the fleet since (self, connected), or out of reach since (unreachable); ms since the epoch. */
  since: number;
  /** Operator panels attached to it, as it last said. */
  panels?: number;
  /** Why it is out of reach. */
  problem?: string;
}

/** This hub's membership in a fleet, and who is in it. */
export interface FleetMembership {
  member: true;
  name: string;
  url: string;
  connected: boolean;
  /** Why this hub is not in the fleet now (unreachable since …, a bad token file). */
  problem?: string;
  /** This hub first, then the others by name (connected and unreachable alike). */
  members: FleetMemberStatus[];
  /** `keys`: every message signed and checked against the roster; `shared`: a shared token, nothing signed. */
  identity: 'keys' | 'shared';
  /** What a shared-token fleet cannot promise, in one line. */
  warning?: string;
  /** Messages dropped so far, by reason (unsigned, bad_signature, unknown_key, wrong_signer, replayed, stale). */
  dropped: Record<string, number>;
}

/** A fleet member's view of its fleet, or `member: false` for a hub whose config has no `fleet` section. */
export type FleetStatus = FleetMembership | { member: false };

/** One audit record of a fleet hub, as the merged fleet history holds it. */
export interface FleetHistoryEntry {
  hub: string;
  /** The record's id on its own hub (increasing per hub). */
  seq: number;
  /** Local arrival order: increasing, the cursor the merged history pages by. */
  cursor: number;
  record: Omit<AuditRecord, 'output' | 'detail'>;
}

/** What changes in the fleet, for the panel. */
export type FleetChange = { type: 'status'; status: FleetMembership } | { type: 'entry'; entry: FleetHistoryEntry };

/** A signed checkpoint of the audit's hash chain: how many rows, the newest row's hash, when (ms). */
export type AuditCheckpoint = { count: number; head: string; at: number };
