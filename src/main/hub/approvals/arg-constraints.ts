/**
 * Argument constraints on session grants and standing rules: a grant or rule with `args` covers a
 * call only when every listed top-level arg holds the exact JSON value given, or, for `{glob}`, is
 * a string matching the glob. Args not listed are free. A sensitive arg can never be constrained:
 * its value would sit in config.json, the audit and the panel in plain text.
 */
import type { JsonValue } from '../../kernel';
import { globMatch } from '../../drivers';
import { HubError } from '../errors';
import type { ArgConstraints } from '../types';
import { canonicalJson, isGlob } from '../../../shared/arg-constraints';

/** What the hub knows of an op when checking constraints on it. */
export interface OpParams {
  driver: string;
  op: string;
  params_schema: unknown;
  sensitive_args?: string[];
}

const MAX_CONSTRAINTS = 16;
const MAX_GLOB = 512;
const MAX_VALUE_JSON = 2000;
const ARG_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
// eslint-disable-next-line no-control-regex -- a glob may hold spaces, never control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

type Obj = { [key: string]: JsonValue };
const asObject = (v: JsonValue | undefined): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? v : undefined);

/**
 * Whether a call's args meet every constraint. `shown` are the args as stored (sensitive ones
 * redacted): an arg redacted in this call meets no constraint, so a grant never vouches for a
 * value nobody can read back.
 */
export function argsMatch(constraints: ArgConstraints | undefined, raw: JsonValue | undefined, shown: JsonValue | undefined): boolean {
  if (!constraints) return true;
  const args = asObject(raw);
  const stored = asObject(shown);
  return Object.entries(constraints).every(([name, c]) => {
    if (!args || !Object.prototype.hasOwnProperty.call(args, name)) return false;
    const value = args[name]!;
    if (!stored || canonicalJson(stored[name]) !== canonicalJson(value)) return false;
    return isGlob(c) ? typeof value === 'string' && globMatch(c.glob, value) : canonicalJson(c) === canonicalJson(value);
  });
}

const invalid = (message: string, hint: string): HubError => new HubError('core', 'Invalid', message, { hint });

function paramsOf(op: OpParams): Record<string, { type?: unknown }> {
  const props = (op.params_schema as { properties?: unknown } | null)?.properties;
  return props && typeof props === 'object' ? (props as Record<string, { type?: unknown }>) : {};
}

/**
 * Checks constraints against the ops a grant or rule covers (`ops`): each name is a parameter of
 * one of them and sensitive in none, each glob is a bounded pattern on a string parameter, each
 * value is bounded. `redacted`: arg names hidden in the request being decided, refused too.
 */
export function checkArgConstraints(constraints: ArgConstraints, ops: readonly OpParams[], redacted: readonly string[] = []): void {
  if (constraints === null || typeof constraints !== 'object' || Array.isArray(constraints))
    throw invalid('args must map arg names to values or {glob}', 'e.g. {"keys": ["Enter"]}');
  const entries = Object.entries(constraints);
  if (entries.length > MAX_CONSTRAINTS) throw invalid(`a scope constrains at most ${MAX_CONSTRAINTS} args, not ${entries.length}`, 'keep the args that matter');
  const covered = ops.map((o) => `${o.driver}:${o.op}`).join(', ') || 'none';
  for (const [name, c] of entries) {
    const shownName = JSON.stringify(name.slice(0, 64));
    if (!ARG_NAME.test(name)) throw invalid(`arg ${shownName} is not a parameter name`, 'use the names shown in the request');
    const having = ops.filter((o) => Object.prototype.hasOwnProperty.call(paramsOf(o), name));
    if (having.length === 0)
      throw invalid(
        `arg ${shownName} is not a parameter of the ops covered (${covered.slice(0, 200)})`,
        'constrain only args the op takes (see its params_schema)',
      );
    if (redacted.includes(name) || ops.some((o) => o.sensitive_args?.includes(name))) {
      throw invalid(
        `arg ${shownName} is sensitive and cannot be constrained`,
        'leave it out: a sensitive value is never written to rules, the audit or the panel',
      );
    }
    if (isGlob(c)) {
      if (c.glob.length === 0 || c.glob.length > MAX_GLOB || CONTROL.test(c.glob)) {
        throw invalid(
          `the glob for ${shownName} must be 1 to ${MAX_GLOB} characters without control characters`,
          'use * and ? for the parts that may vary, e.g. git status*',
        );
      }
      if (having.every((o) => paramsOf(o)[name]?.type !== 'string'))
        throw invalid(`arg ${shownName} is not a string, so a glob cannot match it`, 'give its exact value instead');
    } else {
      let text: string | undefined;
      try {
        text = JSON.stringify(c);
      } catch {
        text = undefined;
      }
      if (text === undefined || text.length > MAX_VALUE_JSON)
        throw invalid(`the value for ${shownName} is not JSON of at most ${MAX_VALUE_JSON} characters`, 'constrain a shorter value, or a string by a glob');
    }
  }
}
