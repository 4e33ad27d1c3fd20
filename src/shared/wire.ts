/**
 * The few kernel and driver wire types the panel needs, redeclared here because `src/shared`
 * imports nothing from the app. They are structurally identical to `src/main/kernel/types.ts`
 * and `src/main/drivers/contract.ts`; a type test in test/unit/panel keeps them in step.
 */

/** JSON values as they cross the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON Schema (Draft 2020-12) document or boolean schema. */
export type JsonSchema = { [key: string]: unknown } | boolean;

/** How a provider drives the software; earlier is preferred by selection. */
export type InteractionKind = 'typed' | 'semantic_ui' | 'visual_ui';
export const INTERACTION_KINDS: readonly InteractionKind[] = ['typed', 'semantic_ui', 'visual_ui'];

/** Whether invoking a capability can change the world. */
export type OperationSafety = 'read_only' | 'mutating';

/** Lifecycle state of one invocation. */
export type InvocationState = 'accepted' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export const INVOCATION_STATES: readonly InvocationState[] = ['accepted', 'running', 'succeeded', 'failed', 'cancelled'];
/** The states an invocation never leaves. */
export const TERMINAL_STATES: readonly InvocationState[] = ['succeeded', 'failed', 'cancelled'];

/** Kernel error codes (`resource_exhausted` is an Uplink extension). */
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
  | 'resource_exhausted';

/** The agent-facing error of the kernel. */
export interface SoftwareUseErrorWire {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** Event kinds; `approval_*` and `progress` are Uplink extensions. */
export type RuntimeEventKind =
  | 'accepted'
  | 'started'
  | 'cancellation_requested'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'approval_requested'
  | 'approval_granted'
  | 'approval_denied'
  | 'progress';
export const RUNTIME_EVENT_KINDS: readonly RuntimeEventKind[] = [
  'accepted',
  'started',
  'cancellation_requested',
  'succeeded',
  'failed',
  'cancelled',
  'approval_requested',
  'approval_granted',
  'approval_denied',
  'progress',
];

/** How an approval was decided (Uplink extension). */
export interface ApprovalDetail {
  by?: string;
  reason?: string;
}

/** Progress of a long operation (Uplink extension). */
export interface ProgressDetail {
  progress: number;
  total?: number;
  message?: string;
}

/** One entry of an invocation's history; `sequence` is gap-free per invocation, from 1. */
export interface RuntimeEvent {
  invocation_id: string;
  sequence: number;
  kind: RuntimeEventKind;
  provider_id?: string;
  error?: SoftwareUseErrorWire;
  at?: number;
  approval?: ApprovalDetail;
  progress?: ProgressDetail;
}

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

/** One capability a provider offers and the interaction kinds it serves it through. */
export interface ProviderCapability {
  spec: CapabilitySpec;
  interactions: InteractionKind[];
}

/** One addressable target of a driver (`channel` is `<driver>:<addr>`). */
export interface ChannelEntry {
  channel: string;
  labels: string[];
  detail: JsonValue;
}

/** A permission tier a human may give a channel, as its driver declares it (least power first). */
export interface TierSpec {
  name: string;
  description: string;
  risk: TierRisk;
}

/** How much an agent can do at a tier. */
export type TierRisk = 'low' | 'medium' | 'high';
export const TIER_RISKS: readonly TierRisk[] = ['low', 'medium', 'high'];

/** One operation a driver offers; a missing `mutating` counts as mutating. */
export interface OpSpec {
  op: string;
  summary: string;
  mutating?: boolean;
  params_schema: JsonSchema;
  result_schema: JsonSchema;
  interactions?: InteractionKind[];
  sensitive_args?: string[];
}

/** A driver's health report. */
export interface DoctorReport {
  driver: string;
  ok: boolean;
  lines: string[];
}

/** What an approval prompt shows for a pending op (driver preview). */
export interface ApprovalPreview {
  text?: string;
  image_png?: string;
  mark?: { x: number; y: number; width?: number; height?: number };
  lines?: string[];
  lines_hidden?: string;
  warnings?: string[];
}

/** Fail closed: an op that does not say it is read-only is mutating. */
export function opIsMutating(op: Pick<OpSpec, 'mutating'>): boolean {
  return op.mutating !== false;
}
