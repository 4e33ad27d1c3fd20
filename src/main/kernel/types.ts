/**
 * Wire types of the sua-sdk contract (docs/kernel.md). Field names and enum values keep the SDK's
 * snake_case so that a Rust peer could read them. Uplink's own extensions are marked as such.
 */

/** How a provider drives the software; earlier in this list is preferred by selection. */
export type InteractionKind = 'typed' | 'semantic_ui' | 'visual_ui';
export const INTERACTION_KINDS: readonly InteractionKind[] = ['typed', 'semantic_ui', 'visual_ui'];

/** Whether invoking a capability can change the world. */
export type OperationSafety = 'read_only' | 'mutating';

/** JSON values as they cross the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON Schema (Draft 2020-12) document or boolean schema. */
export type JsonSchema = { [key: string]: unknown } | boolean;

/** The canonical description of one capability at one version. */
export interface CapabilitySpec {
  id: string;
  version: string;
  title: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  safety: OperationSafety;
}

/** Who a provider is. */
export interface ProviderDescriptor {
  id: string;
  version: string;
  name: string;
  description: string;
}

/** One capability a provider offers, and the interaction kinds it can serve it through. */
export interface ProviderCapability {
  spec: CapabilitySpec;
  interactions: InteractionKind[];
}

/** A concrete way to run a capability: this provider, this spec, this interaction kind. */
export interface CapabilityOffer {
  provider: ProviderDescriptor;
  capability: CapabilitySpec;
  interaction: InteractionKind;
}

/** Filter for discovery; every present field must match. */
export interface CapabilityQuery {
  capability_id?: string;
  version_requirement?: string;
  provider_id?: string;
  interaction?: InteractionKind;
}

/** Hard constraints of a request: never relaxed by selection. */
export interface InvocationConstraints {
  provider_id?: string;
  interaction?: InteractionKind;
}

/** What an agent asks the runtime to do. */
export interface InvocationRequest {
  invocation_id: string;
  capability_id: string;
  /** A semver range, e.g. `^1`, `>=1.2.0 <2`, `*`. */
  version_requirement: string;
  input: JsonValue;
  constraints: InvocationConstraints;
}

/** Returned by `start`: which provider, version and interaction the runtime pinned. */
export interface InvocationReceipt {
  invocation_id: string;
  provider_id: string;
  capability_version: string;
  interaction: InteractionKind;
}

export type InvocationState = 'accepted' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const TERMINAL_STATES: readonly InvocationState[] = ['succeeded', 'failed', 'cancelled'];

/** Error codes of the contract; `resource_exhausted` is an Uplink extension. */
export type ErrorCode =
  | 'invalid_request'
  | 'capability_unavailable'
  | 'constraint_unsatisfied'
  | 'policy_denied'
  | 'duplicate_invocation'
  | 'invocation_not_found'
  | 'input_schema_violation'
  | 'output_schema_violation'
  | 'provider_failed'
  | 'cancelled'
  | 'internal'
  /** Uplink extension. */
  | 'resource_exhausted';

