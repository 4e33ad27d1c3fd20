/**
 * The identity a call from another hub runs under here: that hub's authenticated agent, named by
 * the hub it came from, never an id made of what its client declared, and in no pane of this hub.
 */
import { describe, expect, it } from 'vitest';
import { remoteAgent } from '../../../src/main/hub/fleet/names';

describe('remoteAgent', () => {
  it("is the calling hub's authenticated agent, the declared name beside it", () => {
    expect(remoteAgent('laptop', { kind: 'mcp', agent_id: 'default', name: 'operator', version: '1.0.0' })).toEqual({
      kind: 'mcp',
      agent_id: 'laptop/default',
      name: 'laptop/operator',
      version: '1.0.0',
      caller: {},
    });
  });

  it('an agent the calling hub names no id for is its unauthenticated one, whatever it declared', () => {
    expect(remoteAgent('laptop', { kind: 'panel', name: 'operator' }).agent_id).toBe('laptop/unauthenticated');
    expect(remoteAgent('laptop', { kind: 'mcp', name: 'uplink-cli' }).agent_id).toBe('laptop/unauthenticated');
  });
});
