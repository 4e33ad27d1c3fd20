import { describe, expect, it } from 'vitest';
import { clipName } from '../../../src/shared/escape';

describe('clipName', () => {
  it('keeps a name of up to 64 characters and cuts a longer one to 64 and an ellipsis', () => {
    expect(clipName('tmux:%3')).toBe('tmux:%3');
    expect(clipName('a'.repeat(64))).toBe('a'.repeat(64));
    expect(clipName('a'.repeat(2 * 1024 * 1024))).toBe(`${'a'.repeat(64)}…`);
    expect(clipName('abcdef', 3)).toBe('abc…');
  });

  it('never splits a surrogate pair, and shows what is not a string as text', () => {
    expect(clipName(`${'a'.repeat(63)}😀😀`)).toBe(`${'a'.repeat(63)}…`);
    expect(clipName(undefined)).toBe('undefined');
    expect(clipName(42)).toBe('42');
  });
});
