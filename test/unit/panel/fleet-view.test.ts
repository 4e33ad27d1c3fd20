/**
 * Whether the panel shows a Fleet view comes from the hub's fleet status: a hub in no fleet says it
 * is not a member (no view, an empty timeline), a member names its fleet and streams its changes.
 */
import { describe, expect, it } from 'vitest';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import type { PanelEventName } from '../../../src/shared/panel-api';
import type { FleetChange, FleetMembership } from '../../../src/main/hub/types';
import { createFakeHub } from './fake-hub';
import type { FakeHub } from './fake-hub';

function open(hub: FakeHub) {
  const heard: Array<{ event: PanelEventName; payload: unknown }> = [];
  const s = openPanelSession(hub, { version: '0.1.0', user: 'alice' }, createBroadcast(), (event, payload) => heard.push({ event, payload }), Date.now());
  return { s, heard };
}

const membership: FleetMembership = {
  member: true,
  name: 'a',
  url: 'nats://127.0.0.1:4222',
  connected: true,
  members: [{ hub: 'a', state: 'self', since: 1, panels: 1 }],
  identity: 'keys',
  dropped: { unsigned: 2, replayed: 1 },
};

describe('the Fleet view of a panel', () => {
  it('is off for a hub in no fleet, whose fleet timeline is empty', async () => {
    const { s } = open(createFakeHub());
    expect(await s.handlers.fleetStatus({})).toEqual({ enabled: false, members: [] });
    expect(await s.handlers.fleetTimeline({})).toEqual({ entries: [], next_before: null });
    s.close();
  });

  it('is on for a fleet member, follows its changes while the session is open, and stops hearing them once closed', async () => {
    const hub = createFakeHub();
    const listeners = new Set<(c: FleetChange) => void>();
    hub.fleetStatus = () => membership;
    hub.subscribeFleet = (listener) => (listeners.add(listener), () => void listeners.delete(listener));
    const { s, heard } = open(hub);
    expect(await s.handlers.fleetStatus({})).toMatchObject({ enabled: true, name: 'a', connected: true, members: [{ hub: 'a', state: 'self' }] });
    // What the fleet dropped, and how its members are known, reach the panel.
    expect(await s.handlers.fleetStatus({})).toMatchObject({ identity: 'keys', dropped: { unsigned: 2, replayed: 1 } });
    for (const l of listeners) l({ type: 'status', status: { ...membership, connected: false, problem: 'lost' } });
    expect(heard.filter((h) => h.event === 'fleetChanged').map((h) => h.payload)).toEqual([
      expect.objectContaining({ enabled: true, connected: false, problem: 'lost' }),
    ]);
    s.close();
    expect(listeners.size).toBe(0);
  });
});
