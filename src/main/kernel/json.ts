/** Small JSON helpers: a fast "is this plain JSON" check, canonical text and deep freezing. */
import type { JsonValue } from './types';

/** JSON nesting beyond this is refused: it only ever shows up as an attack or a cycle. */
const MAX_DEPTH = 256;

/** Whether `value` is plain JSON (no undefined, functions, symbols, bigints, NaN, cycles, class instances). */
export function isJsonValue(value: unknown): value is JsonValue {
  try {
    return jsonOk(value, 0);
  } catch {
    return false; // a throwing getter or proxy trap: not plain JSON
  }
}

function jsonOk(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!jsonOk(value[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key in value) {
        if (!jsonOk((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false; // undefined, function, symbol, bigint
  }
}

/** What `jsonCopy` returns for a value that is not plain JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/**
 * A deep copy of `value` if it is plain JSON (same rules as `isJsonValue`), else `NOT_JSON`.
 * Every property is read exactly once, so what the runtime validates is exactly what it keeps and
 * hands on: a caller that mutates its object later, a getter that answers differently on a second
 * read or a proxy trap cannot slip an unvalidated value past the schema check. Never throws.
 */
export function jsonCopy(value: unknown): JsonValue | typeof NOT_JSON {
  try {
    return copy(value, 0);
  } catch {
    return NOT_JSON; // a throwing getter or proxy trap: not plain JSON
  }
}

function copy(value: unknown, depth: number): JsonValue | typeof NOT_JSON {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : NOT_JSON;
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_DEPTH) return NOT_JSON;
      if (Array.isArray(value)) {
        const length = value.length;
        const out: JsonValue[] = [];
        for (let i = 0; i < length; i++) {
          const item = copy(value[i], depth + 1);
          if (item === NOT_JSON) return NOT_JSON;
          out.push(item);
        }
        return out;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return NOT_JSON;
      const out: { [key: string]: JsonValue } = {};
      for (const key in value) {
        const item = copy((value as Record<string, unknown>)[key], depth + 1);
        if (item === NOT_JSON) return NOT_JSON;
        // An own "__proto__" key (JSON.parse makes them) must stay data, not become a prototype.
        if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
        else out[key] = item;
      }
      return out;
    }
    default:
      return NOT_JSON; // undefined, function, symbol, bigint
  }
}

/**
 * Canonical JSON text (object keys sorted, no whitespace), so two specs compare equal whatever
 * their key order. Throws a plain Error on anything that is not JSON.
 */
export function canonicalJson(value: unknown): string {
  if (!isJsonValue(value)) throw new Error('value is not plain JSON');
  return canonical(value);
}

function canonical(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(',')}}`;
}

/** A deep, frozen copy of a JSON value (the caller has checked it is JSON). */
export function frozenCopy<T extends JsonValue | { [key: string]: unknown } | boolean>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}
