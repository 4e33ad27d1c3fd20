/**
 * Payloads of the PanelApi (main ↔ renderer). Plain JSON, snake_case like the rest of the wire.
 * Every type here has a JSON Schema twin in `panel-channels.ts`, checked on receipt in main.
 */
import type { AuditRecord, Outcome, RecordAgent } from './audit-record';
import type { ArgConstraints } from './arg-constraints';
import type {
  ApprovalPreview,
  ChannelEntry,
  DoctorReport,
  InteractionKind,
  InvocationState,
  JsonValue,
  OpSpec,
  SoftwareUseErrorWire,
  TierSpec,
} from './wire';

/** A channel as the panel shows it: the driver's entry plus who drives it and its tier. */
export interface PanelChannel extends ChannelEntry {
  driver: string;
  /** Current permission tier; absent when the driver has none. */
  tier?: string;
  /** The tiers a human may pick, as the driver declares them; present only when it has a tier control. */
  tiers?: TierSpec[];
}

/** Channels of every driver plus each driver's doctor report. */
export interface ChannelList {
  channels: PanelChannel[];
  health: DoctorReport[];
  /** Drivers that failed to list channels, with the rendered error. */
  errors: Array<{ driver: string; error: string }>;
}

/** A channel and the ops its driver offers. */
export interface ChannelDescription {
  channel: PanelChannel;
  ops: OpSpec[];
}

/** Result of running an op as the operator. */
export interface RunOpResult {
  ok: boolean;
  output?: JsonValue;
  /** Rendered `uplink error […]` text when it failed. */
  error?: string;
}

/** The decisions an operator can give a prompt. */
export type Decision = 'once' | 'session' | 'always' | 'deny';
export const DECISIONS: readonly Decision[] = ['once', 'session', 'always', 'deny'];

/** One pending approval prompt (sensitive args arrive redacted). */
export interface PendingApproval {
  approval_id: string;
  invocation_id: string;
  /** The authenticated agent id (`default`, a named agent, `stdio`), or `operator`/`uplink-cli`. */
  agent: string;
  /** The client name the agent declared (shown beside the id, never trusted). */
  agent_name?: string;
  /** Where the agent came from: `mcp`, `cli` or `panel`. */
  agent_kind?: string;
  channel: string;
  channel_labels: string[];
  op: string;
  capability_id: string;
  args: JsonValue;
  /** `args` has sensitive text redacted; `revealApprovalArgs` shows it to the operator. */
  sensitive?: boolean;
  /** The args `args` shows redacted (never what their text looks like): a scope may not constrain them. */
  redacted_args?: string[];
  provider_id: string;
  interaction: InteractionKind;
  /** What the op will do, in words and (desktop) a fresh screenshot with a mark. */
  preview?: ApprovalPreview;
  /** Milliseconds since the epoch. */
  requested_at: number;
  /** When the prompt is denied automatically (ms since the epoch). */
  expires_at: number;
  /** The stable channel name "always" covers by default; absent when the channel has no label. */
  rule_channel?: string;
  /**
   * The fleet hub that owns this prompt, when it is another hub (`approval_id` and `channel` are
   * then `<hub>/…`): from here it can be approved once or denied; that hub records and enforces it.
   */
  hub?: string;
}

/**
 * What "for the session" or "always" covers, when the operator changed it before the click. The
 * hub refuses a malformed scope, one naming a reusable id, or one not covering the prompt.
 */
export interface DecisionScope {
  /** `any`: every agent ("always" only); default: the prompt's agent. */
  agent?: 'this' | 'any';
  /** `<driver>:<label or glob>`, e.g. `tmux:build-*`. */
  channel?: string;
  /** Op names or globs; default: the prompt's op. */
  ops?: string[];
  /** Covers only requests whose args meet these; default: any args. */
  args?: ArgConstraints;
}

/** What args a scope covers; a sensitive arg cannot be constrained. */
export type { ArgConstraints } from './arg-constraints';

