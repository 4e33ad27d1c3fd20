/**
 * Keeping sensitive text out of the audit store: fields named by an op's `sensitive_args`, and the
 * text fields of args that carry a `sensitive` flag (tmux `type`). Sensitive means "not stored",
 * never "not shown to the approver": the raw args stay in memory for the prompt's Reveal.
 */
import type { JsonValue } from '../../kernel';
import { redactedText } from '../../../shared/redaction';

/**
 * Whether args carry a `sensitive` flag. Any value but exactly `false` counts: a `"true"` or `1`
 * is refused by the op's schema, but only after the request is recorded, so storage fails closed.
 */
function flagged(args: { [key: string]: JsonValue }): boolean {
  return Object.prototype.hasOwnProperty.call(args, 'sensitive') && args.sensitive !== false;
}

/** Whether these args carry sensitive text. */
export function isSensitive(args: JsonValue | undefined, sensitiveArgs: readonly string[] | undefined): boolean {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return false;
  if (flagged(args)) return true;
  return (sensitiveArgs ?? []).some((k) => k in args);
}

/** A copy of args with sensitive fields replaced; non-object args are returned as they are. */
export function redactArgs(args: JsonValue | undefined, sensitiveArgs: readonly string[] | undefined): JsonValue | undefined {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args;
  const all = flagged(args);
  const named = new Set(sensitiveArgs ?? []);
  const out: { [key: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(args)) {
    // Under the flag, anything that can hold text is hidden (a list of keys spells a password too);
    // booleans, numbers and null (enter, timeouts) stay for the operator.
    if (named.has(k) || (all && v !== null && (typeof v === 'string' || typeof v === 'object')))
      out[k] = redactedText(typeof v === 'string' ? v : JSON.stringify(v));
    else out[k] = v;
  }
  return out;
}
