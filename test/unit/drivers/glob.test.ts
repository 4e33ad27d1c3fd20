/** The semantics of the one glob matcher behind every allow, deny and rule list. */
import { describe, expect, it } from 'vitest';
import { globMatch } from '../../../src/main/drivers/glob';

// [pattern, name, matches]
const TABLE: Array<[string, string, boolean]> = [
  // whole name, case-sensitive, no normalisation
  ['codex', 'codex', true],
  ['codex', 'codex2', false],
  ['codex', 'Codex', false],
  ['send', 'sender', false],
  ['é', 'e\u0301', false],
  // * is any run, including none
  ['*', '', true],
  ['lab-*', 'lab-1', true],
  ['a*b*c', 'aXXbYYc', true],
  ['tmux:*', 'tmux:%3', true],
  ['*Password*', 'KeePass Password Safe', true],
  ['*x*', 'a\nx', true],
  // ? is exactly one code point
  ['%?', '%3', true],
  ['%?', '%33', false],
  ['%?', '%', false],
  ['a?b', 'a😀b', true],
  ['a??b', 'a😀b', false],
  ['?', 'é', true],
  ['?', '字', true],
  // non-ASCII and emoji literals
  ['日本*', '日本語', true],
  ['😀 *', '😀 build', true],
  ['*🔒', 'vault 🔒', true],
  ['E*', 'é', false],
  // names are not paths: / is an ordinary character
  ['*', 'a/b/c', true],
  ['a*b', 'a/x/b', true],
  ['a?b', 'a/b', true],
  ['*/secret', 'home/user/secret', true],
  ['a/b', 'a/b', true],
  ['a/b', 'a-b', false],
  ['*Mozilla Firefox', 'https://x/y — Mozilla Firefox', true],
  // dots are ordinary too, leading or not, and never a wildcard
  ['a.b', 'axb', false],
  ['*', '.', true],
  ['*', '..', true],
  ['*', '.hidden', true],
  ['.*', '.hidden', true],
  ['?bashrc', '.bashrc', true],
  ['*.txt', '.txt', true],
  // no brace, bracket, extglob, negation, globstar, escape or regex syntax: all literal
  ['{a,b}', 'a', false],
  ['{a,b}', '{a,b}', true],
  ['[Private]*', 'P', false],
  ['*[Private Browsing]', 'Mozilla [Private Browsing]', true],
  ['!x', 'y', false],
  ['!x', '!x', true],
  ['@(x)', 'x', false],
  ['+(a)', '+(a)', true],
  ['**', 'a/b', true],
  ['a|b', 'a', false],
  ['x{1,2}', 'xx', false],
  ['(x)', 'x', false],
  ['^$', '^$', true],
  ['a\\*', 'a*', false],
  ['a\\*', 'a\\zz', true],
  ['C:\\Users\\*', 'C:\\Users\\me', true],
  ['\\b', 'b', false],
];

describe('globMatch', () => {
  it.each(TABLE)('%j against %j is %s', (pattern, name, expected) => {
    expect(globMatch(pattern, name)).toBe(expected);
  });

  it('gives the same answer from its cache', () => {
    for (const [pattern, name, expected] of TABLE) expect(globMatch(pattern, name)).toBe(expected);
  });
});

describe('a hostile name cannot stall a deny list', () => {
  // A regex-based matcher backtracks exponentially in the number of stars: this pattern against
  // these 2,000 characters would take hours. Names come from panes and windows an agent controls.
  it('many stars against a long name that almost matches is answered at once', () => {
    const name = 'a'.repeat(2000);
    expect(globMatch('*a*a*a*a*a*a*a*a*b', name)).toBe(false);
    expect(globMatch('*a*a*a*a*a*a*a*a*a', name)).toBe(true);
  }, 2000);
});
