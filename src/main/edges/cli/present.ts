/**
 * Prints a request's payload and picks the exit code — one function for the embedded hub and the
 * forwarded call, so both print byte for byte the same.
 */
import { HubError, writeFileAtomic } from '../../hub';
import type { AgentSummary, AuditEntry, ChannelEntry, HubDoctor, OpDescription, RecvBatch, SendReceipt } from '../../hub';
import { escapeControl } from '../../../shared/escape';
import type { DriverProcessStatus } from '../../../shared/panel-types';
import { escapeLines, formatChannels, formatDoctor, formatDriver, formatDrivers, formatEntry, formatOps, jsonForTerminal, print } from './format';
import type { CliRequest } from './request';
import { approvalsJson, formatApprovals, formatDecision } from './approvals';
import type { CliDecision } from './approvals';
import type { PendingApproval } from '../../hub';

/** One `log` entry as a line. */
export function printEntry(entry: AuditEntry, json: boolean): void {
  print(json ? jsonForTerminal(entry) : formatEntry(entry));
}

function presentAgents(request: Extract<CliRequest, { command: 'agents' }>, result: unknown, json: boolean): void {
  const { action } = request.args;
  if (action === 'list') {
    const agents = result as AgentSummary[];
    if (json) print(JSON.stringify(agents, null, 2));
    else if (agents.length === 0) print('no named agents (create one with `uplink agents create <name>`)');
    else
      print(agents.map((a) => `${a.id.padEnd(24)}  created ${a.created_at} by ${a.created_by}${a.revoked_at ? `  REVOKED ${a.revoked_at}` : ''}`).join('\n'));
    return;
  }
  if (action === 'revoke') {
    print(json ? JSON.stringify(result) : `agent ${request.args.name} revoked: its token is refused from now on`);
    return;
  }
  const { id, token, mcp_url: mcpUrl } = result as { id: string; token: string; mcp_url: string };
  if (json) {
    print(JSON.stringify(result));
    return;
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
}

/** A path as a POSIX shell reads it back (quoted unless plain). */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * `agents create --out FILE`: the new token goes into FILE (0600, the one atomic write), never to
 * the terminal; what is printed refers to the file.
 */
export function presentTokenFile(file: string): typeof present {
  return (_request, result, json) => {
    const { id, token, mcp_url: mcpUrl } = result as { id: string; token: string; mcp_url: string };
    try {
      writeFileAtomic(file, `${token}\n`, 0o600);
    } catch (e) {
      throw new HubError(
        'core',
        'Unavailable',
        `agent ${id} was created but its token could not be written to ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        {
          hint: `revoke it (\`uplink agents revoke ${id}\`) and create it again with a writable --out path`,
        },
      );
    }
    if (json) {
      print(JSON.stringify({ id, mcp_url: mcpUrl, token_file: file }));
      return 0;
    }
    const read = `$(cat ${shellWord(file)})`;
    print(
      [
        `agent ${id} created. Its token is in ${file} (mode 0600; Uplink keeps only its hash).`,
        'Connect Claude Code with it:',
        `  claude mcp add --transport http uplink ${mcpUrl} --header "Authorization: Bearer ${read}"`,
        `or over stdio: run \`uplink mcp\` with UPLINK_AGENT_TOKEN=${read} in its environment.`,
      ].join('\n'),
    );
    return 0;
  };
}

/**
 * One step of a long command, on stderr as it happens: stdout keeps only the result (a script
 * reading `--json` gets no steps at all).
 */
export function printProgress(step: string, json: boolean): void {
  if (!json) process.stderr.write(`${escapeControl(step)}\n`);
}

/** Prints `result` as the command prints it; returns the exit code. */
export function present(request: CliRequest, result: unknown, json: boolean): number {
  switch (request.command) {
    case 'doctor': {
      const report = result as HubDoctor;
      print(json ? JSON.stringify(report, null, 2) : formatDoctor(report));
      return report.ok ? 0 : 1;
    }
    case 'channels':
      print(json ? JSON.stringify(result, null, 2) : formatChannels(result as ChannelEntry[]));
      return 0;
    case 'ops':
      print(json ? JSON.stringify(result, null, 2) : formatOps(result as OpDescription[]));
      return 0;
    case 'send': {
      const receipt = result as SendReceipt;
      print(
        json
          ? JSON.stringify(receipt, null, 2)
          : `${receipt.delivered ? 'delivered' : 'NOT delivered'} (correlation ${receipt.correlation_id}, at ${receipt.injected_at})${receipt.verify_excerpt ? `\n${escapeLines(receipt.verify_excerpt)}` : ''}`,
      );
      return receipt.delivered ? 0 : 1;
    }
    case 'recv': {
      const batch = result as RecvBatch;
      if (json) print(JSON.stringify(batch, null, 2));
      else {
        for (const item of batch.items)
          print(
            escapeLines(
              `#${item.cursor}  ${item.at}${item.from ? `  from=${item.from}` : ''}${item.id ? `  id=${item.id}` : ''}\n    ${escapeControl(item.raw)}`,
            ),
          );
        print(batch.items.length ? `next cursor: ${batch.next_cursor}` : `nothing new (next cursor: ${batch.next_cursor})`);
      }
      return 0;
    }
    case 'invoke':
      print(jsonForTerminal(result, 2));
      return 0;
    case 'tier': {
      const { channel, tier } = request.args;
      print(json ? JSON.stringify({ channel, tier }) : `${channel} tier set to ${tier}`);
      return 0;
    }
    case 'agents':
      presentAgents(request, result, json);
      return 0;
    case 'drivers': {
      const { action, id } = request.args;
      if (json) print(JSON.stringify(result, null, 2));
      else if (action === 'status') print(formatDrivers(result as DriverProcessStatus[]));
      else {
        const d = result as DriverProcessStatus;
        const done = action === 'trust' ? 'trusted' : 'restarted';
        const outcome = d.state === 'running' ? `${done}, running` : `${done}, but it is not running (${d.state})`;
        print(`${escapeControl(id ?? '')} ${outcome}:\n${formatDriver(d)}`);
      }
      // Trust and restart are asked for to get the driver running: a script learns when it is not.
      return action === 'status' || (result as DriverProcessStatus).state === 'running' ? 0 : 1;
    }
    case 'log':
      // The entries were printed as they came.
      return 0;
    case 'approvals': {
      const { pending, panels_attached: panels } = result as { pending: PendingApproval[]; panels_attached: number };
      print(json ? jsonForTerminal(approvalsJson(pending, Date.now()), 2) : formatApprovals(pending, Date.now(), panels));
      return 0;
    }
    case 'approve':
    case 'deny':
      print(json ? jsonForTerminal(result) : formatDecision(result as CliDecision));
      return 0;
  }
}
