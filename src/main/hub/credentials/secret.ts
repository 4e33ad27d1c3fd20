/** Constant-time comparison of secrets. A leaf module: the CLI's fast path imports it too. */
import { timingSafeEqual } from 'node:crypto';

/** Whether `given` equals `expected` (the token, the operator key, a session key), in constant time. */
export function secretEquals(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || expected.length === 0) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
