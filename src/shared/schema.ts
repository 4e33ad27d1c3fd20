/**
 * How a wire shape is declared here: once, with TypeBox. The declaration is a plain JSON Schema
 * (Draft 2020-12: ajv checks it where a payload is received) and `Static<typeof X>` is its
 * TypeScript type, so the two cannot drift. By convention a shape's schema and its type share
 * one name: `import type { X }` takes the type, `import { X }` the schema as well.
 */
import { Type } from '@sinclair/typebox';
import type { ObjectOptions, SchemaOptions, TObject, TProperties, TUnsafe } from '@sinclair/typebox';

/**
 * A string from a closed list, as `{type: 'string', enum: [...]}` rather than TypeBox's union of
 * literals: an error then names the keyword `enum`, and a reader of the schema (the audit store's
 * columns) sees at once that the value is short.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A closed object: a receiver refuses any property it does not list (a request, a fleet message). */
export function Closed<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/**
 * `value` with only the properties `schema` declares (nested objects likewise), undefined and null
 * dropped: what reaches a wire is exactly the declared shape, never a live object's extra fields.
 */
export function pickSchema<T>(schema: { properties: Record<string, unknown> }, value: object): T {
  return pickProperties(schema.properties, value) as T;
}

type PropertyList = Array<{ name: string; nested: Record<string, unknown> | undefined }>;
/** Each schema's property list, read once: a fleet hub picks every record it sends and receives. */
const propertyLists = new WeakMap<Record<string, unknown>, PropertyList>();

function pickProperties(properties: Record<string, unknown>, value: object): Record<string, unknown> {
  let list = propertyLists.get(properties);
  if (!list) {
    list = Object.entries(properties).map(([name, s]) => ({ name, nested: (s as { properties?: Record<string, unknown> }).properties }));
    propertyLists.set(properties, list);
  }
  const out: Record<string, unknown> = {};
  for (const { name, nested } of list) {
    const v = (value as Record<string, unknown>)[name];
    if (v === undefined || v === null) continue;
    out[name] = nested && typeof v === 'object' && !Array.isArray(v) ? pickProperties(nested, v) : v;
  }
  return out;
}
