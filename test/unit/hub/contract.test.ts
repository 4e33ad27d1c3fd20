/** The driver contract's error rendering and fail-closed defaults, as exact strings. */
import { describe, expect, it } from 'vitest';
import { DriverError, driverOfChannel, isMutating, renderDriverError } from '../../../src/main/drivers/contract';
import { HubError, toHubError } from '../../../src/main/hub';

describe('renderDriverError', () => {
  it('renders kind, message and hint exactly', () => {
    expect(renderDriverError('tmux', { kind: 'Rejected', message: 'send to own pane', hint: 'pick another pane' })).toBe(
      'uplink error [tmux:Rejected]: send to own pane — hint: pick another pane',
    );
  });

  it('omits the hint part entirely when there is no hint', () => {
    expect(renderDriverError('tmux', { kind: 'NotFound', message: 'no pane %9' })).toBe('uplink error [tmux:NotFound]: no pane %9');
    expect(renderDriverError('tmux', { kind: 'NotFound', message: 'no pane %9', hint: '' })).toBe('uplink error [tmux:NotFound]: no pane %9');
  });

  it('renders every kind', () => {
    for (const kind of ['NotFound', 'Unavailable', 'Rejected', 'Timeout', 'Upstream', 'Invalid'] as const) {
      expect(renderDriverError('desktop', { kind, message: 'm', hint: 'h' })).toBe(`uplink error [desktop:${kind}]: m — hint: h`);
    }
  });

  it('takes the driver name from the channel prefix, core when there is none, even for unknown drivers', () => {
    expect(driverOfChannel('tmux:%3')).toBe('tmux');
    expect(driverOfChannel('desktop:0x3a00007')).toBe('desktop');
    expect(driverOfChannel('nosuchdriver:x:y')).toBe('nosuchdriver');
    expect(driverOfChannel('plain')).toBe('core');
    expect(driverOfChannel(':x')).toBe('core');
    expect(driverOfChannel(undefined)).toBe('core');
  });

  it('an op without mutating is mutating', () => {
    expect(isMutating({})).toBe(true);
    expect(isMutating({ mutating: true })).toBe(true);
    expect(isMutating({ mutating: false })).toBe(false);
  });
});

describe('HubError', () => {
  it('binds a driver error to the channel prefix and renders it', () => {
    const e = HubError.fromDriverError('ghost:1', new DriverError('Timeout', 'slow', { hint: 'wait' }));
    expect(e.rendered).toBe('uplink error [ghost:Timeout]: slow — hint: wait');
  });

  it('a DriverError from another copy of the contract module is recognised by name and kind', () => {
    const foreign = Object.assign(new Error('from a separate bundle'), { name: 'DriverError', kind: 'Rejected', hint: 'h' });
    expect(toHubError('tmux:%1', foreign).rendered).toBe('uplink error [tmux:Rejected]: from a separate bundle — hint: h');
  });

  it('anything else becomes a fixed Upstream line without its text', () => {
    const e = toHubError('tmux:%1', new Error('password=hunter2'));
    expect(e.rendered).toBe(
      'uplink error [tmux:Upstream]: the driver failed unexpectedly — hint: the operator can see the detail in `uplink log`; retry, or run `uplink doctor`',
    );
  });
});

describe('renderDriverError is always one line', () => {
  it('escapes newlines and ESC in the message and hint', () => {
    const line = renderDriverError('tmux', {
      kind: 'NotFound',
      message: 'no channel tmux:x\nuplink error [core:Rejected]: forged',
      hint: 'list \u001b[2J channels\u2028',
    });
    expect(line).toBe('uplink error [tmux:NotFound]: no channel tmux:x\\nuplink error [core:Rejected]: forged — hint: list \\x1b[2J channels\\u2028');
  });
});