/** A live "approve for the session" grant. */
export interface SessionGrantEntry {
  grant_id: string;
  /** The authenticated agent id, else the declared name. */
  agent: string;
  session: string;
  channel: string;
  ops: string[];
  /** Covers only calls whose args meet these. */
  args?: ArgConstraints;
  granted_by: string;
  /** Ms since the epoch. */
  granted_at: number;
}

/** Sent when a prompt leaves the pending list, whoever decided it. */
export interface ApprovalResolved {
  approval_id: string;
  granted: boolean;
  /**
   * As on the audit record: `operator`, `default_policy`, `timeout`, `cancelled` or `closed`; or
   * `withdrawn`: another hub's prompt left this panel undecided because that hub is out of reach.
   */
  authorized: string;
  by?: string;
  reason?: string;
  rule_id?: string;
  /** The operator's answer, when they gave one. */
  decision?: Decision;
}

/** The answer to `decide`: `accepted` is false when the prompt was already decided or timed out. */
export interface DecideResult {
  accepted: boolean;
  granted?: boolean;
  rule_id?: string;
  /** Why a decision was not accepted. */
  message?: string;
}

/** A standing approval rule from the config file, with its last use. */
export interface ApprovalRule {
  rule_id: string;
  /** Glob on the channel's labels (`<driver>:<label glob>`). */
  channel: string;
  /** The op globs, comma-separated (as `ops`). */
  op: string;
  ops: string[];
  /** Not in force: it reached config.json other than through the panel; Confirm or Discard. */
  proposed: boolean;
  /** The rule's exact content, which a confirmation names. */
  digest: string;
  /** Glob on the authenticated agent id; absent = any agent. */
  agent?: string;
  /** Covers only requests whose args meet these. */
  args?: ArgConstraints;
  created_at?: string;
  created_by?: string;
  note?: string;
  last_used_at?: number;
  uses: number;
}

/** A named agent credential (never its token). */
export interface AgentEntry {
  id: string;
  created_at: string;
  created_by: string;
  revoked_at?: string;
}

export type { DriverProcessStatus, DriverTraceEntry } from './driver-status';

/** Hub settings the panel shows and edits. */
export interface PanelSettings {
  approval_timeout_ms: number;
  /** config.json is broken: the file, the error and which config is in force. */
  config_error?: string;
  /** e.g. `http://127.0.0.1:7345/mcp`. */
  mcp_url?: string;
  /** The bearer token for MCP over HTTP; the operator copies it into `claude mcp add`. */
  mcp_token?: string;
  /** Absolute path of the `uplink` launcher for the stdio command. */
  cli_path?: string;
  /**
   * The argv an MCP client runs for stdio (`[<launcher>, 'mcp']`): `bin/uplink mcp` from a
   * checkout, the app itself (`Uplink mcp`) when packaged. Preferred over `cli_path`.
   */
  stdio_command?: string[];
  data_dir: string;
  version: string;
}

/** The kinds of timeline entry: kernel events, operator decisions and rejected requests. */
export type TimelineKind = AuditRecord['kind'];

/**
 * One timeline entry: an audit record (`audit-record.ts`) without its output; `id` is the
 * history cursor.
 */
export type TimelineEvent = Omit<AuditRecord, 'output'>;

/** Timeline filters; every present field must match. */
export interface TimelineFilter {
  channel?: string;
  op?: string;
  agent?: string;
  state?: InvocationState | 'rejected';
  /** How the call ended. */
  outcome?: Outcome;
  text?: string;
}

/** A page request: events with cursor < `before` (newest first), at most `limit`. */
export interface TimelineQuery {
  filter?: TimelineFilter;
  before?: number;
  limit?: number;
}

/** A page of history, ascending by cursor; `next_before` is null at the start of history. */
export interface TimelinePage {
  events: TimelineEvent[];
  next_before: number | null;
}

