/**
 * The driver wire contract (docs/driver-contract.md; the shapes of cc-uplink's Driver trait). Every payload is
 * plain JSON with the contract's snake_case names, so a driver can later run out of process over
 * JSON-RPC unchanged: no callbacks, class instances or shared mutable state cross this boundary.
 */
import type { Static } from '@sinclair/typebox';
import type { InteractionKind, JsonValue } from '../kernel';
import { escapeControl } from '../../shared/escape';
import type * as S from './protocol-schemas';
import { parseChannelAddress } from '../../shared/channel-address';

// The wire shapes, each derived from its one declaration in ./protocol-schemas (the schema the
// protocol checks it with); field notes are the schemas' descriptions.

export type DriverKind = Static<typeof S.DriverKindSchema>;
/** Who a driver is. */
export type DriverInfo = Static<typeof S.DriverInfoSchema>;
/** Uplink extension: one permission tier a human may give a channel. */
export type TierSpec = Static<typeof S.TierSpecSchema>;
/** How much an agent can do at a tier. */
export type TierRisk = Static<typeof S.TierRiskSchema>;
/** One addressable target of a driver. `channel` is the full `<driver>:<addr>` address. */
export type ChannelEntry = Static<typeof S.ChannelEntrySchema>;
/** One operation a driver offers on its channels. A missing `mutating` counts as mutating. */
export type OpSpec = Static<typeof S.OpSpecSchema>;
export type ReplyHint = Static<typeof S.ReplyHintSchema>;
export type SendRequest = Static<typeof S.SendRequestSchema>;
export type SendReceipt = Static<typeof S.SendReceiptSchema>;
export type RecvItem = Static<typeof S.RecvItemSchema>;
export type RecvBatch = Static<typeof S.RecvBatchSchema>;
export type DoctorReport = Static<typeof S.DoctorReportSchema>;
/**
 * Uplink extension: facts the hub passes along with an invocation. `interaction` is the kind the
 * kernel selected; `agent` names who asked; `caller` is where the calling agent runs when the hub
 * runs elsewhere (drivers verify it before use); `deadline_ms` how long the hub waits.
 */
export type InvokeContext = Static<typeof S.InvokeContextSchema>;
/** Uplink extension: the calling agent's terminal environment, as its process saw it. */
export type CallerEnvironment = Static<typeof S.CallerEnvironmentSchema>;

/** The driver interface. `addr` is the part of the channel after `<driver>:`. */
export interface Driver {
  info(): DriverInfo;
  channels(): Promise<ChannelEntry[]>;
  ops(): OpSpec[];
  send(addr: string, request: SendRequest, ctx?: InvokeContext, signal?: AbortSignal): Promise<SendReceipt>;
  /** `args` arrive validated against the op's `params_schema`, its defaults filled in (by the kernel). */
  invoke(addr: string, op: string, args: JsonValue, ctx?: InvokeContext, signal?: AbortSignal): Promise<JsonValue>;
  recv(cursor?: number): Promise<RecvBatch>;
  doctor(): Promise<DoctorReport>;
  /** Optional: release processes, sockets and timers. */
  dispose?(): Promise<void>;
  /**
   * Uplink extension, human-only: set a channel's permission tier (one of `info().tiers`).
   * Reachable from the panel API and the CLI, never from MCP.
   */
  setTier?(addr: string, tier: string): Promise<void>;
  /**
   * Uplink extension: what an approval prompt shows for a pending op — the action in words and,
   * for visual targets, a fresh PNG of the target with the point or element marked.
   */
  preview?(addr: string, op: string, args: JsonValue): Promise<ApprovalPreview | undefined>;
  /**
   * Uplink extension: the interaction kinds that can serve this channel now (desktop: semantic_ui
   * only when the window's application exposes an accessibility tree). The hub constrains the
   * kernel's selection to these; a driver without it serves every kind its ops list.
   */
  interactionsFor?(addr: string): Promise<InteractionKind[]>;
  /**
   * Uplink extension: the refusals of a mutating op that need no side effect (a tier, a guard, a
   * target that is gone), run before the operator is asked, so nobody approves a call bound to
   * fail. Throws the `DriverError` the op itself would; the op still checks again when it acts.
   * `args` arrive as `invoke` gets them; `send` is checked as op `send` with `{message, reply_hint}`.
   */
  precheck?(addr: string, op: string, args: JsonValue, ctx?: InvokeContext): Promise<void>;
}

/** Uplink extension: shown to the operator with an approval prompt. */
export type ApprovalPreview = Static<typeof S.ApprovalPreviewSchema>;

export { DRIVER_ERROR_KINDS } from './protocol-schemas';
export type DriverErrorKind = (typeof S.DRIVER_ERROR_KINDS)[number];

/** The error payload as it crosses the wire. */
export type DriverErrorWire = Static<typeof S.DriverErrorWireSchema>;

/** A driver failure an agent or a person can act on. */
export class DriverError extends Error {
  readonly kind: DriverErrorKind;
  readonly hint?: string;
  /** What the driver saw (any JSON value), for the operator's audit; never shown to the agent. */
  readonly evidence?: JsonValue;

  constructor(kind: DriverErrorKind, message: string, options: { hint?: string; evidence?: JsonValue } = {}) {
    super(message);
    this.name = 'DriverError';
    this.kind = kind;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.evidence !== undefined) this.evidence = options.evidence;
  }

  toWire(): DriverErrorWire {
    const wire: DriverErrorWire = { kind: this.kind, message: this.message };
    if (this.hint !== undefined) wire.hint = this.hint;
    if (this.evidence !== undefined) wire.evidence = this.evidence;
    return wire;
  }

  static fromWire(wire: DriverErrorWire): DriverError {
    return new DriverError(wire.kind, wire.message, { hint: wire.hint, evidence: wire.evidence });
  }
}

/** The driver name used in a rendered error: the channel's driver (`<hub>/<driver>` for a fleet member's), else `core`. */
export function driverOfChannel(channel: string | undefined): string {
  const address = parseChannelAddress(channel);
  if (!address) return 'core';
  return address.hub === undefined ? address.driver : `${address.hub}/${address.driver}`;
}

/**
 * Renders exactly `uplink error [<driver>:<Kind>]: <message> — hint: <hint>` (no hint part without a
 * hint), always one line: messages quote channel names and pane text, which may hold anything.
 */
export function renderDriverError(driver: string, error: Pick<DriverErrorWire, 'kind' | 'message' | 'hint'>): string {
  const head = `uplink error [${driver}:${error.kind}]: ${error.message}`;
  return escapeControl(error.hint ? `${head} — hint: ${error.hint}` : head);
}

/** Fail closed: an op that does not say it is read-only is mutating. */
export function isMutating(op: Pick<OpSpec, 'mutating'>): boolean {
  return op.mutating !== false;
}
