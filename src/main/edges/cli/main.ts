/**
 * `uplink` — the CLI. A human at a terminal: calls are authorized as `cli` with the OS user, but
 * still run through the kernel, the drivers' own guards and the audit. Human output by default,
 * `--json` for the contract's payloads; errors go to stderr as the rendered `uplink error […]`
 * line with a non-zero exit code (1 = the operation failed, 2 = usage).
 *
 * A hub call goes to the hub running for the data directory when there is one (`forward.ts`, over
 * its `POST /cli`), else to a hub embedded for this one command (`embedded.ts`); both print
 * through `present.ts`, so output and exit codes are the same either way.
 */
// Only light modules are imported statically: a command forwarded to a running hub must not load
// the hub, the drivers, SQLite, ajv or the MCP SDK. The embedded hub, `serve`, `mcp` and the tmux
// snippet are imported when a command needs them.
import { HubError, isDriverError, resolveDataDir, tmuxSnippet, toHubError } from '../../hub';
import { DEFAULT_SERVE_PORT, flag, intFlag, isUsage, parseArgs, usage } from './args';
import type { ParsedArgs } from './args';
import { print } from './format';
import { forward } from './forward';
import { requestFromArgs } from './request';

export const HELP = `uplink — channels for AI agents, through one kernel, with operator approvals

Usage:
  uplink doctor                                   health of the hub and every driver (exit 0 only when all healthy)
  uplink channels                                 every channel of every driver
  uplink ops <channel>                            the ops of a channel
  uplink send <channel> <message> [--reply-hint full|short|none]
  uplink recv [--cursor N] [--driver D]           replies and envelopes addressed to us (each run scans anew)
  uplink invoke <channel> <op> [json-args] [--interaction kind] [--provider id]
  uplink log [--follow] [--limit N] [--channel C] [--op O] [--agent A] [--state outcome] [--text T]
  uplink tier <channel> <tier>                    set a channel's permission tier (human-only)
  uplink agents [create <name> | revoke <name>]   named agent credentials (a new token is shown once)
  uplink tmux-snippet                             a tmux.conf fragment: tiers in pane borders, a grant menu
  uplink mcp                                      MCP over stdio (forwards to a running hub)
  uplink serve [--port N] [--host H]              hub + MCP (Streamable HTTP) + panel on 127.0.0.1 (port 7420; 0 = any);
                                                  a non-loopback --host also needs --insecure-plain-http
  uplink panel-url                                a fresh one-time URL that opens the running hub's panel
  uplink demo [--port N] [--exit-when-done] [--headless] [--list]
                                                  a guided demo on a private stage (tmux, a display, an app) with a scripted agent

Options: --json prints the contract's payloads; --help shows this.
Data dir: $UPLINK_DATA_DIR, else the platform's user data directory.
`;

async function run(args: ParsedArgs): Promise<number> {
  const json = args.flags.has('json');
  const [command] = args.positionals;
  const request = requestFromArgs(args);
  if (request) {
    const dataDir = resolveDataDir();
    const code = await forward(dataDir, request, json);
    if (code !== undefined) return code;
    const { runEmbedded } = await import('./embedded');
    return runEmbedded(dataDir, request, json);
  }
  switch (command) {
    case 'tmux-snippet': {
      need(args, 0, 0, 'no operands');
      // Printed for the user to paste: Uplink never edits their tmux config itself.
      print(tmuxSnippet());
      return 0;
    }
    case 'mcp': {
      const { runStdioMcp } = await import('../mcp/stdio');
      return runStdioMcp(resolveDataDir());
    }
    case 'serve': {
      const host = flag(args, 'host');
      const { runServe } = await import('./serve');
      return runServe({ dataDir: resolveDataDir(), port: intFlag(args, 'port') ?? DEFAULT_SERVE_PORT, ...(host ? { host } : {}), insecure: args.flags.has('insecure-plain-http'), json });
    }
    case 'demo': {
      need(args, 0, 0, 'no operands');
      const { listSteps, runDemo } = await import('../demo');
      if (args.flags.has('list')) {
        print(listSteps());
        return 0;
      }
      const dataDir = process.env.UPLINK_DATA_DIR ? resolveDataDir() : undefined;
      return runDemo({ port: intFlag(args, 'port') ?? DEFAULT_SERVE_PORT, exitWhenDone: args.flags.has('exit-when-done'), headless: args.flags.has('headless'), ...(dataDir ? { dataDir } : {}) });
    }
    case 'panel-url': {
      need(args, 0, 0, 'no operands');
      const { runPanelUrl } = await import('./serve');
      return runPanelUrl(resolveDataDir(), json);
    }
    case undefined:
    case 'help':
      print(HELP);
      return command === undefined ? 2 : 0;
    default:
      throw usage(`unknown command "${command}"`);
  }
}

/** The command has no operands beyond `min`..`max`. */
function need(args: ParsedArgs, min: number, max: number, what: string): void {
  const operands = args.positionals.length - 1;
  if (operands < min) throw usage(`${args.positionals[0]} needs ${what}`);
  if (operands > max) throw usage(`too many arguments for ${args.positionals[0]} (expected ${what})`);
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
    return isUsage(err) ? 2 : 1;
  }
}
