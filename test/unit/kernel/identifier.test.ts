import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isValidIdentifier } from '../../../src/main/kernel';

/** A direct transcription of the sua-sdk's rules, to compare the regex against. */
function reference(value: string): boolean {
  const sep = (c: string): boolean => c === '.' || c === '/' || c === '-';
  const lower = (c: string): boolean => c >= 'a' && c <= 'z';
  const digit = (c: string): boolean => c >= '0' && c <= '9';
  if (value.length === 0 || value.length > 128) return false;
  if (!lower(value[0]!)) return false;
  if (!(lower(value.at(-1)!) || digit(value.at(-1)!))) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (!(lower(c) || digit(c) || sep(c))) return false;
    if (i > 0 && sep(c) && sep(value[i - 1]!)) return false;
  }
  return true;
}

describe('identifier grammar', () => {
  it('accepts the examples of the contract', () => {
    for (const id of ['software.window.observe', 'dcc/cua-windows', 'invocation-2026-08-14', 'a', 'a1', 'tmux.send']) {
      expect(isValidIdentifier(id), id).toBe(true);
    }
  });

  it('rejects the counter-examples of the contract', () => {
    for (const id of ['', 'Upper', '2fast', 'ends-', 'two..dots', 'under_score', '.lead', 'a./b', 'a b', 'é']) {
      expect(isValidIdentifier(id), id).toBe(false);
    }
  });

  it('allows 128 characters and refuses 129', () => {
    expect(isValidIdentifier('a'.repeat(128))).toBe(true);
    expect(isValidIdentifier('a'.repeat(129))).toBe(false);
  });

  it('refuses non-strings', () => {
    for (const v of [undefined, null, 1, {}, ['a']]) expect(isValidIdentifier(v)).toBe(false);
  });

  it('agrees with the reference rules on arbitrary strings', () => {
    const alphabet = fc.constantFrom(...'abcxyz0189./-_A '.split(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 140 }), fc.string()), (s) => isValidIdentifier(s) === reference(s)),
      { numRuns: 2000 },
    );
  });
});