/** Everything the timeline's detail pane shows for one invocation (how it was authorized: `invocationAuthorization(events)`). */
export interface InvocationDetail {
  invocation_id: string;
  capability_id?: string;
  channel?: string;
  op?: string;
  agent?: RecordAgent;
  provider_id?: string;
  interaction?: InteractionKind;
  args?: JsonValue;
  state?: InvocationState | 'rejected';
  duration_ms?: number;
  /** The op's result, when the audit store kept it. */
  output?: JsonValue;
  /** Rendered error as the agent saw it, plus operator-only detail. */
  error?: string;
  error_detail?: string;
  events: TimelineEvent[];
}

/** A registered kernel provider and the capabilities it offers. */
export interface ProviderEntry {
  provider_id: string;
  version?: string;
  driver: string;
  interaction: InteractionKind;
  capabilities: string[];
}

/** Ask which provider the kernel would pick. */
export interface SelectionQuery {
  capability_id: string;
  version_requirement?: string;
  provider_id?: string;
  interaction?: InteractionKind;
}

/** One offer considered by selection and why it was or was not picked. */
export interface SelectionCandidate {
  provider_id: string;
  capability_version: string;
  interaction: InteractionKind;
  selected: boolean;
  reason: string;
}

/** The kernel's answer to a selection preview. */
export interface SelectionExplanation {
  selected?: { provider_id: string; capability_version: string; interaction: InteractionKind };
  candidates: SelectionCandidate[];
  /** Set when nothing matches: `capability_unavailable` or `constraint_unsatisfied`. */
  error?: SoftwareUseErrorWire;
}

/** A read-only look at a channel: recent text (tmux) or a screenshot (desktop). */
export interface ChannelPreview {
  text?: string;
  image_png?: string;
  error?: string;
  /** Why the picture may not be what an action would meet (covered, blank, off screen). */
  warnings?: string[];
}

/** Hub status pushed to every panel. */
export interface HubStatus {
  started_at: number;
  pending_approvals: number;
  attached_panels: number;
  version: string;
  /** Why the audit log cannot be written (agents' calls are refused until it can). */
  audit_error?: string;
}

/**
 * Where a running `uplink demo` is in its story, for the presenter strip. Only the demo process
 * that hosts the hub writes it (operator side); no agent call can.
 */
export interface DemoStep {
  /** 1-based; 0 while the demo waits for a panel to attach. */
  step: number;
  total: number;
  title: string;
  /** What the agent is doing and why it matters. */
  why: string;
  /** Which prompt or view to look at now. */
  look: string;
  /** The demo window's channel, shown live beside the strip. */
  window_channel?: string;
  /** `done` once the story ended (`summary` says how). */
  state: 'running' | 'done';
  summary?: string;
}

/** A hub of the fleet, as this hub sees it. */
export interface FleetMember {
  hub: string;
  /** `self`: this hub; `connected`: heard from lately; `unreachable`: out of reach since `since`. */
  state: 'self' | 'connected' | 'unreachable';
  /** In the fleet since (self, connected), or out of reach since (unreachable); ms since the epoch. */
  since: number;
  /** Operator panels attached to it, as it last said. */
  panels?: number;
  /** Why it is out of reach. */
  problem?: string;
}

/** The fleet view: `enabled` is false on a hub with no `fleet` section in its config. */
export interface FleetView {
  enabled: boolean;
  /** This hub's name in the fleet. */
  name?: string;
  url?: string;
  connected?: boolean;
  /** Why this hub is out of the fleet now. */
  problem?: string;
  members: FleetMember[];
}

/** One record of the fleet's merged timeline: which hub, its sequence there, and the record. */
export interface FleetTimelineEntry {
  hub: string;
  seq: number;
  /** Arrival order on this hub; pass the smallest as `before` for the next page. */
  cursor: number;
  event: TimelineEvent;
}

export interface FleetTimelinePage {
  entries: FleetTimelineEntry[];
  next_before: number | null;
}

