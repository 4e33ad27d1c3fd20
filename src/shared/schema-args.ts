/**
 * The args an op's `params_schema` gives when nobody fills anything in: each top-level property's
 * `default`, and nothing else. The panel prefills its form with them and reads a channel's preview
 * with them (after checking them against the schema: a default alone may not satisfy `required`).
 */
import type { JsonSchema, JsonValue } from './wire';

export function defaultArgs(schema: JsonSchema): Record<string, JsonValue> {
  if (typeof schema !== 'object' || !schema || typeof schema.properties !== 'object' || !schema.properties) return {};
  const out: Record<string, JsonValue> = {};
  for (const [name, prop] of Object.entries(schema.properties as Record<string, unknown>)) {
    const value = prop && typeof prop === 'object' ? (prop as { default?: JsonValue }).default : undefined;
    if (value !== undefined) out[name] = value;
  }
  return out;
}
