/**
 * The channel map: method and event names of the PanelApi with the JSON Schemas (Draft 2020-12)
 * of their payloads. Main validates every request against it on receipt; tests check that hub
 * responses conform. Both transports are generated from these keys, so adding a method here and
 * in `PanelCalls` is all it takes to expose it everywhere.
 */
import type { PanelEventName, PanelMethod } from './panel-api';
import { RECORD_AGENT_SCHEMA, TIMELINE_EVENT_SCHEMA } from './audit-record';
import { INTERACTION_KINDS, INVOCATION_STATES, TIER_RISKS } from './wire';
import { OUTCOMES } from './audit-record';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const id: Schema = { type: 'string', minLength: 1, maxLength: 512 };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const json: Schema = {};
/** Bounds only: the hub checks the names against the ops, and refuses sensitive ones. */
const argConstraints: Schema = { type: 'object', maxProperties: 16, propertyNames: { maxLength: 64 }, additionalProperties: json };
const arr = (items: Schema): Schema => ({ type: 'array', items });
const strings = arr(str);
const strEnum = (...values: string[]): Schema => ({ type: 'string', enum: values });
/** A closed object: every listed property allowed, `required` ones present, nothing else. */
const obj = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
/** An open object for responses: extra fields from a newer hub are tolerated. */
const rec = (properties: Record<string, Schema>, required: string[] = []): Schema => ({ type: 'object', properties, required });

const empty = obj({});
// Derived from the closed unions in wire.ts, so a new kind or state cannot be missed here.
const interaction = strEnum(...INTERACTION_KINDS);
const state = strEnum(...INVOCATION_STATES, 'rejected');
const outcome = strEnum(...OUTCOMES);
const decision = strEnum('once', 'session', 'always', 'deny');
const suError = rec({ code: str, message: str, retryable: bool }, ['code', 'message', 'retryable']);
const preview = rec({
  text: str,
  image_png: str,
  mark: rec({ x: num, y: num, width: num, height: num }, ['x', 'y']),
  lines: strings,
  lines_hidden: str,
  warnings: strings,
});
const tierSpec = rec({ name: str, description: str, risk: strEnum(...TIER_RISKS) }, ['name', 'description', 'risk']);
const channel = rec({ channel: str, labels: strings, detail: json, driver: str, tier: str, tiers: arr(tierSpec) }, ['channel', 'labels', 'driver']);
const doctor = rec({ driver: str, ok: bool, lines: strings }, ['driver', 'ok', 'lines']);
const opSpec = rec(
  { op: str, summary: str, mutating: bool, params_schema: json, result_schema: json, interactions: arr(interaction), sensitive_args: strings },
  ['op', 'summary', 'params_schema', 'result_schema'],
);
const pending = rec(
  {
    approval_id: str,
    invocation_id: str,
    agent: str,
    agent_name: str,
    agent_kind: str,
    channel: str,
    channel_labels: strings,
    op: str,
    capability_id: str,
    args: json,
    sensitive: bool,
    redacted_args: strings,
    provider_id: str,
    interaction,
    preview,
    requested_at: num,
    expires_at: num,
    rule_channel: str,
    hub: str,
  },
  ['approval_id', 'invocation_id', 'agent', 'channel', 'op', 'args', 'requested_at', 'expires_at'],
);
const resolved = rec(
  { approval_id: str, granted: bool, authorized: str, by: str, reason: str, rule_id: str, decision },
  ['approval_id', 'granted', 'authorized'],
);
const rule = rec(
  { rule_id: str, channel: str, op: str, ops: strings, args: argConstraints, proposed: bool, digest: str, agent: str, created_at: str, created_by: str, note: str, last_used_at: num, uses: int },
  ['rule_id', 'channel', 'op', 'ops', 'proposed', 'digest', 'uses'],
);
// Bounds only: the hub checks what a scope may name (no reusable id, covering the prompt).
const scopeChannel: Schema = { type: 'string', minLength: 1, maxLength: 256 };
const scopeOps: Schema = { type: 'array', minItems: 1, maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 128 } };
const scope = obj({ agent: strEnum('this', 'any'), channel: scopeChannel, ops: scopeOps, args: argConstraints });
const sessionGrant = rec(
  { grant_id: str, agent: str, session: str, channel: str, ops: strings, args: argConstraints, granted_by: str, granted_at: num },
  ['grant_id', 'agent', 'session', 'channel', 'ops', 'granted_by', 'granted_at'],
);
const settings = rec(
  { approval_timeout_ms: num, config_error: str, mcp_url: str, mcp_token: str, cli_path: str, stdio_command: strings, data_dir: str, version: str },
  ['approval_timeout_ms', 'data_dir'],
);
const timelineEvent: Schema = TIMELINE_EVENT_SCHEMA;
const fleetMember = rec({ hub: str, state: strEnum('self', 'connected', 'unreachable'), since: num, panels: int, problem: str }, ['hub', 'state', 'since']);
const fleetView = rec({ enabled: bool, name: str, url: str, connected: bool, problem: str, members: arr(fleetMember) }, ['enabled', 'members']);
const fleetEntry = rec({ hub: str, seq: int, cursor: int, event: timelineEvent }, ['hub', 'seq', 'cursor', 'event']);
const filter = obj({ channel: str, op: str, agent: str, state, outcome, text: { type: 'string', maxLength: 500 } });
const providerEntry = rec({ provider_id: str, version: str, driver: str, interaction, capabilities: strings }, ['provider_id', 'capabilities']);
const agentEntry = rec({ id: str, created_at: str, created_by: str, revoked_at: str }, ['id', 'created_at', 'created_by']);
const selectionRef = rec({ provider_id: str, capability_version: str, interaction }, ['provider_id', 'capability_version', 'interaction']);

