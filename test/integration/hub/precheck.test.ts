/**
 * A driver's precheck decides only when it refuses: Rejected, NotFound or Invalid spare the
 * operator the prompt; a precheck that hangs or is momentarily unavailable proves nothing, so the
 * operator is asked as before (the op checks again when it acts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DriverError } from '../../../src/main/drivers';
import type { JsonValue } from '../../../src/main/kernel';
import { closeHubs, failure, nextPrompt, openHub } from './helpers';

afterEach(closeHubs);

const agent = { kind: 'mcp' as const, name: 'test-agent', session: 's1' };

/** A hub whose driver prechecks with `precheck`, a panel attached; records what the precheck saw. */
function withPrecheck(precheck: () => Promise<void>): { hub: ReturnType<typeof openHub>['hub']; seen: Array<{ addr: string; op: string; args: JsonValue }> } {
  const { hub, driver } = openHub({ driverTimeoutMs: 300 });
  const seen: Array<{ addr: string; op: string; args: JsonValue }> = [];
  driver.precheck = async (addr, op, args) => {
    seen.push({ addr, op, args });
    return precheck();
  };
  hub.attachPanel();
  return { hub, seen };
}

describe('the driver precheck before a prompt', () => {
  it('a refusal reaches the agent as the driver error, without a prompt, and gets the validated args', async () => {
    const { hub, seen } = withPrecheck(() => Promise.reject(new DriverError('Invalid', 'text is too loud', { hint: 'whisper' })));
    const err = await failure(hub.invoke('test:a', 'write', { text: 'HI' }, { agent }));
    expect(err.rendered).toBe('uplink error [test:Invalid]: text is too loud — hint: whisper');
    expect(hub.pendingApprovals()).toEqual([]);
    expect(seen).toEqual([{ addr: 'a', op: 'write', args: { text: 'HI' } }]);
    expect(hub.queryAudit({ op: 'write', state: 'rejected' }).entries[0]).toMatchObject({
      error_kind: 'Invalid',
      message: 'text is too loud',
      hint: 'whisper',
    });
  });

  it('a precheck that never answers is cut off and the operator is asked', async () => {
    const { hub } = withPrecheck(() => new Promise(() => undefined));
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:a', 'write', { text: 'hi' }, { agent });
    const p = await prompt;
    await hub.decide(p.approval_id, { kind: 'once', by: 'op' });
    expect(await call).toEqual({ written: 2 });
  });

  it('an Unavailable precheck does not refuse: the operator is asked', async () => {
    const { hub } = withPrecheck(() => Promise.reject(new DriverError('Unavailable', 'restarting')));
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:a', 'write', { text: 'hi' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'deny', by: 'op' });
    expect((await failure(call)).message).toMatch(/denied by the operator/);
  });
});
