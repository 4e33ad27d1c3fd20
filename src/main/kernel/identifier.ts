/**
 * The sua-sdk identifier grammar: 1–128 chars of lowercase ASCII letters, digits,
 * `.`, `/`, `-`; starts with a letter, ends with a letter or digit, no two separators in a row.
 */

const MAX_IDENTIFIER_LENGTH = 128;

const isLower = (c: number): boolean => c >= 0x61 && c <= 0x7a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isSeparator = (c: number): boolean => c === 0x2e || c === 0x2f || c === 0x2d; // . / -

/**
 * Whether `value` is a valid capability, provider or invocation identifier. A character loop
 * rather than a regular expression: it runs several times for every invocation.
 */
export function isValidIdentifier(value: unknown): value is string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_IDENTIFIER_LENGTH) return false;
  if (!isLower(value.charCodeAt(0))) return false;
  let afterSeparator = false;
  for (let i = 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (isSeparator(c)) {
      if (afterSeparator) return false;
      afterSeparator = true;
    } else if (isLower(c) || isDigit(c)) {
      afterSeparator = false;
    } else {
      return false;
    }
  }
  return !afterSeparator;
}
