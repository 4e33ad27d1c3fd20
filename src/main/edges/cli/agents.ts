/**
 * `uplink agents [create <name> | revoke <name>]`: the operator's named agent credentials. A new
 * agent's token is printed once, with the line that connects Claude Code with it; only its hash is
 * kept. Create and revoke are recorded in the audit (never the token).
 */
import type { Hub } from '../../hub';
import { readAnnouncement } from '../http/hub-json';
import { usage } from './args';
import { print } from './format';
import { DEFAULT_SERVE_PORT } from './serve';

/** Runs the `agents` command with its operands; `by` is who is recorded as deciding. */
export async function runAgents(hub: Hub, operands: string[], by: string, json: boolean): Promise<number> {
  const [sub, name] = operands;
  if (sub === undefined) {
    const agents = hub.listAgents();
    if (json) print(JSON.stringify(agents, null, 2));
    else if (agents.length === 0) print('no named agents (create one with `uplink agents create <name>`)');
    else print(agents.map((a) => `${a.id.padEnd(24)}  created ${a.created_at} by ${a.created_by}${a.revoked_at ? `  REVOKED ${a.revoked_at}` : ''}`).join('\n'));
    return 0;
  }
  if (sub !== 'create' && sub !== 'revoke') throw usage(`unknown agents command "${sub}" (expected create or revoke)`);
  if (name === undefined) throw usage(`agents ${sub} needs <name>`);
  if (sub === 'revoke') {
    await hub.revokeAgent(name, by);
    print(json ? JSON.stringify({ id: name, revoked: true }) : `agent ${name} revoked: its token is refused from now on`);
    return 0;
  }
  const { id, token } = await hub.createAgent(name, by);
  // The running hub's URL when there is one, else where `uplink serve` listens by default.
  const mcpUrl = new URL('/mcp', readAnnouncement(hub.dataDir)?.url ?? `http://127.0.0.1:${DEFAULT_SERVE_PORT}`).href;
  if (json) {
    print(JSON.stringify({ id, token, mcp_url: mcpUrl }));
    return 0;
  }
  print(
    [
      `agent ${id} created. Its token is shown only now (Uplink keeps only its hash):`,
      `  ${token}`,
      'Connect Claude Code with it:',
      `  claude mcp add --transport http uplink ${mcpUrl} --header "Authorization: Bearer ${token}"`,
      `or over stdio: run \`uplink mcp\` with UPLINK_AGENT_TOKEN=${token} in its environment.`,
    ].join('\n'),
  );
  return 0;
}
