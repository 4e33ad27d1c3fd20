/**
 * An agent in words, one wording for the panel, `uplink log` and notifications: the authenticated
 * id, and the client name it declared marked as a declaration. A client may declare any name
 * (`operator`, `uplink-cli`): quoted after "declares", it never reads like the identity it names.
 */

/** Who asked, as a record or a prompt names it. */
export interface AgentNames {
  /** The authenticated agent; absent only on rows recorded before agents authenticated. */
  agent_id?: string | undefined;
  /** What the client declared (MCP `clientInfo.name`), or the built-in caller's own id. */
  name?: string | undefined;
  version?: string | undefined;
}

/**
 * `default`, `default (declares "claude-code@2.1.0")`, `default (declares "operator")`, or
 * `unauthenticated (declares "x")` for a row no credential proved. The declared name is quoted as
 * JSON, so a name holding quotes or brackets cannot close the mark and append words of its own.
 */
export function agentInWords(a: AgentNames): string {
  const id = a.agent_id ?? 'unauthenticated';
  const name = a.name ?? '';
  const declared = `${name}${a.version ? `@${a.version}` : ''}`;
  if (declared === '' || (a.agent_id !== undefined && name === a.agent_id && !a.version)) return id;
  return `${id} (declares ${JSON.stringify(declared)})`;
}
