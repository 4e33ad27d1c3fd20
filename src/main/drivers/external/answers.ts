/**
 * What the host accepts from a driver: its handshake and its answers, each checked against its
 * schema in ../protocol-schemas before the hub sees it. The checking is the hub's to supply (the
 * kernel's validator, as a `SchemaCheck`): a driver takes only types from the kernel, never runs it.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { JsonSchema } from '../../kernel';
import { DriverError } from '../contract';

/**
 * Compiles `schema` once into a check of values: `undefined` when a value conforms, else its first
 * error in words (the hub's: `schemaValidator` and `describeSchemaError` of the kernel).
 */
export type SchemaCheck = (schema: JsonSchema) => (value: unknown) => string | undefined;

export const CHECK_HINT = 'check it with `uplink driver check -- <its command>`';

/** The checks one host makes, each schema compiled on first use. */
export class AnswerChecks {
  readonly #check: SchemaCheck;
  readonly #compiled = new Map<TSchema, (value: unknown) => string | undefined>();

  constructor(check: SchemaCheck) {
    this.#check = check;
  }

  /** Why `value` is not what `schema` describes, or `undefined` when it is. */
  problem(schema: TSchema, value: unknown): string | undefined {
    let check = this.#compiled.get(schema);
    if (!check) {
      check = this.#check(schema as JsonSchema);
      this.#compiled.set(schema, check);
    }
    return check(value);
  }

  /**
   * `value` as `schema` describes it, or an Upstream error saying that driver `id` answered `method`
   * with something other than `what`, and where it differs.
   */
  expect<T extends TSchema>(schema: T, value: unknown, id: string, method: string, what: string): Static<T> {
    const problem = this.problem(schema, value);
    if (problem !== undefined)
      throw new DriverError('Upstream', `${id} answered ${method} with something other than ${what}: ${problem}`, { hint: CHECK_HINT });
    return value as Static<T>;
  }
}
