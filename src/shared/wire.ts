/**
 * The kernel and driver wire shapes the panel and the fleet carry, declared here (TypeBox: one
 * declaration gives the schema and the type) because `src/shared` imports nothing from the app
 * and the kernel imports nothing of ours. The kernel (`src/main/kernel/types.ts`) and the driver
 * contract (`src/main/drivers/contract.ts`) keep their own TypeScript declarations; a type test
 * in test/unit/panel holds these identical to them.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Closed, StringEnum } from './schema';

/** JSON values as they cross the wire. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** Any JSON value (the schema `{}`). */
export const JsonValue = Type.Unsafe<JsonValue>({});
/** A JSON Schema (Draft 2020-12) document or boolean schema. */
export type JsonSchema = { [key: string]: unknown } | boolean;
export const JsonSchema = Type.Unsafe<JsonSchema>({});

/** How a provider drives the software; earlier is preferred by selection. */
export const INTERACTION_KINDS = ['typed', 'semantic_ui', 'visual_ui'] as const;
export const InteractionKind = StringEnum(INTERACTION_KINDS);
export type InteractionKind = Static<typeof InteractionKind>;

/** Whether invoking a capability can change the world. */
export const OperationSafety = StringEnum(['read_only', 'mutating']);
export type OperationSafety = Static<typeof OperationSafety>;

/** Lifecycle state of one invocation. */
export const INVOCATION_STATES = ['accepted', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const InvocationState = StringEnum(INVOCATION_STATES);
export type InvocationState = Static<typeof InvocationState>;
/** The states an invocation never leaves. */
export const TERMINAL_STATES: readonly InvocationState[] = ['succeeded', 'failed', 'cancelled'];

/** Kernel error codes (`resource_exhausted` is an Uplink extension). */
export const ERROR_CODES = [
  'invalid_request',
  'capability_unavailable',
  'constraint_unsatisfied',
  'policy_denied',
  'duplicate_invocation',
  'invocation_not_found',
  'input_schema_violation',
  'output_schema_violation',
  'provider_failed',
  'cancelled',
  'internal',
  'resource_exhausted',
] as const;
export const ErrorCode = StringEnum(ERROR_CODES);
export type ErrorCode = Static<typeof ErrorCode>;

/** The agent-facing error of the kernel. */
export const SoftwareUseErrorWire = Type.Object({ code: ErrorCode, message: Type.String(), retryable: Type.Boolean() });
export type SoftwareUseErrorWire = Static<typeof SoftwareUseErrorWire>;

/** Event kinds; `approval_*` and `progress` are Uplink extensions. */
export const RUNTIME_EVENT_KINDS = [
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
] as const;
export const RuntimeEventKind = StringEnum(RUNTIME_EVENT_KINDS);
export type RuntimeEventKind = Static<typeof RuntimeEventKind>;

/** How an approval was decided (Uplink extension). */
export const ApprovalDetail = Type.Object({ by: Type.Optional(Type.String()), reason: Type.Optional(Type.String()) });
export type ApprovalDetail = Static<typeof ApprovalDetail>;

/** Progress of a long operation (Uplink extension). */
export const ProgressDetail = Type.Object({ progress: Type.Number(), total: Type.Optional(Type.Number()), message: Type.Optional(Type.String()) });
export type ProgressDetail = Static<typeof ProgressDetail>;

/** One entry of an invocation's history; `sequence` is gap-free per invocation, from 1. */
export const RuntimeEvent = Type.Object({
  invocation_id: Type.String(),
  sequence: Type.Integer(),
  kind: RuntimeEventKind,
  provider_id: Type.Optional(Type.String()),
  error: Type.Optional(SoftwareUseErrorWire),
  at: Type.Optional(Type.Number()),
  approval: Type.Optional(ApprovalDetail),
  progress: Type.Optional(ProgressDetail),
});
export type RuntimeEvent = Static<typeof RuntimeEvent>;

/** The canonical description of one capability at one version. */
export const CapabilitySpec = Type.Object({
  id: Type.String(),
  version: Type.String(),
  title: Type.String(),
  description: Type.String(),
  input_schema: JsonSchema,
  output_schema: JsonSchema,
  safety: OperationSafety,
});
export type CapabilitySpec = Static<typeof CapabilitySpec>;

/** Who a provider is. */
export const ProviderDescriptor = Type.Object({ id: Type.String(), version: Type.String(), name: Type.String(), description: Type.String() });
export type ProviderDescriptor = Static<typeof ProviderDescriptor>;

/** One capability a provider offers and the interaction kinds it serves it through. */
export const ProviderCapability = Type.Object({ spec: CapabilitySpec, interactions: Type.Array(InteractionKind) });
export type ProviderCapability = Static<typeof ProviderCapability>;

/** One addressable target of a driver (`channel` is `<driver>:<addr>`). */
export const ChannelEntry = Type.Object({ channel: Type.String(), labels: Type.Array(Type.String()), detail: JsonValue });
export type ChannelEntry = Static<typeof ChannelEntry>;

/** How much an agent can do at a tier. */
export const TIER_RISKS = ['low', 'medium', 'high'] as const;
export const TierRisk = StringEnum(TIER_RISKS);
export type TierRisk = Static<typeof TierRisk>;

/** A permission tier a human may give a channel, as its driver declares it (least power first). */
export const TierSpec = Type.Object({ name: Type.String(), description: Type.String(), risk: TierRisk });
export type TierSpec = Static<typeof TierSpec>;

/** One operation a driver offers; a missing `mutating` counts as mutating. */
export const OpSpec = Type.Object({
  op: Type.String(),
  summary: Type.String(),
  mutating: Type.Optional(Type.Boolean()),
  params_schema: JsonSchema,
  result_schema: JsonSchema,
  interactions: Type.Optional(Type.Array(InteractionKind)),
  sensitive_args: Type.Optional(Type.Array(Type.String())),
});
export type OpSpec = Static<typeof OpSpec>;

/** A driver's health report. */
export const DoctorReport = Type.Object({ driver: Type.String(), ok: Type.Boolean(), lines: Type.Array(Type.String()) });
export type DoctorReport = Static<typeof DoctorReport>;

const text = (maxLength: number) => Type.String({ maxLength });
const texts = (maxLength: number) => Type.Array(text(maxLength), { maxItems: 256 });

/**
 * What an approval prompt shows for a pending op (driver preview). Closed and bounded: it travels
 * with a prompt to the other hubs of a fleet, which refuse anything else (the screenshot is
 * bounded by the size of the message that carries it).
 */
export const ApprovalPreview = Closed({
  text: Type.Optional(text(8192)),
  image_png: Type.Optional(Type.String()),
  mark: Type.Optional(Closed({ x: Type.Number(), y: Type.Number(), width: Type.Optional(Type.Number()), height: Type.Optional(Type.Number()) })),
  lines: Type.Optional(texts(4096)),
  lines_hidden: Type.Optional(text(1024)),
  warnings: Type.Optional(texts(1024)),
});
export type ApprovalPreview = Static<typeof ApprovalPreview>;

/** Fail closed: an op that does not say it is read-only is mutating. */
export function opIsMutating(op: Pick<OpSpec, 'mutating'>): boolean {
  return op.mutating !== false;
}
