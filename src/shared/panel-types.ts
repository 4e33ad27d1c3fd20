/**
 * Payloads of the PanelApi (main ↔ renderer). Plain JSON, snake_case like the rest of the wire.
 * Each is declared once with TypeBox: the schema (what `panel-channels.ts` maps each method and
 * event to, checked on receipt in main) and, by the same name, its type. Requests are closed and
 * bounded; responses are open, so a newer hub's extra fields do not fail an older panel.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { ArgConstraints } from './arg-constraints';
import { Decision } from './approval';
import { Outcome, RecordAgent, TimelineEvent } from './audit-record';
import type { AuditRecord } from './audit-record';
import { Closed, StringEnum } from './schema';
import { ChannelEntry, DoctorReport, InteractionKind, INVOCATION_STATES, JsonValue, OpSpec, SoftwareUseErrorWire, TierSpec } from './wire';

const str = Type.Optional(Type.String());
const num = Type.Optional(Type.Number());
const int = Type.Optional(Type.Integer());
const bool = Type.Optional(Type.Boolean());

/** A channel as the panel shows it: the driver's entry plus who drives it and its tier. */
export const PanelChannel = Type.Object({
  ...ChannelEntry.properties,
  driver: Type.String(),
  /** Current permission tier; absent when the driver has none. */
  tier: str,
  /** The tiers a human may pick, as the driver declares them; present only when it has a tier control. */
  tiers: Type.Optional(Type.Array(TierSpec)),
});
export type PanelChannel = Static<typeof PanelChannel>;

/** Channels of every driver plus each driver's doctor report. */
export const ChannelList = Type.Object({
  channels: Type.Array(PanelChannel),
  health: Type.Array(DoctorReport),
  /** Drivers that failed to list channels, with the rendered error. */
  errors: Type.Array(Type.Object({ driver: Type.String(), error: Type.String() })),
});
export type ChannelList = Static<typeof ChannelList>;

/** A channel and the ops its driver offers. */
export const ChannelDescription = Type.Object({ channel: PanelChannel, ops: Type.Array(OpSpec) });
export type ChannelDescription = Static<typeof ChannelDescription>;

/** Result of running an op as the operator. */
export const RunOpResult = Type.Object({
  ok: Type.Boolean(),
  output: Type.Optional(JsonValue),
  /** Rendered `uplink error […]` text when it failed. */
  error: str,
});
export type RunOpResult = Static<typeof RunOpResult>;

export { AGENT_KINDS, DECISIONS, AgentKind, Decision, PendingApproval, PromptAgent } from './approval';

/** Bounds only: the hub checks what a scope may name (no reusable id, covering the prompt). */
export const ScopeChannel = Type.String({ minLength: 1, maxLength: 256 });
export const ScopeOps = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 32 });

/**
 * What "for the session" or "always" covers, when the operator changed it before the click. The
 * hub refuses a malformed scope, one naming a reusable id, or one not covering the prompt.
 */
export const DecisionScope = Closed({
  /** `any`: every agent ("always" only); default: the prompt's agent. */
  agent: Type.Optional(StringEnum(['this', 'any'])),
  /** `<driver>:<label or glob>`, e.g. `tmux:build-*`. */
  channel: Type.Optional(ScopeChannel),
  /** Op names or globs; default: the prompt's op. */
  ops: Type.Optional(ScopeOps),
  /** Covers only requests whose args meet these; default: any args. */
  args: Type.Optional(ArgConstraints),
});
export type DecisionScope = Static<typeof DecisionScope>;

/** What args a scope covers; a sensitive arg cannot be constrained. */
export { ArgConstraints } from './arg-constraints';

/** A live "approve for the session" grant. */
export const SessionGrantEntry = Type.Object({
  grant_id: Type.String(),
  /** The authenticated agent id, else the declared name. */
  agent: Type.String(),
  session: Type.String(),
  /** The client name the session declared when the grant was made: shown as declared, never trusted. */
  client: Type.Optional(Type.String()),
  channel: Type.String(),
  ops: Type.Array(Type.String()),
  /** Covers only calls whose args meet these. */
  args: Type.Optional(ArgConstraints),
  granted_by: Type.String(),
  /** Ms since the epoch. */
  granted_at: Type.Number(),
});
export type SessionGrantEntry = Static<typeof SessionGrantEntry>;

