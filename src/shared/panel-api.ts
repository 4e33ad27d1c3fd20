/**
 * The PanelApi: the one contract between the renderer and the hub. The Electron
 * preload and the browser's WebSocket client both implement it, and both the IPC handlers and
 * the WebSocket server are generated from the channel map in `panel-channels.ts`, so a method
 * name can never differ between the two sides (VS Code's ProxyChannel idea).
 */
import type {
  AgentEntry,
  ApprovalResolved,
  ApprovalRule,
  ArgConstraints,
  ChannelDescription,
  ChannelList,
  ChannelPreview,
  DecideResult,
  Decision,
  DecisionScope,
  DriverProcessStatus,
  DriverTraceEntry,
  DemoStep,
  FleetTimelineEntry,
  FleetTimelinePage,
  FleetView,
  HubStatus,
  InvocationDetail,
  PanelSettings,
  PendingApproval,
  ProviderEntry,
  RunOpResult,
  SelectionExplanation,
  SelectionQuery,
  SessionGrantEntry,
  TimelineEvent,
  TimelinePage,
  TimelineQuery,
} from './panel-types';
import type { JsonValue } from './wire';

/** Request and response type of each call. A call takes one JSON object (or nothing). */
export interface PanelCalls {
  listChannels: { req: void; res: ChannelList };
  describeChannel: { req: { channel: string }; res: ChannelDescription };
  previewChannel: { req: { channel: string }; res: ChannelPreview };
  runOp: { req: { channel: string; op: string; args: JsonValue }; res: RunOpResult };
  setTier: { req: { channel: string; tier: string }; res: { channel: string; tier: string } };
  listPendingApprovals: { req: void; res: PendingApproval[] };
  /** `scope` narrows or widens what "session"/"always" covers; the hub checks it. */
  decide: { req: { approval_id: string; decision: Decision; reason?: string; scope?: DecisionScope }; res: DecideResult };
  /** Denies every pending prompt of one authenticated agent (a runaway agent), each with `reason`. */
  denyAll: { req: { agent: string; reason?: string }; res: { denied: number } };
  /** The raw args of a pending prompt with sensitive text (never stored; the audit notes the look). */
  revealApprovalArgs: { req: { approval_id: string }; res: { args: JsonValue } };
  listRules: { req: void; res: ApprovalRule[] };
  /** Revokes a rule, or discards a proposed one. */
  revokeRule: { req: { rule_id: string }; res: { revoked: boolean } };
  /** Puts a proposed rule in force, if it still has the content the panel showed (`digest`). */
  confirmRule: { req: { rule_id: string; digest: string }; res: { confirmed: boolean } };
  /** Rewrites a rule's scope; `agent` absent = any agent, `args` absent = any args. */
  updateRule: { req: { rule_id: string; channel: string; ops: string[]; agent?: string; args?: ArgConstraints }; res: { updated: boolean } };
  listSessionGrants: { req: void; res: SessionGrantEntry[] };
  revokeSessionGrant: { req: { grant_id: string }; res: { revoked: boolean } };
  getSettings: { req: void; res: PanelSettings };
  setApprovalTimeout: { req: { timeout_ms: number }; res: PanelSettings };
  queryTimeline: { req: TimelineQuery; res: TimelinePage };
  getInvocation: { req: { invocation_id: string }; res: InvocationDetail };
  listProviders: { req: void; res: ProviderEntry[] };
  explainSelection: { req: SelectionQuery; res: SelectionExplanation };
  /** Operator-only: named agent credentials. */
  listAgents: { req: void; res: AgentEntry[] };
  /** The token is in this response only; it is never stored or shown again. */
  createAgent: { req: { name: string }; res: { id: string; token: string } };
  revokeAgent: { req: { name: string }; res: { revoked: boolean } };
  /** Operator-only: out-of-process drivers (process, admission, stderr) and their protocol trace. */
  driverStatus: { req: void; res: DriverProcessStatus[] };
  driverTrace: { req: { driver: string; method?: string; after?: number; limit?: number }; res: DriverTraceEntry[] };
  /** Admits a driver with the sha256 the panel showed; refused when the file changed since. */
  trustDriver: { req: { driver: string; sha256: string }; res: DriverProcessStatus };
  restartDriver: { req: { driver: string }; res: DriverProcessStatus };
  /** Who is in the fleet (`enabled: false` when this hub is in none). */
  fleetStatus: { req: void; res: FleetView };
  /** The fleet's merged timeline, newest first; `hub` filters by hub. */
  fleetTimeline: { req: { hub?: string; before?: number; limit?: number }; res: FleetTimelinePage };
}

/** Payload of each event stream. */
export interface PanelEvents {
  /** A runtime event, enriched with channel/op/agent/provider/interaction. */
  runtimeEvent: TimelineEvent;
  approvalAdded: PendingApproval;
  approvalResolved: ApprovalResolved;
  rulesChanged: ApprovalRule[];
  sessionGrantsChanged: SessionGrantEntry[];
  hubStatus: HubStatus;
  /** A running demo's current step (sent on connect and on every change; never while no demo runs). */
  demoStep: DemoStep;
  /** Fleet membership changed (a hub joined, went out of reach, or this hub lost NATS). */
  fleetChanged: FleetView;
  /** A record reached the fleet's merged timeline. */
  fleetEntry: FleetTimelineEntry;
}

export type PanelMethod = keyof PanelCalls;
export type PanelEventName = keyof PanelEvents;

/** Removes a listener; calling it twice is harmless. */
export type Disposer = () => void;

/** The calls of the PanelApi as async functions. */
export type PanelCallFns = {
  [M in PanelMethod]: PanelCalls[M]['req'] extends void
    ? () => Promise<PanelCalls[M]['res']>
    : (req: PanelCalls[M]['req']) => Promise<PanelCalls[M]['res']>;
};

/** What the renderer talks to: calls plus event streams; every subscription returns a disposer. */
export interface PanelApi extends PanelCallFns {
  on<E extends PanelEventName>(event: E, listener: (payload: PanelEvents[E]) => void): Disposer;
}

/** The error a call rejects with; `message` is meant for the operator. */
export interface PanelErrorWire {
  code: 'invalid_request' | 'not_found' | 'unauthorized' | 'failed' | 'unavailable';
  message: string;
}

/** Thrown on the client side when a call fails. */
export class PanelCallError extends Error {
  readonly code: PanelErrorWire['code'];
  constructor(wire: PanelErrorWire) {
    super(wire.message);
    this.name = 'PanelCallError';
    this.code = wire.code;
  }
}

/** Electron IPC channel name for a call. */
export const ipcCallChannel = (method: PanelMethod): string => `uplink:call:${method}`;
/** Electron IPC channel name for an event stream. */
export const ipcEventChannel = (event: PanelEventName): string => `uplink:event:${event}`;

/** The server side of the PanelApi: calls get the caller's identity for authorization/audit. */
export type PanelHandlers = {
  [M in PanelMethod]: (req: PanelCalls[M]['req'] extends void ? Record<string, never> : PanelCalls[M]['req']) => Promise<PanelCalls[M]['res']>;
};
