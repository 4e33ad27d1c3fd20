/** Sensitive args never leave the hub readable. */
import { describe, expect, it } from 'vitest';
import { isSensitive, redactArgs } from '../../../src/main/hub/audit/redact';

describe('redaction', () => {
  it('redacts fields named by sensitive_args', () => {
    expect(redactArgs({ user: 'bob', password: 'hunter2' }, ['password'])).toEqual({ user: 'bob', password: '•••• (sensitive, 7 chars)' });
  });

  it('redacts every string field when the args say sensitive: true (tmux type)', () => {
    expect(redactArgs({ text: 'secret', enter: true, sensitive: true }, [])).toEqual({ text: '•••• (sensitive, 6 chars)', enter: true, sensitive: true });
    expect(isSensitive({ text: 'a', sensitive: true }, [])).toBe(true);
    expect(isSensitive({ text: 'a' }, [])).toBe(false);
    expect(isSensitive({ password: 'a' }, ['password'])).toBe(true);
  });

  it('leaves other args as they are', () => {
    expect(redactArgs({ lines: 5 }, undefined)).toEqual({ lines: 5 });
    expect(redactArgs(undefined, ['x'])).toBeUndefined();
  });
});

describe('redaction fails closed', () => {
  it('any sensitive flag but exactly false redacts every field that can hold text', () => {
    for (const flag of ['true', 1, {}, null, 'false']) {
      expect(isSensitive({ text: 'secret', sensitive: flag }, [])).toBe(true);
      expect(redactArgs({ text: 'secret', keys: ['h', 'i'], enter: true, sensitive: flag }, [])).toMatchObject({
        text: '•••• (sensitive, 6 chars)',
        keys: '•••• (sensitive, 9 chars)',
        enter: true,
      });
    }
    expect(isSensitive({ text: 'a', sensitive: false }, [])).toBe(false);
    expect(redactArgs({ text: 'a', sensitive: false }, [])).toEqual({ text: 'a', sensitive: false });
  });

  it("the placeholder counts the secret's characters, not UTF-16 units", () => {
    expect(redactArgs({ text: 'pässwörd🔑', sensitive: true }, [])).toEqual({ text: '•••• (sensitive, 9 chars)', sensitive: true });
  });
});
