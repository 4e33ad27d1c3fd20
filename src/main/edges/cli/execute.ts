/**
 * Runs one CLI request against a hub and returns its payload — in the CLI's own embedded hub, or in
 * the running hub for a forwarded `POST /cli`. The caller prints it (`present.ts`), the same way in
 * both cases, so output and exit codes cannot drift apart.
 */
import { userInfo } from 'node:os';
import { CLI_AGENT_ID, driverOfChannel, HubError } from '../../hub';
import type { AgentIdentity, AuditEntry, AuditPage, AuditQuery, Hub, JsonValue } from '../../hub';
import { readAnnouncement } from '../http/hub-json';
import { DEFAULT_SERVE_PORT } from './args';
import type { CliCaller, CliCommands, CliRequest } from './request';
import { approvalForCli, matchApproval } from './approvals';
import type { CliDecision } from './approvals';
import { agentInWords } from '../../../shared/agent-label';

/** The OS user running this process ("unknown" without a passwd entry, as in some containers). */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** The CLI as an identity: a person at a terminal, recorded with their OS user. */
export function cliAgent(user: string, caller?: CliCaller): AgentIdentity {
  return { kind: 'cli', agent_id: CLI_AGENT_ID, name: CLI_AGENT_ID, user, ...(caller && Object.keys(caller).length ? { caller } : {}) };
}

/** What a run needs besides the request. */
export interface ExecuteContext {
  agent: AgentIdentity;
  /** Cancels the call (Ctrl-C, or the forwarding connection closed). */
  signal?: AbortSignal;
  /** Receives `log` entries, oldest first, as they are found (and, with `follow`, as they are recorded). */
  onEntry?: (entry: AuditEntry) => void;
  /** Hears each step of a long command as it happens (`drivers restart`: stopping, starting). */
  onProgress?: (step: string) => void;
}

/** The newest `limit` entries matching `query`, newest first, paging past the store's page size. */
export function newestEntries(read: (q: AuditQuery) => AuditPage, query: AuditQuery, limit: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  let before: number | undefined;
  while (out.length < limit) {
    const page = read({ ...query, limit: Math.min(1000, limit - out.length), ...(before !== undefined ? { before } : {}) });
    out.push(...page.entries);
    if (page.next_cursor === undefined) break;
    before = page.next_cursor;
  }
  return out;
}

/** The audit filter of a `log` request. */
export function logQuery(args: CliCommands['log']): AuditQuery {
  const { channel, op, agent, state, text } = args;
  return {
    ...(channel ? { channel } : {}),
    ...(op ? { op } : {}),
    ...(agent ? { agent } : {}),
    ...(state ? { outcome: state } : {}),
    ...(text ? { text } : {}),
  };
}

/** Prints the hub's entries; with `follow`, keeps going until the signal aborts. */
async function log(hub: Hub, args: CliCommands['log'], ctx: ExecuteContext): Promise<null> {
  const query = logQuery(args);
  const emit = ctx.onEntry ?? (() => undefined);
  const entries = newestEntries((q) => hub.queryAudit(q), query, args.limit);
  for (let i = entries.length - 1; i >= 0; i--) emit(entries[i]!);
  if (!args.follow || ctx.signal?.aborted) return null;
  let cursor = entries[0]?.id ?? hub.queryAudit({ limit: 1 }).entries[0]?.id ?? 0;
  // The live timeline says when to look; the store query applies the filters exactly as above.
  // The slow timer catches rows other processes replay into the store.
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    for (;;) {
      const page = hub.queryAudit({ ...query, after: cursor, limit: 1000 });
      for (const e of page.entries) emit(e);
      cursor = page.next_cursor ?? cursor;
      if (page.entries.length < 1000) break;
    }
  };
  const soon = (): void => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(flush, 20);
  };
  await new Promise<void>((resolve) => {
    const unsubscribe = hub.subscribe(soon);
    const timer = setInterval(soon, 1000);
    ctx.signal?.addEventListener(
      'abort',
      () => {
        unsubscribe();
        clearInterval(timer);
        resolve();
      },
      { once: true },
    );
  });
  return null;
}

