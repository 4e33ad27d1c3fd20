/**
 * Argument constraints as the hub stores them and the panel shows them: per top-level arg, an
 * exact JSON value or `{glob: "<pattern>"}` for a string; and what a rule or grant covers, in
 * words. One wording for the audit and the panel.
 */
import { Type } from '@sinclair/typebox';
import type { JsonValue } from './wire';

export type ArgConstraint = JsonValue | { glob: string };
export type ArgConstraints = Record<string, ArgConstraint>;
/** Bounds only: the hub checks the names against the ops, and refuses sensitive ones. */
export const ArgConstraints = Type.Unsafe<ArgConstraints>({ type: 'object', maxProperties: 16, propertyNames: { maxLength: 64 }, additionalProperties: {} });

/** `{glob: "<pattern>"}`: the only object shape that is a pattern rather than an exact value. */
export function isGlob(c: ArgConstraint): c is { glob: string } {
  return typeof c === 'object' && c !== null && !Array.isArray(c) && Object.keys(c).length === 1 && typeof (c as { glob?: unknown }).glob === 'string';
}

/** JSON with object keys sorted at every depth: equal values, equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Constraints in words: `keys = ["Enter"], text like "git status*"`; empty when there are none. */
export function describeArgs(constraints: ArgConstraints | undefined): string {
  if (!constraints) return '';
  return Object.entries(constraints)
    .map(([name, c]) => (isGlob(c) ? `${name} like ${JSON.stringify(c.glob)}` : `${name} = ${canonicalJson(c)}`))
    .join(', ');
}

/**
 * What a standing rule, session grant or proposed scope covers, in words: `send, keys on
 * tmux:codex with keys = ["Enter"] for agent builder`; `agent` absent is any agent.
 */
export function scopeInWords(scope: { ops: readonly string[]; channel: string; args?: ArgConstraints | undefined; agent?: string | undefined }): string {
  const args = describeArgs(scope.args);
  return `${scope.ops.join(', ')} on ${scope.channel}${args ? ` with ${args}` : ''} for ${scope.agent === undefined ? 'any agent' : `agent ${scope.agent}`}`;
}
