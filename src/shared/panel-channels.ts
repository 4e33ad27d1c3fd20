/**
 * The channel map: every method and event of the PanelApi with the schemas (Draft 2020-12,
 * declared in `panel-types.ts`) of its payloads. It is the one declaration of the API: the types
 * of `panel-api.ts` are derived from it, main validates every request against it on receipt,
 * tests check that hub responses conform, and both transports are generated from its keys — a
 * method added here is exposed everywhere.
 */
import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import { ArgConstraints } from './arg-constraints';
import { Decision, PendingApproval } from './approval';
import { TimelineEvent } from './audit-record';
import { DriverProcessStatus, DriverTraceEntry } from './driver-status';
import {
  AgentEntry,
  ApprovalResolved,
  ApprovalRule,
  ChannelDescription,
  ChannelList,
  ChannelPreview,
  DecideResult,
  DecisionScope,
  DemoStep,
  FleetTimelineEntry,
  FleetTimelinePage,
  FleetView,
  HubStatus,
  InvocationDetail,
  PanelSettings,
  ProviderEntry,
  RunOpResult,
  ScopeChannel,
  ScopeOps,
  SelectionExplanation,
  SelectionQuery,
  SessionGrantEntry,
  TimelinePage,
  TimelineQuery,
  TimelineSearch,
  TimelineSearchPage,
} from './panel-types';
import { Closed } from './schema';
import { JsonValue } from './wire';

/** A request that takes no parameters. */
const none = Closed({});
const id = Type.String({ minLength: 1, maxLength: 512 });
const text = (maxLength: number) => Type.String({ maxLength });
const reason = Type.Optional(text(2000));
const sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const driverId = Type.String({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 });
const call = <Q extends TSchema, R extends TSchema>(request: Q, response: R) => ({ request, response });