/** Runs the request; resolves with its payload (the `--json` output), rejects with a HubError. */
export async function executeCli(hub: Hub, request: CliRequest, ctx: ExecuteContext): Promise<JsonValue> {
  const { agent, signal } = ctx;
  const by = agent.user ?? 'unknown';
  const call = { agent, ...(signal ? { signal } : {}) };
  switch (request.command) {
    case 'doctor':
      return (await hub.doctor()) as unknown as JsonValue;
    case 'channels':
      return (await hub.listChannels()) as unknown as JsonValue;
    case 'ops':
      return (await hub.describe(request.args.channel, undefined, agent)).ops as unknown as JsonValue;
    case 'send': {
      const { channel, message, reply_hint } = request.args;
      return (await hub.send(channel, { message, reply_hint }, call)) as unknown as JsonValue;
    }
    case 'recv': {
      const { cursor, driver } = request.args;
      return (await hub.recv(cursor, { ...call, ...(driver ? { driver } : {}) })) as unknown as JsonValue;
    }
    case 'invoke': {
      const { channel, op, json_args, interaction, provider } = request.args;
      let parsed: JsonValue = {};
      if (json_args !== undefined) {
        try {
          parsed = JSON.parse(json_args) as JsonValue;
        } catch (e) {
          const err = new HubError(driverOfChannel(channel), 'Invalid', `json-args is not valid JSON (${(e as Error).message})`, {
            hint: `quote it for the shell, e.g. uplink invoke ${channel} ${op} '{"lines": 20}'`,
          });
          throw hub.recordRejected({ channel, op, agent }, err);
        }
      }
      return hub.invoke(channel, op, parsed, { ...call, ...(interaction ? { interaction } : {}), ...(provider ? { provider } : {}) });
    }
    case 'tier':
      await hub.setTier(request.args.channel, request.args.tier, agent);
      return null;
    case 'agents': {
      const { action, name } = request.args;
      if (action === 'list') return hub.listAgents() as unknown as JsonValue;
      if (name === undefined) throw new HubError('core', 'Invalid', `agents ${action} needs a name`, { hint: `uplink agents ${action} <name>` });
      if (action === 'revoke') {
        await hub.revokeAgent(name, by);
        return { id: name, revoked: true };
      }
      const { id, token } = await hub.createAgent(name, by);
      // The running hub's URL when there is one, else where `uplink serve` listens by default.
      const mcpUrl = new URL('/mcp', readAnnouncement(hub.dataDir)?.url ?? `http://127.0.0.1:${DEFAULT_SERVE_PORT}`).href;
      return { id, token, mcp_url: mcpUrl };
    }
    case 'drivers': {
      const { action, id, sha256 } = request.args;
      if (action === 'status') return (await hub.driverStatus()) as unknown as JsonValue;
      if (id === undefined) throw new HubError('core', 'Invalid', `drivers ${action} needs a driver id`, { hint: `uplink drivers ${action} <id>` });
      if (action === 'restart') return (await hub.restartDriver(id, by, ctx.onProgress)) as unknown as JsonValue;
      if (sha256 === undefined)
        throw new HubError('core', 'Invalid', `drivers trust needs the sha256 you checked`, {
          hint: `run \`uplink drivers trust ${id}\` on a terminal to see it, or pass --yes --sha256 <hex>`,
        });
      return (await hub.trustDriver(id, sha256, by)) as unknown as JsonValue;
    }
    case 'log':
      return log(hub, request.args, ctx);
    case 'approvals':
      return { pending: hub.pendingApprovals().map(approvalForCli), panels_attached: hub.panelsAttached() };
    case 'approve':
    case 'deny': {
      const approval = matchApproval(hub.pendingApprovals(), request.args.id);
      const decision = request.command === 'deny' ? 'deny' : request.args.decision;
      const reason = request.command === 'deny' ? request.args.reason : undefined;
      // Recorded like a panel's decision, naming the way it came: `alice via cli`.
      const decidedBy = `${by} via cli`;
      const result = await hub.decide(approval.approval_id, { kind: decision, by: decidedBy, ...(reason ? { reason } : {}) });
      const out: CliDecision = {
        approval_id: result.approval_id,
        decision,
        granted: result.granted,
        ...(result.rule_id ? { rule_id: result.rule_id } : {}),
        channel: approval.channel,
        op: approval.op,
        agent: agentInWords(approval.agent),
        by: decidedBy,
        ...(reason ? { reason } : {}),
      };
      return out as unknown as JsonValue;
    }
  }
}
