/**
 * The edges' JSON Schema checks: one Draft 2020-12 validator for what crosses an edge (MCP tool
 * arguments, panel calls and events), which checks a payload and never changes it, and one way
 * to say what failed. An error names the JSON pointer and the keyword only, never the offending
 * value (it may be a secret pasted into the wrong field). Op args are the kernel's to validate.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

const ajv = new Ajv2020({ strict: false, allErrors: false });

/** A validator for `schema`, compiled once by its caller. */
export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/** Where the first error is (a JSON pointer), the keyword it fails, and ` (<property>)` when it names one. */
export function firstSchemaError(errors: ErrorObject[] | null | undefined): { where: string; keyword: string; named: string } {
  const e = errors?.[0];
  const params = (e?.params ?? {}) as { additionalProperty?: string; missingProperty?: string };
  const named = e?.keyword === 'additionalProperties' ? params.additionalProperty : e?.keyword === 'required' ? params.missingProperty : undefined;
  return { where: e?.instancePath || '/', keyword: e?.keyword ?? 'schema', named: named === undefined ? '' : ` (${String(named)})` };
}
