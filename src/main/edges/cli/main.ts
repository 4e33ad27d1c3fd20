/**
 * `uplink` — the CLI. A human at a terminal: calls are authorized as `cli` with the OS user, but
 * still run through the kernel, the drivers' own guards and the audit. Human output by default,
 * `--json` for the contract's payloads; errors go to stderr as the rendered `uplink error […]`
 * line with a non-zero exit code (1 = the operation failed, 2 = usage).
 */
import { userInfo } from 'node:os';
import type { JsonValue } from '../../kernel/types';
import { createHub, HubError, isDriverError, loadDrivers, resolveDataDir, toHubError } from '../../hub';
import type { AgentIdentity, Hub } from '../../hub';
import { enumFlag, flag, intFlag, parseArgs, usage, USAGE_HINT } from './args';
import { driverOfChannel } from '../../drivers/contract';
import type { ParsedArgs } from './args';
import { LOG_STATES, MAX_LOG_LIMIT, runLog } from './log';
import { runAgents } from './agents';
import { escapeLines, formatChannels, formatDoctor, formatOps, jsonForTerminal, print } from './format';
import { escapeControl } from '../../../shared/escape';
import { DEFAULT_SERVE_PORT, runPanelUrl, runServe } from './serve';
import { runStdioMcp } from '../mcp/stdio';
import { tmuxSnippet } from '../../drivers/tmux';

export const HELP = `uplink — channels for AI agents, through one kernel, with operator approvals

Usage:
  uplink doctor                                   health of the hub and every driver (exit 0 only when all healthy)
  uplink channels                                 every channel of every driver
  uplink ops <channel>                            the ops of a channel
  uplink send <channel> <message> [--reply-hint full|short|none]
  uplink recv [--cursor N] [--driver D]           replies and envelopes addressed to us (each run scans anew)
  uplink invoke <channel> <op> [json-args] [--interaction kind] [--provider id]
  uplink log [--follow] [--limit N] [--channel C] [--op O] [--agent A] [--state S] [--text T]
  uplink tier <channel> <tier>                    set a channel's permission tier (human-only)
  uplink agents [create <name> | revoke <name>]   named agent credentials (a new token is shown once)
  uplink tmux-snippet                             a tmux.conf fragment: tiers in pane borders, a grant menu
  uplink mcp                                      MCP over stdio (forwards to a running hub)
  uplink serve [--port N] [--host H]              hub + MCP (Streamable HTTP) + panel on 127.0.0.1 (port 7420; 0 = any);
                                                  a non-loopback --host also needs --insecure-plain-http
  uplink panel-url                                a fresh one-time URL that opens the running hub's panel

Options: --json prints the contract's payloads; --help shows this.
Data dir: $UPLINK_DATA_DIR, else the platform's user data directory.
`;

const REPLY_HINTS = ['full', 'short', 'none'];
const INTERACTIONS = ['typed', 'semantic_ui', 'visual_ui'];

function cliAgent(): AgentIdentity {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (containers): keep "unknown".
  }
  return { kind: 'cli', agent_id: 'uplink-cli', name: 'uplink-cli', user };
}

async function withHub<T>(run: (hub: Hub) => Promise<T>): Promise<T> {
  const dataDir = resolveDataDir();
  const hub = createHub({ dataDir, drivers: await loadDrivers(dataDir), watchConfig: false });
  try {
    return await run(hub);
  } finally {
    await hub.close();
  }
}

/** The command's operands: at least `min`, at most `max`. */
function need(args: ParsedArgs, min: number, max: number, what: string): string[] {
  const operands = args.positionals.slice(1);
  if (operands.length < min) throw usage(`${args.positionals[0]} needs ${what}`);
  if (operands.length > max) throw usage(`too many arguments for ${args.positionals[0]} (expected ${what})`);
  return operands;
}

