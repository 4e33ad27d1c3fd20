/**
 * The sua-sdk identifier grammar (SPEC §2): 1–128 chars of lowercase ASCII letters, digits,
 * `.`, `/`, `-`; starts with a letter, ends with a letter or digit, no two separators in a row.
 */

const MAX_IDENTIFIER_LENGTH = 128;
// Each group is one optional separator followed by one letter or digit, so the match is linear
// and the grammar's "ends with a letter or digit" and "no two separators" fall out of it.
const IDENTIFIER = /^[a-z](?:[./-]?[a-z0-9])*$/;

/** Whether `value` is a valid capability, provider or invocation identifier. */
export function isValidIdentifier(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_IDENTIFIER_LENGTH && IDENTIFIER.test(value);
}