/** The error as it travels on the wire (agent-facing: never provider text or instance values). */
export interface SoftwareUseErrorWire {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

export interface InvocationResult {
  output: JsonValue;
}

/** A point-in-time view of one invocation. */
export interface InvocationSnapshot {
  receipt: InvocationReceipt;
  state: InvocationState;
  result?: InvocationResult;
  error?: SoftwareUseErrorWire;
  last_event_sequence: number;
}

/**
 * Event kinds. `approval_*` and `progress` are Uplink extensions; they take sequence numbers
 * like any other event.
 */
export type RuntimeEventKind =
  | 'accepted'
  | 'started'
  | 'cancellation_requested'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  /** Uplink extension. */
  | 'approval_requested'
  /** Uplink extension. */
  | 'approval_granted'
  /** Uplink extension. */
  | 'approval_denied'
  /** Uplink extension. */
  | 'progress';

/** One entry of an invocation's history; `sequence` is gap-free per invocation, from 1. */
export interface RuntimeEvent {
  invocation_id: string;
  sequence: number;
  kind: RuntimeEventKind;
  provider_id?: string;
  error?: SoftwareUseErrorWire;
  /** Uplink extension: milliseconds since the epoch when the event was recorded. */
  at?: number;
  /** Uplink extension: for `approval_*` events, who decided and how. */
  approval?: ApprovalDetail;
  /** Uplink extension: for `progress` events. */
  progress?: ProgressDetail;
}

/** Uplink extension: how an approval was decided. */
export interface ApprovalDetail {
  by?: string;
  reason?: string;
}

/** Uplink extension: progress of a long operation. */
export interface ProgressDetail {
  progress: number;
  total?: number;
  message?: string;
}

/** A page of events after an exclusive cursor. */
export interface EventPage {
  events: RuntimeEvent[];
  next_cursor: number;
  terminal: boolean;
}

/** What a provider returns on success. */
export interface ProviderOutput {
  output: JsonValue;
}

/**
 * What a provider receives. Uplink extensions: `context` is the call's context as given to
 * `start` (frozen); `report` emits a `progress` event; `abort` aborts the call's own signal with
 * `reason`, for a limit the provider keeps itself (a deadline), so its work stops without a second
 * signal to link: the invocation still ends with what the provider settles with, and no
 * cancellation is recorded.
 */
export interface ProviderCall<C = unknown> {
  request: InvocationRequest;
  offer: CapabilityOffer;
  context: C;
  report?: (progress: ProgressDetail) => void;
  abort?: (reason: unknown) => void;
}

/** The provider port: trusted in-process code that does the work. */
export interface CapabilityProvider<C = unknown> {
  descriptor(): ProviderDescriptor;
  capabilities(): ProviderCapability[];
  invoke(call: ProviderCall<C>, signal: AbortSignal): Promise<ProviderOutput>;
}

/**
 * The outcome of an operator approval. Uplink extension: `cause`, a structured value saying why
 * it was not granted, kept (never shown to an agent as is) on the host's terminal snapshot.
 */
export interface ApprovalOutcome {
  granted: boolean;
  by?: string;
  reason?: string;
  cause?: unknown;
}

/**
 * What a policy decides for one request. Uplink extension: a denial's `cause` is handed back
 * unchanged as the `cause` of the `policy_denied` error `start` rejects with.
 */
export type PolicyDecision = { kind: 'permit' } | { kind: 'deny'; reason?: string; cause?: unknown } | { kind: 'ask'; approval: Promise<ApprovalOutcome> };

/** What a policy decides on. Uplink extension: `context`, the call's context as given to `start`. */
export interface PolicyContext<C = unknown> {
  request: InvocationRequest;
  offer: CapabilityOffer;
  context: C;
}

/** A policy; a throw, a rejection or an invalid decision fails closed as `policy_denied`. */
export type Policy<C = unknown> = (ctx: PolicyContext<C>) => PolicyDecision | Promise<PolicyDecision>;

/**
 * Uplink extension, host side only: a snapshot with what ended the invocation. `cause` is the
 * provider's thrown value (`provider_failed`) or the policy's denial cause (`policy_denied`);
 * `diagnostic` the operator-only detail. Neither may reach an agent as it is: the agent port
 * (`get`) returns the plain snapshot.
 */
export interface HostSnapshot extends InvocationSnapshot {
  cause?: unknown;
  diagnostic?: RuntimeDiagnostic;
}

/** The agent port of the runtime. */
export interface InvocationPort {
  discover(query?: CapabilityQuery): Promise<CapabilityOffer[]>;
  start(request: InvocationRequest): Promise<InvocationReceipt>;
  get(invocationId: string): Promise<InvocationSnapshot>;
  events(invocationId: string, after?: number): Promise<EventPage>;
  cancel(invocationId: string): Promise<InvocationSnapshot>;
}

// ---------------------------------------------------------------------------------------------
// Kernel API types (Uplink's own, not part of the sua wire contract).

/** What kind of operator-only detail a diagnostic carries. */
export type DiagnosticKind = 'provider_error' | 'policy_error' | 'output_schema' | 'input_schema';

/**
 * Operator-only detail (provider error text, policy exceptions, schema failures). It goes to the
 * audit log or a console, never into agent-facing errors.
 */
export interface RuntimeDiagnostic {
  invocation_id?: string;
  provider_id?: string;
  kind: DiagnosticKind;
  detail: string;
  /** What the provider threw, for a host that tells its own typed errors apart (never for agents). */
  error?: unknown;
}

/** Options of `new Runtime(options)`. */
export interface RuntimeOptions<C = unknown> {
  /** Decides each request; defaults to "permit read_only, deny mutating". */
  policy?: Policy<C>;
  /** Retention bound (a positive integer); defaults to 10,000. */
  maxRetained?: number;
  /** Clock for event timestamps (ms since the epoch); defaults to `Date.now`. */
  now?: () => number;
  /** Operator-only channel for detail that must never reach an agent. */
  onDiagnostic?: (diagnostic: RuntimeDiagnostic) => void;
}

/** What `explainSelection` needs: the selection part of an `InvocationRequest`. */
export interface SelectionQuery {
  capability_id: string;
  version_requirement: string;
  constraints?: InvocationConstraints;
}

/** One offer of the requested capability and why it did or did not match. */
export interface SelectionCandidate {
  offer: CapabilityOffer;
  matched: boolean;
  reason: string;
}

/** Which offer `start` would pin for a request, and why (the panel's "why this provider"). */
export interface SelectionExplanation {
  selected?: CapabilityOffer;
  error?: SoftwareUseErrorWire;
  candidates: SelectionCandidate[];
}

/** A registered provider and the capabilities it offers (with their canonical specs). */
export interface ProviderListing {
  descriptor: ProviderDescriptor;
  capabilities: ProviderCapability[];
}

/** Receives every runtime event of every invocation, live and in order, with the invocation's context. */
export type RuntimeListener<C = unknown> = (event: RuntimeEvent, context: C) => void;
