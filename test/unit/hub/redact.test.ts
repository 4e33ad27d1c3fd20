/** Sensitive args never leave the hub readable; globs for standing rules. */
import { describe, expect, it } from 'vitest';
import { globMatch, isSensitive, redactArgs } from '../../../src/main/hub/redact';

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

describe('globMatch', () => {
  it('matches * and ? over the whole string, other characters literally', () => {
    expect(globMatch('tmux:*', 'tmux:%3')).toBe(true);
    expect(globMatch('tmux:%?', 'tmux:%3')).toBe(true);
    expect(globMatch('tmux:%?', 'tmux:%13')).toBe(false);
    expect(globMatch('tmux:a.b', 'tmux:axb')).toBe(false);
    expect(globMatch('send', 'send')).toBe(true);
    expect(globMatch('send', 'sender')).toBe(false);
  });
});