/** Sent when a prompt leaves the pending list, whoever decided it. */
export const ApprovalResolved = Type.Object({
  approval_id: Type.String(),
  granted: Type.Boolean(),
  /**
   * As on the audit record: `operator`, `default_policy`, `timeout`, `cancelled` or `closed`; or
   * `withdrawn`: another hub's prompt left this panel undecided because that hub is out of reach.
   */
  authorized: Type.String(),
  by: str,
  reason: str,
  rule_id: str,
  /** The operator's answer, when they gave one. */
  decision: Type.Optional(Decision),
});
export type ApprovalResolved = Static<typeof ApprovalResolved>;

/** The answer to `decide`: `accepted` is false when the prompt was already decided or timed out. */
export const DecideResult = Type.Object({
  accepted: Type.Boolean(),
  granted: bool,
  rule_id: str,
  /** Why a decision was not accepted. */
  message: str,
});
export type DecideResult = Static<typeof DecideResult>;

/** A standing approval rule from the config file, with its last use. */
export const ApprovalRule = Type.Object({
  rule_id: Type.String(),
  /** Glob on the channel's labels (`<driver>:<label glob>`). */
  channel: Type.String(),
  /** The op globs, comma-separated (as `ops`). */
  op: Type.String(),
  ops: Type.Array(Type.String()),
  /** Not in force: it reached config.json other than through the panel; Confirm or Discard. */
  proposed: Type.Boolean(),
  /** The rule's exact content, which a confirmation names. */
  digest: Type.String(),
  /** Glob on the authenticated agent id; absent = any agent. */
  agent: str,
  /** Covers only requests whose args meet these. */
  args: Type.Optional(ArgConstraints),
  created_at: str,
  created_by: str,
  note: str,
  last_used_at: num,
  uses: Type.Integer(),
});
export type ApprovalRule = Static<typeof ApprovalRule>;

/** A named agent credential (never its token). */
export const AgentEntry = Type.Object({ id: Type.String(), created_at: Type.String(), created_by: Type.String(), revoked_at: str });
export type AgentEntry = Static<typeof AgentEntry>;

export { DriverProcessStatus, DriverTraceEntry } from './driver-status';

/** Hub settings the panel shows and edits. */
export const PanelSettings = Type.Object({
  approval_timeout_ms: Type.Number(),
  /** config.json is broken: the file, the error and which config is in force. */
  config_error: str,
  /** e.g. `http://127.0.0.1:7345/mcp`. */
  mcp_url: str,
  /** The bearer token for MCP over HTTP; the operator copies it into `claude mcp add`. */
  mcp_token: str,
  /** Absolute path of the `uplink` launcher for the stdio command. */
  cli_path: str,
  /**
   * The argv an MCP client runs for stdio (`[<launcher>, 'mcp']`): `bin/uplink mcp` from a
   * checkout, the app itself (`Uplink mcp`) when packaged. Preferred over `cli_path`.
   */
  stdio_command: Type.Optional(Type.Array(Type.String())),
  data_dir: Type.String(),
  version: Type.String(),
});
export type PanelSettings = Static<typeof PanelSettings>;

/** The kinds of timeline entry: kernel events, operator decisions and rejected requests. */
export type TimelineKind = AuditRecord['kind'];

/** One timeline entry: an audit record (`audit-record.ts`) without its output; `id` is the history cursor. */
export { TimelineEvent } from './audit-record';

/** An invocation's state, or `rejected` for a request that never became one. */
const StateOrRejected = StringEnum([...INVOCATION_STATES, 'rejected']);
/** A row's state as the timeline filters it: `waiting` is a call whose prompt is open. */
const RowState = StringEnum([...INVOCATION_STATES, 'rejected', 'waiting']);

