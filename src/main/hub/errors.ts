/**
 * Hub errors: a `DriverError` that knows which driver name to render, plus the mapping from
 * kernel error codes onto driver kinds. What the agent sees is always the rendered line; provider
 * detail goes only to the audit store (operator).
 */
import { DRIVER_ERROR_KINDS, DriverError, driverOfChannel, renderDriverError } from '../drivers';
import type { DriverErrorKind } from '../drivers';
import type { ErrorCode, JsonValue } from '../kernel';
import { outcomeOf } from '../../shared/audit-record';
import type { Outcome, OutcomeFacts } from '../../shared/audit-record';
import { clipName } from '../../shared/escape';

/**
 * Longest message or hint an error carries. Names in messages are clipped where they are quoted;
 * this bounds whatever a quote missed (a driver's own text), so no error is ever megabytes.
 */
const MAX_ERROR_TEXT = 4096;
const bounded = (text: string): string => (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}… (cut, ${text.length} chars)` : text);

/**
 * Evidence as the driver gave it, any JSON value, unless its JSON is over the bound (or is not
 * JSON at all): then the JSON text, cut, stands in for it.
 */
function boundedEvidence(evidence: unknown): JsonValue {
  if (typeof evidence === 'string') return bounded(evidence);
  let json: string | undefined;
  try {
    json = JSON.stringify(evidence);
  } catch {
    json = undefined;
  }
  if (json === undefined) return String(evidence);
  return json.length > MAX_ERROR_TEXT ? bounded(json) : (evidence as JsonValue);
}

/** Evidence as the operator reads it: a string as is, any other value as indented JSON. */
export function evidenceText(evidence: JsonValue): string {
  return typeof evidence === 'string' ? evidence : JSON.stringify(evidence, null, 2);
}

/** A DriverError bound to the driver name used when rendering it. */
export class HubError extends DriverError {
  readonly driver: string;
  /** Kernel code behind it, when it came from the kernel. */
  readonly code?: ErrorCode;
  /** How the call this error ended, as the audit records it (set by the hub where it ends one). */
  outcome?: Outcome;

  constructor(
    driver: string,
    kind: DriverErrorKind,
    message: string,
    options: { hint?: string; evidence?: JsonValue; code?: ErrorCode; outcome?: Outcome } = {},
  ) {
    super(kind, bounded(message), {
      ...options,
      ...(options.hint !== undefined ? { hint: bounded(options.hint) } : {}),
      ...(options.evidence !== undefined ? { evidence: boundedEvidence(options.evidence) } : {}),
    });
    this.name = 'HubError';
    // The driver name comes from the channel someone sent (`<driver>:…`): rendered in every error line.
    this.driver = clipName(driver);
    if (options.code !== undefined) this.code = options.code;
    if (options.outcome !== undefined) this.outcome = options.outcome;
  }

  /** The exact `uplink error [<driver>:<Kind>]: … — hint: …` line. */
  get rendered(): string {
    return renderDriverError(this.driver, this);
  }

  /** Binds a driver-authored DriverError to the channel's driver name. */
  static fromDriverError(channel: string | undefined, error: DriverError): HubError {
    if (error instanceof HubError) return error;
    return new HubError(driverOfChannel(channel), error.kind, error.message, { hint: error.hint, evidence: error.evidence });
  }
}

/**
 * The error that ends a call, carrying how it ended (what its record says): the outcome the hub
 * already knew (a timed-out prompt), else the one its record (`facts`) reads as.
 */
export function ending(err: HubError, facts: OutcomeFacts): HubError {
  err.outcome ??= outcomeOf({ ...facts, ...(err.code ? { error_code: err.code } : {}), error_kind: err.kind });
  return err;
}

/** The hint every "unknown channel/driver" error carries. */
export const LIST_CHANNELS_HINT = 'list channels with the channel_list tool or `uplink channels`';

/**
 * A DriverError, also from another copy of the contract module (a driver bundled separately):
 * recognised by name and kind, since `instanceof` only sees one copy.
 */
export function isDriverError(e: unknown): e is DriverError {
  if (e instanceof DriverError) return true;
  if (!(e instanceof Error) || e.name !== 'DriverError') return false;
  const kind = (e as { kind?: unknown }).kind;
  return typeof kind === 'string' && (DRIVER_ERROR_KINDS as readonly string[]).includes(kind);
}

/** Converts anything thrown into a HubError (unexpected throws get a fixed Upstream message). */
export function toHubError(channel: string | undefined, error: unknown): HubError {
  if (error instanceof HubError) return error;
  if (isDriverError(error)) return HubError.fromDriverError(channel, error);
  return new HubError(driverOfChannel(channel), 'Upstream', 'the driver failed unexpectedly', {
    hint: 'the operator can see the detail in `uplink log`; retry, or run `uplink doctor`',
  });
}

/** Facts needed to turn a kernel error into the agent-facing DriverError. */
export interface KernelErrorContext {
  channel: string;
  op: string;
  code: ErrorCode;
  /** The kernel's wire message (safe: no provider text or instance values). */
  message: string;
  /**
   * What ended it, from the kernel's host snapshot or error: the broker's denial (a HubError) for
   * `policy_denied`, what the provider threw for `provider_failed`.
   */
  cause?: unknown;
  /** The tool or command that lists ops, for hints. */
  constraints?: { provider_id?: string; interaction?: string };
}

/**
 * Maps a kernel error code onto a driver kind. `constraint_unsatisfied` is `Invalid`: the caller
 * asked for a provider/interaction that cannot serve this op, which only the caller can fix.
 */
export function mapKernelError(ctx: KernelErrorContext): HubError {
  const driver = driverOfChannel(ctx.channel);
  // The channel and op as the messages quote them (both were sent by the caller).
  const channel = clipName(ctx.channel);
  const op = clipName(ctx.op);
  const mk = (kind: DriverErrorKind, message: string, hint?: string): HubError => new HubError(driver, kind, message, { hint, code: ctx.code });
  switch (ctx.code) {
    case 'policy_denied':
      if (ctx.cause instanceof HubError) return ctx.cause;
      return mk('Rejected', `${op} on ${channel} was denied by policy`, 'ask the operator to approve it in the Uplink panel');
    case 'input_schema_violation':
      return mk(
        'Invalid',
        `args for ${op} do not match its params_schema: ${ctx.message}`,
        `see the op's params_schema with channel_describe {channel, op: "${op}"}`,
      );
    case 'output_schema_violation':
      return mk(
        'Invalid',
        `the driver's result for ${op} breaks its result_schema: ${ctx.message}`,
        'this is a driver bug; the operator can see it in `uplink log`',
      );
    case 'capability_unavailable':
      return mk('NotFound', `no provider offers ${op} for ${channel}`, `list the channel's ops with channel_describe {channel: "${channel}"}`);
    case 'invocation_not_found':
      return mk('NotFound', ctx.message, 'the invocation is no longer retained; see `uplink log`');
    case 'constraint_unsatisfied': {
      const c = ctx.constraints ?? {};
      const what = [c.provider_id && `provider ${clipName(c.provider_id)}`, c.interaction && `interaction ${c.interaction}`].filter(Boolean).join(' and ');
      return mk(
        'Invalid',
        `${op} is not offered under ${what || 'these constraints'}`,
        'drop the interaction/provider constraint, or pick one listed by channel_describe',
      );
    }
    case 'resource_exhausted':
      return mk('Unavailable', 'the hub has too many invocations in flight', 'wait for running calls to finish and retry');
    case 'provider_failed':
      if (isDriverError(ctx.cause)) return HubError.fromDriverError(ctx.channel, ctx.cause);
      return mk('Upstream', 'the driver failed unexpectedly', 'the operator can see the detail in `uplink log`; retry, or run `uplink doctor`');
    case 'cancelled':
      return mk('Rejected', `${op} on ${channel} was cancelled`, 'retry if it is still wanted');
    case 'invalid_request':
      return mk('Invalid', ctx.message, 'check the channel, op and args');
    case 'duplicate_invocation':
    case 'internal':
      return mk('Upstream', `the hub failed to run ${op}: ${ctx.code}`, 'retry; if it persists run `uplink doctor`');
    default: {
      const never: never = ctx.code;
      return mk('Upstream', `unexpected kernel error ${String(never)}`);
    }
  }
}
