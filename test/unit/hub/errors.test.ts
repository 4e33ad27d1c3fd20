/** Kernel error codes map onto driver kinds (what an agent sees for each). */
import { describe, expect, it } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import { HubError, mapKernelError } from '../../../src/main/hub/errors';
import type { ErrorCode } from '../../../src/main/kernel/types';

const base = { channel: 'tmux:%3', op: 'type', message: 'input does not match at JSON pointer "/args/text" (keyword: type)' };

describe('mapKernelError', () => {
  it.each<[ErrorCode, string]>([
    ['policy_denied', 'Rejected'],
    ['input_schema_violation', 'Invalid'],
    ['output_schema_violation', 'Invalid'],
    ['capability_unavailable', 'NotFound'],
    ['invocation_not_found', 'NotFound'],
    ['constraint_unsatisfied', 'Invalid'],
    ['resource_exhausted', 'Unavailable'],
    ['provider_failed', 'Upstream'],
    ['cancelled', 'Rejected'],
    ['invalid_request', 'Invalid'],
    ['duplicate_invocation', 'Upstream'],
    ['internal', 'Upstream'],
  ])('%s → %s, rendered with the channel driver and a hint', (code, kind) => {
    const e = mapKernelError({ ...base, code });
    expect(e.kind).toBe(kind);
    expect(e.driver).toBe('tmux');
    expect(e.rendered.startsWith(`uplink error [tmux:${kind}]: `)).toBe(true);
    expect(e.rendered).toContain(' — hint: ');
  });

  it("policy_denied is the broker's denial itself, carried as the kernel error's cause", () => {
    const denial = new HubError('tmux', 'Rejected', 'the operator denied type on tmux:%3: not now', {
      hint: 'ask first',
      code: 'policy_denied',
      outcome: 'denied',
    });
    const e = mapKernelError({ ...base, code: 'policy_denied', cause: denial });
    expect(e).toBe(denial);
    expect(e.rendered).toBe('uplink error [tmux:Rejected]: the operator denied type on tmux:%3: not now — hint: ask first');
  });

  it('policy_denied without a cause says the policy denied it', () => {
    expect(mapKernelError({ ...base, code: 'policy_denied' }).kind).toBe('Rejected');
  });

  it('schema violations name the pointer and keyword', () => {
    const e = mapKernelError({ ...base, code: 'input_schema_violation' });
    expect(e.message).toContain('/args/text');
    expect(e.message).toContain('keyword: type');
  });

  it("provider_failed keeps the driver's own DriverError (kind, message, hint)", () => {
    const e = mapKernelError({
      ...base,
      code: 'provider_failed',
      cause: new DriverError('Rejected', 'read the pane first', { hint: 'call read', evidence: 'x' }),
    });
    expect(e.rendered).toBe('uplink error [tmux:Rejected]: read the pane first — hint: call read');
    expect(e.evidence).toBe('x');
  });

  it('constraint_unsatisfied names the constraints', () => {
    const e = mapKernelError({ ...base, code: 'constraint_unsatisfied', constraints: { interaction: 'visual_ui', provider_id: 'uplink/tmux' } });
    expect(e.message).toBe('type is not offered under provider uplink/tmux and interaction visual_ui');
  });
});