/** Request and response schema of every call. A call takes one JSON object (`none`: nothing). */
export const PANEL_CALLS = {
  listChannels: call(none, ChannelList),
  describeChannel: call(Closed({ channel: id }), ChannelDescription),
  previewChannel: call(Closed({ channel: id }), ChannelPreview),
  runOp: call(Closed({ channel: id, op: Type.String({ minLength: 1, maxLength: 128 }), args: JsonValue }), RunOpResult),
  setTier: call(Closed({ channel: id, tier: Type.String({ minLength: 1, maxLength: 64 }) }), Type.Object({ channel: Type.String(), tier: Type.String() })),
  listPendingApprovals: call(none, Type.Array(PendingApproval)),
  /** `scope` narrows or widens what "session"/"always" covers; the hub checks it. */
  decide: call(Closed({ approval_id: id, decision: Decision, reason, scope: Type.Optional(DecisionScope) }), DecideResult),
  /**
   * The operator looks at a pending prompt's target again: its preview and precheck run anew (the
   * audit notes the look; it stands for no read by the agent). The prompt as it is now.
   */
  refreshApproval: call(Closed({ approval_id: id }), PendingApproval),
  /** The raw args of a pending prompt with sensitive text (never stored; the audit notes the look). */
  revealApprovalArgs: call(Closed({ approval_id: id }), Type.Object({ args: JsonValue })),
  /** Denies every pending prompt of one authenticated agent (a runaway agent), each with `reason`. */
  denyAll: call(Closed({ agent: Type.String({ minLength: 1, maxLength: 128 }), reason }), Type.Object({ denied: Type.Integer() })),
  listRules: call(none, Type.Array(ApprovalRule)),
  /** Revokes a rule, or discards a proposed one. */
  revokeRule: call(Closed({ rule_id: id }), Type.Object({ revoked: Type.Boolean() })),
  /** Puts a proposed rule in force, if it still has the content the panel showed (`digest`). */
  confirmRule: call(Closed({ rule_id: id, digest: sha256 }), Type.Object({ confirmed: Type.Boolean() })),
  /** Rewrites a rule's scope; `agent` absent = any agent, `args` absent = any args. */
  updateRule: call(
    Closed({
      rule_id: id,
      channel: ScopeChannel,
      ops: ScopeOps,
      agent: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      args: Type.Optional(ArgConstraints),
    }),
    Type.Object({ updated: Type.Boolean() }),
  ),
  listSessionGrants: call(none, Type.Array(SessionGrantEntry)),
  revokeSessionGrant: call(Closed({ grant_id: id }), Type.Object({ revoked: Type.Boolean() })),
  getSettings: call(none, PanelSettings),
  setApprovalTimeout: call(Closed({ timeout_ms: Type.Integer({ minimum: 1000, maximum: 86_400_000 }) }), PanelSettings),
  queryTimeline: call(TimelineQuery, TimelinePage),
  /** The calls matching a filter over the whole audit (args, output, reasons…), a bounded page at a time. */
  searchTimeline: call(TimelineSearch, TimelineSearchPage),
  getInvocation: call(Closed({ invocation_id: id }), InvocationDetail),
  listProviders: call(none, Type.Array(ProviderEntry)),
  explainSelection: call(SelectionQuery, SelectionExplanation),
  /** Operator-only: named agent credentials. */
  listAgents: call(none, Type.Array(AgentEntry)),
  /**
   * The token is in this response only; it is never stored or shown again. The name's pattern is
   * the hub's own check too; here it bounds what reaches the hub.
   */
  createAgent: call(Closed({ name: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,63}$' }) }), Type.Object({ id: Type.String(), token: Type.String() })),
  revokeAgent: call(Closed({ name: Type.String({ minLength: 1, maxLength: 64 }) }), Type.Object({ revoked: Type.Boolean() })),
  /** Operator-only: out-of-process drivers (process, admission, stderr) and their protocol trace. */
  driverStatus: call(none, Type.Array(DriverProcessStatus)),
  driverTrace: call(
    Closed({
      driver: driverId,
      method: Type.Optional(text(64)),
      after: Type.Optional(Type.Integer({ minimum: 0 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    }),
    Type.Array(DriverTraceEntry),
  ),
  /** Admits a driver with the sha256 the panel showed; refused when the file changed since. */
  trustDriver: call(Closed({ driver: driverId, sha256 }), DriverProcessStatus),
  restartDriver: call(Closed({ driver: driverId }), DriverProcessStatus),
  /** Who is in the fleet (`enabled: false` when this hub is in none). */
  fleetStatus: call(none, FleetView),
  /** The fleet's merged timeline, newest first; `hub` filters by hub. */
  fleetTimeline: call(
    Closed({
      hub: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 })),
      before: Type.Optional(Type.Integer({ minimum: 0 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000 })),
    }),
    FleetTimelinePage,
  ),
};

/** Payload schema of every event stream. */
export const PANEL_EVENTS = {
  /** A runtime event, enriched with channel/op/agent/provider/interaction. */
  runtimeEvent: TimelineEvent,
  approvalAdded: PendingApproval,
  /** A pending prompt changed: checked again (`would_fail` set or cleared) or its preview refreshed. */
  approvalUpdated: PendingApproval,
  approvalResolved: ApprovalResolved,
  rulesChanged: Type.Array(ApprovalRule),
  sessionGrantsChanged: Type.Array(SessionGrantEntry),
  /** The settings after config.json changed (by the panel, a hand edit, the CLI) or broke. */
  settingsChanged: PanelSettings,
  hubStatus: HubStatus,
  /** A running demo's current step (sent on connect and on every change; never while no demo runs). */
  demoStep: DemoStep,
  /** Fleet membership changed (a hub joined, went out of reach, or this hub lost NATS). */
  fleetChanged: FleetView,
  /** A record reached the fleet's merged timeline. */
  fleetEntry: FleetTimelineEntry,
};

export type PanelMethod = keyof typeof PANEL_CALLS;
export type PanelEventName = keyof typeof PANEL_EVENTS;

/** Every method name, in a stable order (the generators iterate this). */
export const PANEL_METHODS = Object.keys(PANEL_CALLS) as PanelMethod[];
/** Every event name. */
export const PANEL_EVENT_NAMES = Object.keys(PANEL_EVENTS) as PanelEventName[];

/** True when `name` is one of our method names (guards against `__proto__` and friends). */
export function isPanelMethod(name: unknown): name is PanelMethod {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(PANEL_CALLS, name);
}
