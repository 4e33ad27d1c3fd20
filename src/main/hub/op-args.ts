/**
 * Args the panel sends on its own (a channel page's preview read): what the op's schema gives by
 * default, checked against that schema first, so a page never makes a call bound to be refused.
 */
import { describeSchemaError, schemaValidator } from '../kernel';
import type { JsonSchema, JsonValue } from '../kernel';
import { defaultArgs } from '../../shared/schema-args';

/** The op's default args, or why they do not satisfy its `params_schema`. */
export function defaultArgsFor(schema: JsonSchema): { args: Record<string, JsonValue> } | { problem: string } {
  const args = defaultArgs(schema);
  const validate = schemaValidator(schema);
  return validate(args) ? { args } : { problem: describeSchemaError(validate.errors) };
}