const driverId: Schema = { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 };
const driverStatus = rec(
  {
    id: str,
    command: strings,
    state: strEnum('idle', 'starting', 'running', 'backoff', 'refused', 'incompatible', 'stopped'),
    pid: int,
    protocol_version: str,
    extensions: strings,
    restarts: int,
    started_at: num,
    next_start_at: num,
    last_exit: rec({ at: num, code: { type: ['integer', 'null'] }, signal: { type: ['string', 'null'] }, reason: str }, ['at', 'code', 'signal', 'reason']),
    admission: strEnum('admitted', 'untrusted', 'mismatch', 'unchecked'),
    integrity: rec({ file: str, expected: str, actual: str }),
    error: str,
    in_flight: int,
    stderr: strings,
  },
  ['id', 'command', 'state', 'extensions', 'restarts', 'admission', 'integrity', 'in_flight', 'stderr'],
);
const traceEntry = rec(
  { seq: int, at: num, dir: strEnum('out', 'in'), type: strEnum('request', 'response', 'error', 'notification', 'invalid'), method: str, id: { type: ['integer', 'string'] }, bytes: int, ms: num, summary: str },
  ['seq', 'at', 'dir', 'type', 'bytes', 'summary'],
);

/** Request/response schemas of every call. `satisfies` ties the keys to `PanelCalls`. */
export const PANEL_CALLS = {
  listChannels: { request: empty, response: rec({ channels: arr(channel), health: arr(doctor), errors: arr(rec({ driver: str, error: str })) }, ['channels', 'health']) },
  describeChannel: { request: obj({ channel: id }, ['channel']), response: rec({ channel, ops: arr(opSpec) }, ['channel', 'ops']) },
  previewChannel: { request: obj({ channel: id }, ['channel']), response: rec({ text: str, image_png: str, error: str, warnings: arr(str) }) },
  runOp: {
    request: obj({ channel: id, op: { type: 'string', minLength: 1, maxLength: 128 }, args: json }, ['channel', 'op', 'args']),
    response: rec({ ok: bool, output: json, error: str }, ['ok']),
  },
  setTier: {
    request: obj({ channel: id, tier: { type: 'string', minLength: 1, maxLength: 64 } }, ['channel', 'tier']),
    response: rec({ channel: str, tier: str }, ['channel', 'tier']),
  },
  listPendingApprovals: { request: empty, response: arr(pending) },
  decide: {
    request: obj({ approval_id: id, decision, reason: { type: 'string', maxLength: 2000 }, scope }, ['approval_id', 'decision']),
    response: rec({ accepted: bool, granted: bool, rule_id: str, message: str }, ['accepted']),
  },
  revealApprovalArgs: { request: obj({ approval_id: id }, ['approval_id']), response: rec({ args: json }, ['args']) },
  denyAll: {
    request: obj({ agent: { type: 'string', minLength: 1, maxLength: 128 }, reason: { type: 'string', maxLength: 2000 } }, ['agent']),
    response: rec({ denied: int }, ['denied']),
  },
  listRules: { request: empty, response: arr(rule) },
  revokeRule: { request: obj({ rule_id: id }, ['rule_id']), response: rec({ revoked: bool }, ['revoked']) },
  confirmRule: { request: obj({ rule_id: id, digest: { type: 'string', pattern: '^[0-9a-f]{64}$' } }, ['rule_id', 'digest']), response: rec({ confirmed: bool }, ['confirmed']) },
  updateRule: {
    request: obj({ rule_id: id, channel: scopeChannel, ops: scopeOps, agent: { type: 'string', minLength: 1, maxLength: 128 }, args: argConstraints }, ['rule_id', 'channel', 'ops']),
    response: rec({ updated: bool }, ['updated']),
  },
  listSessionGrants: { request: empty, response: arr(sessionGrant) },
  revokeSessionGrant: { request: obj({ grant_id: id }, ['grant_id']), response: rec({ revoked: bool }, ['revoked']) },
  getSettings: { request: empty, response: settings },
  setApprovalTimeout: {
    request: obj({ timeout_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000 } }, ['timeout_ms']),
    response: settings,
  },
  queryTimeline: {
    request: obj({ filter, before: { type: 'number', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 5000 } }),
    response: rec({ events: arr(timelineEvent), next_before: { type: ['number', 'null'] } }, ['events', 'next_before']),
  },
  getInvocation: {
    request: obj({ invocation_id: id }, ['invocation_id']),
    response: rec({ invocation_id: str, agent: RECORD_AGENT_SCHEMA, events: arr(timelineEvent), error: str }, ['invocation_id', 'events']),
  },
  listProviders: { request: empty, response: arr(providerEntry) },
  listAgents: { request: empty, response: arr(agentEntry) },
  // The name's pattern is the hub's own check too; here it bounds what reaches the hub.
  createAgent: { request: obj({ name: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,63}$' } }, ['name']), response: rec({ id: str, token: str }, ['id', 'token']) },
  revokeAgent: { request: obj({ name: { type: 'string', minLength: 1, maxLength: 64 } }, ['name']), response: rec({ revoked: bool }, ['revoked']) },
  driverStatus: { request: empty, response: arr(driverStatus) },
  driverTrace: {
    request: obj({ driver: driverId, method: { type: 'string', maxLength: 64 }, after: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 1000 } }, ['driver']),
    response: arr(traceEntry),
  },
  trustDriver: { request: obj({ driver: driverId, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } }, ['driver', 'sha256']), response: driverStatus },
  restartDriver: { request: obj({ driver: driverId }, ['driver']), response: driverStatus },
  fleetStatus: { request: empty, response: fleetView },
  fleetTimeline: {
    request: obj({ hub: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 }, before: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1, maximum: 5000 } }),
    response: rec({ entries: arr(fleetEntry), next_before: { type: ['number', 'null'] } }, ['entries', 'next_before']),
  },
  explainSelection: {
    request: obj(
      { capability_id: { type: 'string', minLength: 1, maxLength: 128 }, version_requirement: { type: 'string', maxLength: 128 }, provider_id: { type: 'string', maxLength: 128 }, interaction },
      ['capability_id'],
    ),
    response: rec({ selected: selectionRef, candidates: arr(rec({ provider_id: str, capability_version: str, interaction, selected: bool, reason: str })), error: suError }, ['candidates']),
  },
} satisfies Record<PanelMethod, { request: Schema; response: Schema }>;

/** Payload schemas of every event stream. */
export const PANEL_EVENTS = {
  runtimeEvent: timelineEvent,
  approvalAdded: pending,
  approvalResolved: resolved,
  rulesChanged: arr(rule),
  sessionGrantsChanged: arr(sessionGrant),
  hubStatus: rec({ started_at: num, pending_approvals: int, attached_panels: int, version: str, audit_error: str }, ['started_at', 'pending_approvals', 'attached_panels']),
  demoStep: rec(
    { step: int, total: int, title: str, why: str, look: str, window_channel: str, state: strEnum('running', 'done'), summary: str },
    ['step', 'total', 'title', 'why', 'look', 'state'],
  ),
  fleetChanged: fleetView,
  fleetEntry,
} satisfies Record<PanelEventName, Schema>;

/** Every method name, in a stable order (the generators iterate this). */
export const PANEL_METHODS = Object.keys(PANEL_CALLS) as PanelMethod[];
/** Every event name. */
export const PANEL_EVENT_NAMES = Object.keys(PANEL_EVENTS) as PanelEventName[];

/** True when `name` is one of our method names (guards against `__proto__` and friends). */
export function isPanelMethod(name: unknown): name is PanelMethod {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(PANEL_CALLS, name);
}
