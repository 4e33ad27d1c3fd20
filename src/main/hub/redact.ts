/**
 * Keeping sensitive text out of the audit store and approval prompts: fields named by an op's
 * `sensitive_args`, and every string field of args that say `sensitive: true` (tmux `type`).
 */
import type { JsonValue } from '../kernel/types';

/** How a redacted value is shown. */
export function redactedText(value: string): string {
  return `•••• (sensitive, ${value.length} chars)`;
}

/** Whether these args carry sensitive text. */
export function isSensitive(args: JsonValue | undefined, sensitiveArgs: readonly string[] | undefined): boolean {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return false;
  if (args.sensitive === true) return true;
  return (sensitiveArgs ?? []).some((k) => k in args);
}

/** A copy of args with sensitive fields replaced; non-object args are returned as they are. */
export function redactArgs(args: JsonValue | undefined, sensitiveArgs: readonly string[] | undefined): JsonValue | undefined {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args;
  const all = args.sensitive === true;
  const named = new Set(sensitiveArgs ?? []);
  const out: { [key: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(args)) {
    if (named.has(k)) out[k] = typeof v === 'string' ? redactedText(v) : redactedText(JSON.stringify(v));
    else if (all && typeof v === 'string') out[k] = redactedText(v);
    else out[k] = v;
  }
  return out;
}

/** Glob with `*` (any run) and `?` (one char) over the whole string. */
export function globMatch(pattern: string, value: string): boolean {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 's').test(value);
}