async function run(args: ParsedArgs): Promise<number> {
  const json = args.flags.has('json');
  const [command] = args.positionals;
  switch (command) {
    case 'doctor':
      return withHub(async (hub) => {
        const report = await hub.doctor();
        print(json ? JSON.stringify(report, null, 2) : formatDoctor(report));
        return report.ok ? 0 : 1;
      });
    case 'channels':
      return withHub(async (hub) => {
        const channels = await hub.listChannels();
        print(json ? JSON.stringify(channels, null, 2) : formatChannels(channels));
        return 0;
      });
    case 'ops': {
      const [channel] = need(args, 1, 1, '<channel>');
      return withHub(async (hub) => {
        const { ops } = await hub.describe(channel!, undefined, cliAgent());
        print(json ? JSON.stringify(ops, null, 2) : formatOps(ops));
        return 0;
      });
    }
    case 'send': {
      const [channel, message] = need(args, 2, 2, '<channel> <message>');
      const hint = flag(args, 'reply-hint') ?? 'full';
      if (!REPLY_HINTS.includes(hint)) throw usage(`--reply-hint must be full, short or none, not "${hint}"`);
      return withHub(async (hub) => {
        const receipt = await hub.send(channel!, { message: message!, reply_hint: hint as 'full' }, { agent: cliAgent() });
        print(json ? JSON.stringify(receipt, null, 2) : `${receipt.delivered ? 'delivered' : 'NOT delivered'} (correlation ${receipt.correlation_id}, at ${receipt.injected_at})${receipt.verify_excerpt ? `\n${receipt.verify_excerpt}` : ''}`);
        return receipt.delivered ? 0 : 1;
      });
    }
    case 'recv': {
      need(args, 0, 0, 'no operands (use --cursor N, --driver D)');
      const cursor = intFlag(args, 'cursor');
      const driver = flag(args, 'driver');
      return withHub(async (hub) => {
        const batch = await hub.recv(cursor, { agent: cliAgent(), ...(driver ? { driver } : {}) });
        if (json) print(JSON.stringify(batch, null, 2));
        else {
          for (const item of batch.items) print(escapeLines(`#${item.cursor}  ${item.at}${item.from ? `  from=${item.from}` : ''}${item.id ? `  id=${item.id}` : ''}\n    ${escapeControl(item.raw)}`));
          print(batch.items.length ? `next cursor: ${batch.next_cursor}` : `nothing new (next cursor: ${batch.next_cursor})`);
        }
        return 0;
      });
    }
    case 'invoke': {
      const [channel, op, raw] = need(args, 2, 3, '<channel> <op> [json-args]');
      const interaction = flag(args, 'interaction');
      if (interaction !== undefined && !INTERACTIONS.includes(interaction)) throw usage(`--interaction must be typed, semantic_ui or visual_ui, not "${interaction}"`);
      const provider = flag(args, 'provider');
      return withHub(async (hub) => {
        let parsed: JsonValue = {};
        if (raw !== undefined) {
          try {
            parsed = JSON.parse(raw) as JsonValue;
          } catch (e) {
            const err = new HubError(driverOfChannel(channel), 'Invalid', `json-args is not valid JSON (${(e as Error).message})`, { hint: `quote it for the shell, e.g. uplink invoke ${channel} ${op} '{"lines": 20}'` });
            throw hub.recordRejected({ channel: channel!, op: op!, agent: cliAgent() }, err);
          }
        }
        const result = await hub.invoke(channel!, op!, parsed, {
          agent: cliAgent(),
          ...(interaction ? { interaction: interaction as 'typed' } : {}),
          ...(provider ? { provider } : {}),
        });
        print(jsonForTerminal(result, 2));
        return 0;
      });
    }
    case 'tier': {
      const [channel, tier] = need(args, 2, 2, '<channel> <tier>');
      return withHub(async (hub) => {
        await hub.setTier(channel!, tier!, cliAgent());
        print(json ? JSON.stringify({ channel, tier }) : `${channel} tier set to ${tier}`);
        return 0;
      });
    }
    case 'log':
      return runLog(resolveDataDir(), {
        json,
        follow: args.flags.has('follow'),
        limit: intFlag(args, 'limit', { min: 1, max: MAX_LOG_LIMIT }) ?? 50,
        query: {
          ...(flag(args, 'channel') ? { channel: flag(args, 'channel') } : {}),
          ...(flag(args, 'op') ? { op: flag(args, 'op') } : {}),
          ...(flag(args, 'agent') ? { agent: flag(args, 'agent') } : {}),
          ...(flag(args, 'state') !== undefined ? { state: enumFlag(args, 'state', LOG_STATES) } : {}),
          ...(flag(args, 'text') ? { text: flag(args, 'text') } : {}),
        },
      });
    case 'agents': {
      const operands = need(args, 0, 2, '[create <name> | revoke <name>]');
      return withHub((hub) => runAgents(hub, operands, cliAgent().user ?? 'unknown', json));
    }
    case 'tmux-snippet':
      need(args, 0, 0, 'no operands');
      // Printed for the user to paste: Uplink never edits their tmux config itself.
      print(tmuxSnippet());
      return 0;
    case 'mcp':
      return runStdioMcp(resolveDataDir());
    case 'serve': {
      const host = flag(args, 'host');
      return runServe({ dataDir: resolveDataDir(), port: intFlag(args, 'port') ?? DEFAULT_SERVE_PORT, ...(host ? { host } : {}), insecure: args.flags.has('insecure-plain-http'), json });
    }
    case 'panel-url':
      need(args, 0, 0, 'no operands');
      return runPanelUrl(resolveDataDir(), json);
    case undefined:
    case 'help':
      print(HELP);
      return command === undefined ? 2 : 0;
    default:
      throw usage(`unknown command "${command}"`);
  }
}

/** The CLI entry (bundled to dist/cli.mjs, run by bin/uplink). Resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (args.flags.has('help')) {
      print(HELP);
      return 0;
    }
    return await run(args);
  } catch (e) {
    // The CLI user is the operator: an unexpected failure may show its own message.
    const err = isDriverError(e) ? toHubError(undefined, e) : new HubError('core', 'Upstream', e instanceof Error ? e.message : String(e), { hint: 'run `uplink doctor`' });
    process.stderr.write(`${err.rendered}\n`);
    return err.hint === USAGE_HINT ? 2 : 1;
  }
}
