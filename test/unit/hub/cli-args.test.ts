/** The CLI's argv parser: known flags only. */
import { describe, expect, it } from 'vitest';
import { intFlag, parseArgs } from '../../../src/main/edges/cli/args';

describe('parseArgs', () => {
  it('splits positionals and flags (--x v, --x=v, switches)', () => {
    const a = parseArgs(['invoke', 'tmux:%1', 'read', '{"lines":5}', '--interaction', 'typed', '--provider=uplink/tmux', '--json']);
    expect(a.positionals).toEqual(['invoke', 'tmux:%1', 'read', '{"lines":5}']);
    expect(a.flags.get('interaction')).toBe('typed');
    expect(a.flags.get('provider')).toBe('uplink/tmux');
    expect(a.flags.get('json')).toBe(true);
  });

  it('takes everything after -- as positionals (messages starting with --)', () => {
    expect(parseArgs(['send', 'tmux:%1', '--', '--not-a-flag']).positionals).toEqual(['send', 'tmux:%1', '--not-a-flag']);
  });

  it('refuses unknown flags and missing values', () => {
    expect(() => parseArgs(['channels', '--nope'])).toThrow(/unknown option --nope/);
    expect(() => parseArgs(['serve', '--port'])).toThrow(/--port needs a value/);
    expect(() => intFlag(parseArgs(['serve', '--port', 'x']), 'port')).toThrow(/non-negative integer/);
  });
});