/** Timeline filters; every present field must match. */
export const TimelineFilter = Closed({
  channel: str,
  op: str,
  agent: str,
  state: Type.Optional(RowState),
  /** How the call ended. */
  outcome: Type.Optional(Outcome),
  text: Type.Optional(Type.String({ maxLength: 500 })),
});
export type TimelineFilter = Static<typeof TimelineFilter>;

/** `queryTimeline`'s filter: each field matches records (a state as recorded, no `waiting`). */
const RecordFilter = Closed({
  channel: str,
  op: str,
  agent: str,
  state: Type.Optional(StateOrRejected),
  outcome: Type.Optional(Outcome),
  text: Type.Optional(Type.String({ maxLength: 500 })),
});

/** Most calls in one page of `searchTimeline`. */
export const SEARCH_PAGE_MAX = 200;

/**
 * A search of the whole audit, newest first: the calls one of whose records matches `filter.text`
 * (args, output, messages, reasons, names, ids) and every other field (`state` and `outcome` are the
 * call's, the rest its records'). Records with cursor < `before`, at most `limit` calls.
 */
export const TimelineSearch = Closed({
  filter: Type.Optional(TimelineFilter),
  before: Type.Optional(Type.Integer({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_PAGE_MAX })),
});
export type TimelineSearch = Static<typeof TimelineSearch>;

/**
 * A page of matching calls: every record of each (ascending), `matches` calls; pass `next_before`
 * as `before` for older ones (null: the whole audit was searched).
 */
export const TimelineSearchPage = Type.Object({
  events: Type.Array(TimelineEvent),
  matches: Type.Integer(),
  next_before: Type.Union([Type.Number(), Type.Null()]),
});
export type TimelineSearchPage = Static<typeof TimelineSearchPage>;

