import { describe, expect, it } from 'vitest';
import { localChannel, parseChannelAddress } from '../../../src/shared/channel-address';

describe('channel addresses', () => {
  it('parses a local address into driver and addr', () => {
    expect(parseChannelAddress('tmux:%3')).toEqual({ channel: 'tmux:%3', driver: 'tmux', addr: '%3' });
    expect(parseChannelAddress('desktop:0x3a00007')).toMatchObject({ driver: 'desktop', addr: '0x3a00007' });
  });

  it('keeps everything after the first colon as the addr, slashes and colons included', () => {
    expect(parseChannelAddress('tmux:a/b:c')).toEqual({ channel: 'tmux:a/b:c', driver: 'tmux', addr: 'a/b:c' });
  });

  it("parses a fleet member's address", () => {
    const a = parseChannelAddress('buildbox/tmux:%3')!;
    expect(a).toEqual({ channel: 'buildbox/tmux:%3', hub: 'buildbox', driver: 'tmux', addr: '%3' });
    expect(localChannel(a)).toBe('tmux:%3');
  });

  it('refuses what is not an address', () => {
    for (const bad of ['', 'tmux', ':%3', 'tmux:', 'hub/:x', 'a/b/tmux:%1', 42, undefined]) expect(parseChannelAddress(bad)).toBeUndefined();
  });
});
