/**
 * The kernel's one error type and the fixed, agent-safe messages it carries. Messages never
 * contain provider-originated text or instance values (docs/kernel.md, guarantee 7): provider detail
 * goes to the operator through `RuntimeOptions.onDiagnostic` instead.
 */
import type { ErrorCode, SoftwareUseErrorWire } from './types';

/**
 * A contract failure: `code` is stable, `message` is safe to show an agent, `retryable` says whether
 * a new invocation may help. Uplink extension: `text` and `hint` keep the message's two parts apart
 * (`message` is `<text> — hint: <hint>`), so a host words its own error without parsing the message.
 */
export class SoftwareUseError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly text: string;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, text: string, options: { hint?: string; retryable?: boolean } | boolean = {}) {
    const { hint, retryable = defaultRetryable(code) } = typeof options === 'boolean' ? { retryable: options } : options;
    super(hint === undefined ? text : `${text} — hint: ${hint}`);
    this.name = 'SoftwareUseError';
    this.code = code;
    this.retryable = retryable;
    this.text = text;
    this.hint = hint;
  }

  /** The wire form (plain JSON, snake_case, no stack). */
  toWire(): SoftwareUseErrorWire {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }

  /** Rebuilds an error from its wire form (e.g. a failed snapshot's `error`). */
  static fromWire(wire: SoftwareUseErrorWire): SoftwareUseError {
    return new SoftwareUseError(wire.code, wire.message, wire.retryable);
  }
}

/** Only capacity is worth retrying as is; every other failure needs a changed request or state. */
function defaultRetryable(code: ErrorCode): boolean {
  switch (code) {
    case 'resource_exhausted':
      return true;
    case 'invalid_request':
    case 'capability_unavailable':
    case 'constraint_unsatisfied':
    case 'policy_denied':
    case 'duplicate_invocation':
    case 'invocation_not_found':
    case 'input_schema_violation':
    case 'output_schema_violation':
    case 'provider_failed':
    case 'cancelled':
    case 'internal':
      return false;
    default: {
      const never: never = code;
      return never;
    }
  }
}

/** A frozen wire error, shared by every invocation that fails the same fixed way (saves heap). */
export function fixedWire(code: ErrorCode, message: string): SoftwareUseErrorWire {
  return Object.freeze({ code, message, retryable: defaultRetryable(code) });
}

/** Provider failures always carry this text; the provider's own message goes to diagnostics. */
export const PROVIDER_FAILED: SoftwareUseErrorWire = fixedWire(
  'provider_failed',
  'the provider failed to complete the invocation — hint: see the operator log for detail; the provider is pinned, so start a new invocation to retry',
);

/** A provider that resolves with something other than `{output}` broke the port contract. */
export const PROVIDER_BAD_RESULT: SoftwareUseErrorWire = fixedWire(
  'provider_failed',
  'the provider returned no valid {output} result — hint: see the operator log; start a new invocation to retry',
);

/** Upper bound for text echoed into a message (a JSON pointer or an operator's reason). */
const MAX_ECHO = 200;

/** Clips text that is allowed into a message so one field cannot flood a wire error. */
export function clip(text: string): string {
  return text.length <= MAX_ECHO ? text : `${text.slice(0, MAX_ECHO)}…`;
}

/** Best-effort text of any thrown value for the operator channel; never throws itself. */
export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    if (typeof value === 'string') return value;
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json;
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return 'unprintable thrown value';
    }
  }
}