/** A page request: events with cursor < `before` (newest first), at most `limit`. */
export const TimelineQuery = Closed({
  filter: Type.Optional(RecordFilter),
  before: Type.Optional(Type.Number({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
});
export type TimelineQuery = Static<typeof TimelineQuery>;

/** Where the next page starts; null at the start of history. */
const NextBefore = Type.Union([Type.Number(), Type.Null()]);

/** A page of history, ascending by cursor; `next_before` is null at the start of history. */
export const TimelinePage = Type.Object({ events: Type.Array(TimelineEvent), next_before: NextBefore });
export type TimelinePage = Static<typeof TimelinePage>;

/** Everything the timeline's detail pane shows for one invocation (how it was authorized: `invocationAuthorization(events)`). */
export const InvocationDetail = Type.Object({
  invocation_id: Type.String(),
  capability_id: str,
  channel: str,
  op: str,
  agent: Type.Optional(RecordAgent),
  provider_id: str,
  interaction: Type.Optional(InteractionKind),
  args: Type.Optional(JsonValue),
  state: Type.Optional(StateOrRejected),
  duration_ms: num,
  /** The op's result, when the audit store kept it. */
  output: Type.Optional(JsonValue),
  /** Rendered error as the agent saw it, plus operator-only detail. */
  error: str,
  error_detail: str,
  events: Type.Array(TimelineEvent),
});
export type InvocationDetail = Static<typeof InvocationDetail>;

/** A registered kernel provider and the capabilities it offers. */
export const ProviderEntry = Type.Object({
  provider_id: Type.String(),
  version: str,
  driver: Type.String(),
  interaction: InteractionKind,
  capabilities: Type.Array(Type.String()),
});
export type ProviderEntry = Static<typeof ProviderEntry>;

/** Ask which provider the kernel would pick. */
export const SelectionQuery = Closed({
  capability_id: Type.String({ minLength: 1, maxLength: 128 }),
  version_requirement: Type.Optional(Type.String({ maxLength: 128 })),
  provider_id: Type.Optional(Type.String({ maxLength: 128 })),
  interaction: Type.Optional(InteractionKind),
});
export type SelectionQuery = Static<typeof SelectionQuery>;

/** One offer considered by selection and why it was or was not picked. */
export const SelectionCandidate = Type.Object({
  provider_id: Type.String(),
  capability_version: Type.String(),
  interaction: InteractionKind,
  selected: Type.Boolean(),
  reason: Type.String(),
});
export type SelectionCandidate = Static<typeof SelectionCandidate>;

/** The kernel's answer to a selection preview. */
export const SelectionExplanation = Type.Object({
  selected: Type.Optional(Type.Object({ provider_id: Type.String(), capability_version: Type.String(), interaction: InteractionKind })),
  candidates: Type.Array(SelectionCandidate),
  /** Set when nothing matches: `capability_unavailable` or `constraint_unsatisfied`. */
  error: Type.Optional(SoftwareUseErrorWire),
});
export type SelectionExplanation = Static<typeof SelectionExplanation>;

/** A read-only look at a channel: recent text (tmux) or a screenshot (desktop). */
export const ChannelPreview = Type.Object({
  text: str,
  image_png: str,
  error: str,
  /** Why the picture may not be what an action would meet (covered, blank, off screen). */
  warnings: Type.Optional(Type.Array(Type.String())),
});
export type ChannelPreview = Static<typeof ChannelPreview>;

/** Hub status pushed to every panel. */
export const HubStatus = Type.Object({
  started_at: Type.Number(),
  pending_approvals: Type.Integer(),
  attached_panels: Type.Integer(),
  version: Type.String(),
  /** Why the audit log cannot be written (agents' calls are refused until it can). */
  audit_error: str,
});
export type HubStatus = Static<typeof HubStatus>;

/**
 * Where a running `uplink demo` is in its story, for the presenter strip. Only the demo process
 * that hosts the hub writes it (operator side); no agent call can.
 */
export const DemoStep = Type.Object({
  /** 1-based; 0 while the demo waits for a panel to attach. */
  step: Type.Integer(),
  total: Type.Integer(),
  title: Type.String(),
  /** What the agent is doing and why it matters. */
  why: Type.String(),
  /** Which prompt or view to look at now. */
  look: Type.String(),
  /** The demo window's channel, shown live beside the strip. */
  window_channel: str,
  /** `done` once the story ended (`summary` says how). */
  state: StringEnum(['running', 'done']),
  summary: str,
});
export type DemoStep = Static<typeof DemoStep>;

/** A hub of the fleet, as this hub sees it. */
export const FleetMember = Type.Object({
  hub: Type.String(),
  /** `self`: this hub; `connected`: heard from lately; `unreachable`: out of reach since `since`. */
  state: StringEnum(['self', 'connected', 'unreachable']),
  /** In the fleet since (self, connected), or out of reach since (unreachable); ms since the epoch. */
  since: Type.Number(),
  /** Operator panels attached to it, as it last said. */
  panels: int,
  /** Why it is out of reach. */
  problem: str,
});
export type FleetMember = Static<typeof FleetMember>;

/** The fleet view: `enabled` is false on a hub with no `fleet` section in its config. */
export const FleetView = Type.Object({
  enabled: Type.Boolean(),
  /** This hub's name in the fleet. */
  name: str,
  url: str,
  connected: bool,
  /** Why this hub is out of the fleet now. */
  problem: str,
  members: Type.Array(FleetMember),
  /** `keys`: every message signed by its hub's key and checked against the roster; `shared`: one token, nothing signed. */
  identity: Type.Optional(StringEnum(['keys', 'shared'])),
  /** What the fleet cannot promise (a shared-token fleet's members can speak for each other). */
  warning: str,
  /** Fleet messages dropped so far, by reason: unsigned, bad_signature, unknown_key, wrong_signer, replayed, stale. */
  dropped: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
});
export type FleetView = Static<typeof FleetView>;

/** One record of the fleet's merged timeline: which hub, its sequence there, and the record. */
export const FleetTimelineEntry = Type.Object({
  hub: Type.String(),
  seq: Type.Integer(),
  /** Arrival order on this hub; pass the smallest as `before` for the next page. */
  cursor: Type.Integer(),
  event: TimelineEvent,
});
export type FleetTimelineEntry = Static<typeof FleetTimelineEntry>;

export const FleetTimelinePage = Type.Object({ entries: Type.Array(FleetTimelineEntry), next_before: NextBefore });
export type FleetTimelinePage = Static<typeof FleetTimelinePage>;
