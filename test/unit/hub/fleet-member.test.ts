/**
 * A fleet member decides, method by method, what a name of another hub (`<hub>/<channel>`) means:
 * sent to that hub, refused where only that hub can act, or (own prefix) a local name. Nothing of
 * another hub reaches this hub's drivers by a method the fleet forgot. The member here never
 * connects (its fleet section names no credentials), which is also how it behaves until it has.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { joinFleet } from '../../../src/main/hub/fleet';
import type { FleetHub } from '../../../src/main/hub/fleet';
import type { AgentIdentity, HubError } from '../../../src/main/hub';
import { createFakeHub } from '../panel/fake-hub';
import type { FakeHub } from '../panel/fake-hub';

const operator: AgentIdentity = { kind: 'panel', agent_id: 'operator', name: 'operator', user: 'alice' };
const agent: AgentIdentity = { kind: 'mcp', agent_id: 'claude', name: 'claude-code' };
const SHA = 'a'.repeat(64);

const failure = (p: Promise<unknown>): Promise<HubError> =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as HubError,
  );

const open: FleetHub[] = [];
function member(): { core: FakeHub; hub: FleetHub } {
  const core = createFakeHub();
  const hub = joinFleet(core, { url: 'nats://127.0.0.1:1', name: 'a' });
  open.push(hub);
  return { core, hub };
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

describe('a fleet member', () => {
  it('refuses to set the tier of another hub’s channel, which never reaches this hub’s drivers', async () => {
    const { core, hub } = member();
    const setTier = vi.spyOn(core, 'setTier');
    const err = await failure(hub.setTier('b/tmux:%3', 'pilot', operator));
    expect(err.rendered).toBe(
      "uplink error [fleet:Invalid]: channel b/tmux:%3 is hub b's: a tier is set by a person at the hub that owns the channel — hint: set it on hub b's own panel, or with `uplink tier` on that host",
    );
    expect(setTier).not.toHaveBeenCalled();
    // Its own name is just a longer way to say a local channel.
    await hub.setTier('a/tmux:%1', 'pilot', operator);
    await hub.setTier('tmux:%1', 'pilot', operator);
    expect(setTier.mock.calls.map((c) => c[0])).toEqual(['tmux:%1', 'tmux:%1']);
  });

  it('refuses another hub’s name wherever only that hub can act: rules, recv, external drivers, provider selection', async () => {
    const { core, hub } = member();
    const spies = (['updateRule', 'recv', 'driverTrace', 'trustDriver', 'restartDriver', 'explainSelection'] as const).map((m) => vi.spyOn(core, m));
    const recorded = vi.spyOn(core, 'recordRejected');
    const refusals = [
      await failure(hub.updateRule('r1', { channel: 'b/tmux:build-*', ops: ['send'] }, 'alice')),
      await failure(hub.recv(undefined, { agent, driver: 'b/tmux' })),
      await failure((async () => hub.driverTrace('b/acme'))()),
      await failure(hub.trustDriver('b/acme', SHA, 'alice')),
      await failure(hub.restartDriver('b/acme', 'alice')),
      await failure(hub.explainSelection('b/tmux.send')),
    ];
    expect(refusals.map((e) => e.rendered)).toEqual([
      "uplink error [fleet:Invalid]: channel b/tmux:build-* is hub b's: this hub's rules decide its own channels' calls — hint: write the rule on hub b's own panel, where its calls are decided",
      "uplink error [fleet:Invalid]: driver b/tmux is hub b's: recv reads the messages of this hub's own drivers — hint: read them on hub b; its channels take send here as <hub>/<channel>",
      "uplink error [fleet:Invalid]: driver b/acme is hub b's: an external driver is traced on the hub that runs it — hint: open hub b's own panel",
      "uplink error [fleet:Invalid]: driver b/acme is hub b's: an external driver is trusted on the hub that runs it — hint: open hub b's own panel",
      "uplink error [fleet:Invalid]: driver b/acme is hub b's: an external driver is restarted on the hub that runs it — hint: open hub b's own panel",
      "uplink error [fleet:Invalid]: capability b/tmux.send is hub b's: each hub's own kernel selects the providers of its calls — hint: ask hub b's own panel",
    ]);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    // An agent's refused recv is on this hub's record, like any refused request.
    expect(recorded).toHaveBeenCalledWith({ channel: 'b/tmux:*', op: 'recv', agent }, refusals[1]);
  });

  it('takes its own prefix off, and leaves a provider id’s slash alone', async () => {
    const { core, hub } = member();
    const updateRule = vi.spyOn(core, 'updateRule');
    const recv = vi.spyOn(core, 'recv');
    const explain = vi.spyOn(core, 'explainSelection');
    const invoke = vi.spyOn(core, 'invoke');
    core.rules.push({ id: 'r1', channel: 'tmux:codex', op: 'send', uses: 0, proposed: false, digest: '0'.repeat(64) });
    await hub.updateRule('r1', { channel: 'a/tmux:build-*', ops: ['send'] }, 'alice');
    await hub.recv(3, { agent, driver: 'a/tmux' });
    await hub.explainSelection('tmux.send', { provider_id: 'uplink/tmux' });
    expect(await hub.invoke('a/tmux:%1', 'read', { lines: 2 }, { agent })).toEqual({ op: 'read', args: { lines: 2 } });
    expect(updateRule.mock.calls[0]?.[1]).toEqual({ channel: 'tmux:build-*', ops: ['send'] });
    expect(recv.mock.calls[0]?.[1]).toMatchObject({ driver: 'tmux' });
    expect(explain.mock.calls[0]?.slice(0, 2)).toEqual(['tmux.send', { provider_id: 'uplink/tmux' }]);
    expect(invoke.mock.calls[0]?.[0]).toBe('tmux:%1');
    expect((await hub.describe('a/tmux:%1')).channel.channel).toBe('tmux:%1');
  });

  it('sends another hub’s calls and prompts to that hub, failing at once while it is out of reach', async () => {
    const { core, hub } = member();
    const local = (['invoke', 'send', 'describe', 'ops', 'lookAt', 'decide', 'revealApprovalArgs'] as const).map((m) => vi.spyOn(core, m));
    const recorded = vi.spyOn(core, 'recordRejected');
    const call = await failure(hub.invoke('b/tmux:%3', 'read', {}, { agent }));
    expect(call.rendered).toMatch(/^uplink error \[fleet:Unavailable\]: hub b cannot be reached: the fleet's credentials cannot be used: .* — hint: /);
    expect(recorded).toHaveBeenCalledWith({ channel: 'b/tmux:%3', op: 'read', agent }, call);
    expect((await failure(hub.send('b/tmux:%3', { message: 'hi' }, { agent }))).kind).toBe('Unavailable');
    expect((await failure(hub.ops('b/tmux:%3'))).kind).toBe('Unavailable');
    expect((await failure(hub.decide('b/appr-1', { kind: 'once', by: 'alice' }))).kind).toBe('Unavailable');
    expect((await failure(hub.decide('b/appr-1', { kind: 'always', by: 'alice' }))).kind).toBe('Rejected');
    expect(() => hub.revealApprovalArgs('b/appr-1', 'alice')).toThrow(/stay on that hub/);
    // No live frame crosses the fleet: the panel falls back to the recorded screenshot op.
    expect(await hub.lookAt('b/desktop:0x1')).toBeUndefined();
    for (const spy of local) expect(spy).not.toHaveBeenCalled();
  });

  it('is in the fleet (not connected, saying why), and this hub’s for everything else', async () => {
    const { core, hub } = member();
    expect(hub.fleetStatus()).toMatchObject({
      member: true,
      name: 'a',
      connected: false,
      problem: expect.stringMatching(/^the fleet's credentials cannot be used: /),
    });
    expect((await hub.doctor()).warnings).toEqual([
      expect.stringMatching(/^fleet a: the fleet's credentials cannot be used: /),
      expect.stringMatching(/^fleet a: members of this fleet can speak for each other \(.*\) — hint: uplink fleet init$/),
    ]);
    expect(hub.fleetHistory({})).toEqual({ entries: [] });
    expect(hub.dataDir).toBe(core.dataDir);
    expect(await hub.listChannels()).toEqual(await core.listChannels());
    const detach = hub.attachPanel();
    expect(hub.panelsAttached()).toBe(1);
    detach();
    detach();
    expect(hub.panelsAttached()).toBe(0);
    const close = vi.spyOn(core, 'close');
    await hub.close();
    expect(close).toHaveBeenCalledOnce();
  });
});
