import { describe, expect, it } from 'vitest';
import { argsMatch } from '../../../src/main/hub/approvals/arg-constraints';

describe('whether a call meets arg constraints', () => {
  const meets = (constraints: Parameters<typeof argsMatch>[0], args: object, shown: object = args) => argsMatch(constraints, args as never, shown as never);

  it('an exact value is compared as JSON, whatever the key order', () => {
    expect(meets({ keys: ['Enter'] }, { keys: ['Enter'], n: 2 })).toBe(true);
    expect(meets({ keys: ['Enter'] }, { keys: ['Enter', 'Enter'] })).toBe(false);
    expect(meets({ at: { x: 1, y: 2 } }, { at: { y: 2, x: 1 } })).toBe(true);
  });

  it('a glob matches strings only, as a whole', () => {
    expect(meets({ text: { glob: 'git status*' } }, { text: 'git status -s' })).toBe(true);
    expect(meets({ text: { glob: 'git status*' } }, { text: 'x git status' })).toBe(false);
    expect(meets({ n: { glob: '*' } }, { n: 3 })).toBe(false);
  });

  it('a constrained arg that is absent, or redacted in this call, meets nothing', () => {
    expect(meets({ enter: false }, {})).toBe(false);
    expect(meets({ text: { glob: '*' } }, { text: 'pw' }, { text: '•••• (sensitive, 2 chars)' })).toBe(false);
    expect(meets(undefined, {})).toBe(true);
  });
});
