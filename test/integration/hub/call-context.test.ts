/**
 * Who is asking travels with the call as its context: the driver and the policy act on the
 * authenticated agent, never on the name a client declares — even a name equal to a built-in
 * identity or to the agent a standing rule names.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InvokeContext } from '../../../src/main/drivers';
import type { AgentIdentity } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';
import { closeHubs, failure, openHub } from './helpers';

afterEach(closeHubs);

/** An agent authenticated as `builder` whose client declares itself as someone else. */
const impostor = (declared: string): AgentIdentity => ({ kind: 'mcp', agent_id: 'builder', name: declared, session: 's1' });

describe('the call context', () => {
  it("gives the driver the authenticated agent's id, on invoke and on precheck, never the declared name", async () => {
    const driver = createTestDriver();
    const prechecked: Array<InvokeContext | undefined> = [];
    driver.precheck = async (_addr, _op, _args, ctx) => {
      prechecked.push(ctx);
    };
    const { hub } = openHub({ driver });
    await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent: impostor('operator') });
    expect(driver.state.invoked.at(-1)).toMatchObject({ op: 'echo', agent: 'builder' });
    hub.attachPanel();
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: impostor('uplink-cli') });
    await expect.poll(() => hub.pendingApprovals().length).toBe(1);
    expect(prechecked.at(-1)?.agent).toBe('builder');
    // The prompt shows both: who authenticated, and what the client declared (as declared).
    expect(hub.pendingApprovals()[0]!.agent).toMatchObject({ agent_id: 'builder', name: 'uplink-cli' });
    await hub.decide(hub.pendingApprovals()[0]!.approval_id, { kind: 'once', by: 'alice' });
    await call;
    expect(driver.state.invoked.at(-1)).toMatchObject({ op: 'write', agent: 'builder' });
  });

  it('a declared name equal to a built-in identity gets no human authority from the policy', async () => {
    const { hub } = openHub({ denyWithoutPanel: true });
    // No panel: a mutating call from an agent is denied at once; from a human at the CLI it would run.
    const err = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: impostor('uplink-cli') }));
    expect(err.kind).toBe('Rejected');
    expect(err.message).toContain('needs operator approval');
  });

  it("a standing rule for an agent matches that agent's credential, not a client declaring its name", async () => {
    const dir = tmpDataDir();
    writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules: [{ id: 'r1', channel: 'test:*', op: 'write', agent: 'deployer' }] } });
    const { hub } = openHub({ dir });
    const denied = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: impostor('deployer') }));
    expect(denied.kind).toBe('Rejected');
    const deployer: AgentIdentity = { kind: 'mcp', agent_id: 'deployer', name: 'anything', session: 's2' };
    expect(await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: deployer })).toEqual({ written: 1 });
  });
});

describe('a denial is a value', () => {
  it("an agent hears why it was denied even when the denial's decision row cannot be written", async () => {
    const { AuditStore } = await import('../../../src/main/hub/audit/store');
    const { hub } = openHub({ denyWithoutPanel: true });
    const appendMany = AuditStore.prototype.appendMany;
    const spy = vi.spyOn(AuditStore.prototype, 'appendMany').mockImplementation(function (this: InstanceType<typeof AuditStore>, ...args) {
      if (args[1] === true) throw new Error('database is locked');
      return appendMany.apply(this, args);
    });
    try {
      const err = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: impostor('claude') }));
      expect(err.message).toContain('needs operator approval and no Uplink panel is open');
    } finally {
      spy.mockRestore();
    }
  });
});
