/**
 * The driver wire contract (docs/driver-contract.md; the shapes of cc-uplink's Driver trait). Every payload is
 * plain JSON with the contract's snake_case names, so a driver can later run out of process over
 * JSON-RPC unchanged: no callbacks, class instances or shared mutable state cross this boundary.
 */
import type { JsonSchema, JsonValue } from '../kernel';
import { escapeControl } from '../../shared/escape';

export type DriverKind = 'messaging' | 'capability' | 'both';

/** Who a driver is. */
export interface DriverInfo {
  id: string;
  kind: DriverKind;
  summary: string;
  /**
   * Uplink extension: the permission tiers `setTier` takes, least power first. Present only on a
   * driver with `setTier`; the panel offers exactly these, so it never needs to know the driver.
   */
  tiers?: TierSpec[];
}

/** Uplink extension: one permission tier a human may give a channel. */
export interface TierSpec {
  /** What `setTier` takes, and what a channel's `detail.tier` reports. */
  name: string;
  /** What an agent may do on a channel at this tier, in one line. */
  description: string;
  /** How much an agent can do at this tier: the panel colours the tier by it. */
  risk: TierRisk;
}

/** How much an agent can do at a tier. */
export type TierRisk = 'low' | 'medium' | 'high';

/** One addressable target of a driver. `channel` is the full `<driver>:<addr>` address. */
export interface ChannelEntry {
  channel: string;
  labels: string[];
  detail: JsonValue;
}

/** One operation a driver offers on its channels. A missing `mutating` counts as mutating. */
export interface OpSpec {
  op: string;
  summary: string;
  mutating?: boolean;
  params_schema: JsonSchema;
  result_schema: JsonSchema;
  /**
   * Uplink extension: interaction kinds the driver can serve this op through. Omitted means
   * `['typed']`. A driver that drives one channel several ways (desktop: AT-SPI and pixels)
   * lists each kind here and takes the chosen one in `InvokeContext.interaction`.
   */
  interactions?: Array<'typed' | 'semantic_ui' | 'visual_ui'>;
  /** Uplink extension: args fields whose values must never be stored (e.g. typed passwords). */
  sensitive_args?: string[];
}

export type ReplyHint = 'full' | 'short' | 'none';

export interface SendRequest {
  message: string;
  reply_hint: ReplyHint;
}

export interface SendReceipt {
  delivered: boolean;
  correlation_id: string;
  verify_excerpt?: string;
  /** RFC 3339 timestamp of the injection. */
  injected_at: string;
}

export interface RecvItem {
  cursor: number;
  /** RFC 3339 timestamp when the item was seen. */
  at: string;
  from?: string;
  id?: string;
  raw: string;
}

export interface RecvBatch {
  items: RecvItem[];
  next_cursor: number;
}

export interface DoctorReport {
  driver: string;
  ok: boolean;
  lines: string[];
}

/**
 * Uplink extension: facts the hub passes along with an invocation. Plain JSON like the rest.
 * `interaction` is the kind the kernel selected; `agent` names who asked (for envelopes/audit).
 */
export interface InvokeContext {
  interaction?: 'typed' | 'semantic_ui' | 'visual_ui';
  agent?: string;
  invocation_id?: string;
  /**
   * Where the calling agent runs, as its own environment says (`$TMUX`, `$TMUX_PANE`), when the
   * hub runs elsewhere (`uplink mcp` relaying to a running hub). Drivers verify it before use.
   */
  caller?: CallerEnvironment;
  /** How many milliseconds the hub waits for this call's answer (an out-of-process driver can stop in time). */
  deadline_ms?: number;
}

/** Uplink extension: the calling agent's terminal environment, as its process saw it. */
export interface CallerEnvironment {
  tmux?: string;
  tmux_pane?: string;
}

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
  interactionsFor?(addr: string): Promise<Array<'typed' | 'semantic_ui' | 'visual_ui'>>;
  /**
   * Uplink extension: the refusals of a mutating op that need no side effect (a tier, a guard, a
   * target that is gone), run before the operator is asked, so nobody approves a call bound to
   * fail. Throws the `DriverError` the op itself would; the op still checks again when it acts.
   * `args` arrive as `invoke` gets them; `send` is checked as op `send` with `{message, reply_hint}`.
   */
  precheck?(addr: string, op: string, args: JsonValue, ctx?: InvokeContext): Promise<void>;
}

/** Uplink extension: shown to the operator with an approval prompt. */
export interface ApprovalPreview {
  /** The action in words, e.g. "type 12 characters into the entry 'Name'". */
  text?: string;
  /** Base64 PNG of the target (desktop windows). */
  image_png?: string;
  /** Where the action lands, in image pixels. */
  mark?: { x: number; y: number; width?: number; height?: number };
  /** The target's last lines of text (terminal panes), control characters escaped, bounded. */
  lines?: string[];
  /** Why `lines` is missing although the target has text (e.g. the pane is read-blocked). */
  lines_hidden?: string;
  /** Why what the prompt shows may not be what the action meets (a covered window, a blank capture). */
  warnings?: string[];
}

export type DriverErrorKind = 'NotFound' | 'Unavailable' | 'Rejected' | 'Timeout' | 'Upstream' | 'Invalid';
export const DRIVER_ERROR_KINDS: readonly DriverErrorKind[] = [
  'NotFound',
  'Unavailable',
  'Rejected',
  'Timeout',
  'Upstream',
  'Invalid',
];

/** The error payload as it crosses the wire. */
export interface DriverErrorWire {
  kind: DriverErrorKind;
  message: string;
  hint?: string;
  evidence?: string;
}

/** A driver failure an agent or a person can act on. */
export class DriverError extends Error {
  readonly kind: DriverErrorKind;
  readonly hint?: string;
  readonly evidence?: string;

  constructor(kind: DriverErrorKind, message: string, options: { hint?: string; evidence?: string } = {}) {
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

/** The driver name used in a rendered error: the channel's prefix before the first `:`, else `core`. */
export function driverOfChannel(channel: string | undefined): string {
  if (!channel) return 'core';
  const i = channel.indexOf(':');
  return i > 0 ? channel.slice(0, i) : 'core';
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
