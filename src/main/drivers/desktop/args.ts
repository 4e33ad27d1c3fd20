/**
 * A small check of op args against the ops' flat params schemas, for callers that reach the
 * driver without the kernel (which validates with ajv first). Enough to turn bad input into
 * `Invalid` before anything is sent to the helper.
 */
import type { JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { OpSpec } from '../contract';

type Prop = { type?: string; enum?: string[]; minimum?: number; maximum?: number; minLength?: number; maxLength?: number };

/** The args as an object, or `Invalid` naming the first problem. */
export function checkArgs(spec: OpSpec, args: JsonValue): Record<string, JsonValue> {
  const value = args ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(spec, 'args must be an object');
  const schema = spec.params_schema as { properties?: Record<string, Prop>; required?: string[] };
  const props = schema.properties ?? {};
  for (const key of schema.required ?? []) if (!(key in value)) throw invalid(spec, `missing ${key}`);
  for (const [key, v] of Object.entries(value)) {
    const p = props[key];
    if (!p) throw invalid(spec, `unknown argument ${key}`);
    if (p.enum && !(typeof v === 'string' && p.enum.includes(v))) throw invalid(spec, `${key} must be one of ${p.enum.join(', ')}`);
    if (p.type === 'string') {
      if (typeof v !== 'string') throw invalid(spec, `${key} must be a string`);
      if (p.minLength !== undefined && v.length < p.minLength) throw invalid(spec, `${key} is too short`);
      if (p.maxLength !== undefined && v.length > p.maxLength) throw invalid(spec, `${key} is too long`);
    }
    if (p.type === 'boolean' && typeof v !== 'boolean') throw invalid(spec, `${key} must be true or false`);
    if (p.type === 'integer') {
      if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(spec, `${key} must be an integer`);
      if (p.minimum !== undefined && v < p.minimum) throw invalid(spec, `${key} must be at least ${p.minimum}`);
      if (p.maximum !== undefined && v > p.maximum) throw invalid(spec, `${key} must be at most ${p.maximum}`);
    }
  }
  return value;
}

function invalid(spec: OpSpec, what: string): DriverError {
  return new DriverError('Invalid', `bad args for ${spec.op}: ${what}`, { hint: `see channel_describe for ${spec.op}'s params` });
}
