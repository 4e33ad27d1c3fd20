/**
 * Names across hubs: `<hub>/<channel>` for another hub's channel (and prompt), and an agent as it
 * is declared to another hub and recorded there (an agent of the calling hub, never a person).
 */
import type { AgentIdentity } from '../types';
import { UNAUTHENTICATED } from '../call-context';
import type { FleetAgent } from './messages';

const HUB_NAME = /^([a-z][a-z0-9-]*)\/(.+)$/;

/** The hub a channel belongs to, when it is `<hub>/<channel>` (a local channel has no `/` before its `:`). */
export function splitFleetChannel(channel: string): { hub: string; channel: string } | undefined {
  const m = HUB_NAME.exec(channel);
  return m ? { hub: m[1]!, channel: m[2]! } : undefined;
}

/**
 * The identity a call from another hub runs under here: an agent of that hub, never a person. Its
 * id is the one that hub authenticated; one it does not name is that hub's unauthenticated agent,
 * never an id made of the client's declared name.
 */
export function remoteAgent(from: string, a: FleetAgent): AgentIdentity {
  return {
    kind: 'mcp',
    name: `${from}/${a.name}`,
    agent_id: `${from}/${a.agent_id ?? UNAUTHENTICATED}`,
    ...(a.version ? { version: a.version } : {}),
    ...(a.user ? { user: `${from}/${a.user}` } : {}),
    ...(a.session ? { session: `${from}/${a.session}` } : {}),
    // It runs behind another hub: nothing of this hub's own environment (its pane) is its.
    caller: {},
  };
}

/** An agent as this hub declares it to another: data for the record there, each field cut short. */
export function declared(agent: AgentIdentity): FleetAgent {
  const cut = (s: string): string => s.slice(0, 256);
  return {
    kind: agent.kind,
    name: cut(agent.name),
    ...(agent.agent_id ? { agent_id: cut(agent.agent_id) } : {}),
    ...(agent.version ? { version: cut(agent.version) } : {}),
    ...(agent.user ? { user: cut(agent.user) } : {}),
    ...(agent.session ? { session: cut(agent.session) } : {}),
  };
}

/** Words the fleet's shared subjects use (`uplink.presence.<hub>`…): no hub may be called so. */
export const RESERVED_HUB_NAMES = ['history', 'presence', 'prompts', 'checkpoint'];

/** Why `name` cannot be a hub's name in the fleet, or undefined when it can. */
export function hubNameProblem(name: string): string | undefined {
  if (!/^[a-z][a-z0-9-]*$/.test(name) || name.length > 64)
    return `"${name.slice(0, 64)}" is not a hub name — hint: a hub name is a lowercase letter, then lowercase letters, digits and dashes (at most 64)`;
  if (RESERVED_HUB_NAMES.includes(name)) return `${name} is a word the fleet's own subjects use — hint: choose another name, e.g. ${name}-1`;
  return undefined;
}
