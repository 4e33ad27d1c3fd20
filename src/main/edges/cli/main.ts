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
import { HubError, initFleet, isDriverError, resolveDataDir, runBuiltInDriver, tmuxSnippet, toHubError } from '../../hub';
import type { FleetInitResult, LoadDrivers } from '../../hub';
import { statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { escapeControl } from '../../../shared/escape';
import { DEFAULT_SERVE_PORT, flag, intFlag, isUsage, parseArgs, usage } from './args';
import type { ParsedArgs } from './args';
import { print } from './format';
import { forward } from './forward';
import { presentTokenFile } from './present';
import type { present } from './present';
import { requestFromArgs } from './request';
import type { CliRequest } from './request';
import { servedPane, withheld } from './served-pane';
import type { DriverProcessStatus } from '../../../shared/panel-types';

export const HELP = `uplink — channels for AI agents, through one kernel, with operator approvals

Usage:
  uplink doctor                                   health of the hub and every driver (exit 0 only when all healthy)
  uplink channels                                 every channel of every driver
  uplink ops <channel>                            the ops of a channel
  uplink send <channel> <message> [--reply-hint full|short|none]
  uplink recv [--cursor N] [--driver D]           replies and envelopes addressed to us (each run scans anew)
  uplink invoke <channel> <op> [json-args] [--interaction kind] [--provider id]
  uplink log [--follow] [--limit N] [--channel C] [--op O] [--agent A] [--state outcome] [--text T]
  uplink audit verify [--witness FILE]            check the audit's hash chain and signed checkpoints (and a fleet
                                                  witness's); read-only, hub running or not (exit 0 whole, 1 broken)
  uplink tier <channel> <tier>                    set a channel's permission tier (human-only)
  uplink approvals                                pending approval prompts of the running hub: id, age, agent,
                                                  channel, op, a one-line summary, time left
  uplink approve <id> [--session|--always]        approve a prompt once, for the agent's session, or always (a
                                                  standing rule), as the panel's buttons do; <id>: a unique prefix will do
  uplink deny <id> [--reason R]                   deny a prompt; the reason is sent to the agent
  uplink agents [create <name> [--out FILE] | revoke <name>]
                                                  named agent credentials (a new token is shown once, or
                                                  written to FILE, 0600; never into a tmux pane agents can read)
  uplink drivers                                  out-of-process drivers: process, admission, last stderr
  uplink drivers trust <id> [--yes --sha256 H]    admit a new or changed driver (asks on a terminal; scripts pass the hash)
  uplink drivers restart <id>                     restart an out-of-process driver
  uplink tmux-snippet                             a tmux.conf fragment: tiers in pane borders, a grant menu
  uplink mcp                                      MCP over stdio (forwards to a running hub)
  uplink serve [--port N] [--host H]              hub + MCP (Streamable HTTP) + panel on 127.0.0.1 (port 7420; 0 = any);
                                                  a non-loopback --host also needs --insecure-plain-http
  uplink panel-url                                a fresh one-time URL that opens the running hub's panel
                                                  (in a tmux pane agents can read: opened in the browser, not shown)
  uplink panel-url --revoke-all                   sign every browser out of the panel (sessions survive restarts
                                                  until idle 12 h, 7 days after sign-in, sign-out or this)
  uplink driver run <tmux|desktop>                serve a built-in driver over the driver protocol on stdio (no hub)
  uplink driver check [--timeout ms] -- <command…>
                                                  start a driver and check it speaks the driver protocol,
                                                  one line per check (exit 0 only when none fails)
  uplink demo [--port N] [--exit-when-done] [--headless] [--list]
                                                  a guided demo on a private stage (tmux, a display, an app) with a scripted agent
  uplink fleet init --hubs a,b,c --out DIR [--port N] [--name FLEET] [--force]
                                                  a fleet's keys: DIR/<hub>.nk (each hub's seed, 0600), DIR/roster.json,
                                                  DIR/nats-server.conf (127.0.0.1:N, JetStream, each hub only its own
                                                  subjects); prints each hub's fleet section for config.json. --force
                                                  rewrites them, keeping the key of each hub whose seed is there

Options: --json prints the contract's payloads; --help shows this.
Data dir: $UPLINK_DATA_DIR, else the platform's user data directory.
`;

/** What a caller of `main` may inject. */
export interface CliOptions {
  /** The drivers of every hub the command creates: the product's unless given (tests pass fixtures). */
  loadDrivers?: LoadDrivers;
}

/** Runs a request in the running hub, else in an embedded one; `show` prints it (or reads it). */
async function callHub(dataDir: string, request: CliRequest, json: boolean, options: CliOptions, show?: typeof present): Promise<number> {
  const code = await forward(dataDir, request, json, show);
  if (code !== undefined) return code;
  const { runEmbedded } = await import('./embedded');
  return runEmbedded(dataDir, request, json, show, options.loadDrivers);
}

/**
 * `approvals`, `approve`, `deny`: prompts live in the running hub only (a hub embedded for one
 * command has none), so without one this is exit 2 — like a usage error, the command could not
 * have been answered.
 */
async function decideInHub(dataDir: string, request: CliRequest, json: boolean): Promise<number> {
  const code = await forward(dataDir, request, json);
  if (code !== undefined) return code;
  const err = new HubError('core', 'Unavailable', `no hub is running for this data directory (${dataDir}), so no approval is pending`, {
    hint: 'prompts wait in a running hub: `uplink serve` or the desktop app; set UPLINK_DATA_DIR if it uses another data directory',
  });
  process.stderr.write(`${err.rendered}\n`);
  return 2;
}

/** One line from the terminal. */
async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/**
 * `drivers trust <id>` at a terminal: shows what trusting admits (command, file, its hash now)
 * and sends exactly that hash once the person says yes, so a file changed meanwhile is refused.
 */
async function confirmTrust(
  dataDir: string,
  request: Extract<CliRequest, { command: 'drivers' }>,
  json: boolean,
  options: CliOptions,
): Promise<number | undefined> {
  const id = request.args.id!;
  let drivers: DriverProcessStatus[] = [];
  await callHub(dataDir, { command: 'drivers', args: { action: 'status' } }, json, options, (_r, result) => {
    drivers = result as DriverProcessStatus[];
    return 0;
  });
  const d = drivers.find((x) => x.id === id);
  if (!d)
    throw new HubError('core', 'NotFound', `no external driver ${id} (external: ${drivers.map((x) => x.id).join(', ') || 'none'})`, {
      hint: 'add it to external_drivers in config.json and restart the hub',
    });
  const shown = request.args.sha256 ?? d.integrity.actual;
  if (!d.integrity.file || !shown)
    throw new HubError(id, 'NotFound', `no file to trust for ${id} (its command names none, or it cannot be read)`, {
      hint: "set integrity.file in config.json to the driver's program or script",
    });
  process.stderr.write(`${[`command  ${d.command.join(' ')}`, `file     ${d.integrity.file}`, `sha256   ${shown}`].map(escapeControl).join('\n')}\n`);
  const answer = (await ask(`Trust ${escapeControl(id)} to run with this file? [y/N] `)).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') {
    process.stderr.write(`${escapeControl(id)} not trusted\n`);
    return 1;
  }
  request.args.sha256 = shown;
  return undefined;
}

/**
 * `agents create`: the new token is a live secret, so it is never printed into a tmux pane the
 * hub's tmux driver serves (refused before the agent exists); `--out FILE` writes it to FILE
 * (0600) instead, wherever the command runs.
 */
async function createAgent(dataDir: string, request: CliRequest, json: boolean, options: CliOptions, out: string | undefined): Promise<number> {
  if (out === undefined) {
    const pane = await servedPane(dataDir);
    if (pane)
      throw withheld('a new agent token', pane, 'pass --out FILE to have it written to FILE (mode 0600), or run it from a terminal outside that tmux server');
    return callHub(dataDir, request, json, options);
  }
  if (out === '') throw usage('--out needs a file path');
  const file = resolve(out);
  let dir: Stats | undefined;
  try {
    dir = statSync(dirname(file));
  } catch {
    dir = undefined;
  }
  // Checked before the agent exists: a token that cannot be written is lost.
  if (!dir?.isDirectory()) throw usage(`--out ${out}: no directory ${dirname(file)} to write the token in`);
  return callHub(dataDir, request, json, options, presentTokenFile(file));
}

async function run(args: ParsedArgs, options: CliOptions): Promise<number> {
  const json = args.flags.has('json');
  const [command] = args.positionals;
  const request = requestFromArgs(args);
  if (request) {
    const dataDir = resolveDataDir();
    if (request.command === 'drivers' && request.args.action === 'trust') {
      if (args.flags.has('yes')) {
        if (!request.args.sha256) throw usage('drivers trust --yes needs --sha256 <hex>: the hash you checked', 'see it with `uplink drivers`');
      } else {
        if (!process.stdin.isTTY) throw usage('drivers trust asks for confirmation on a terminal', 'in a script pass --yes --sha256 <hex>');
        const refused = await confirmTrust(dataDir, request, json, options);
        if (refused !== undefined) return refused;
      }
    }
    const out = flag(args, 'out');
    if (out !== undefined && (request.command !== 'agents' || request.args.action !== 'create')) throw usage('--out is for agents create');
    if (request.command === 'agents' && request.args.action === 'create') return createAgent(dataDir, request, json, options, out);
    if (request.command === 'approvals' || request.command === 'approve' || request.command === 'deny') return decideInHub(dataDir, request, json);
    return callHub(dataDir, request, json, options);
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
      return runStdioMcp(resolveDataDir(), options.loadDrivers);
    }
    case 'serve': {
      const host = flag(args, 'host');
      const { runServe } = await import('./serve');
      return runServe({
        dataDir: resolveDataDir(),
        port: intFlag(args, 'port') ?? DEFAULT_SERVE_PORT,
        ...(host ? { host } : {}),
        insecure: args.flags.has('insecure-plain-http'),
        json,
        loadDrivers: options.loadDrivers,
      });
    }
    case 'demo': {
      need(args, 0, 0, 'no operands');
      const { listSteps, runDemo } = await import('../demo');
      if (args.flags.has('list')) {
        print(listSteps());
        return 0;
      }
      const dataDir = process.env.UPLINK_DATA_DIR ? resolveDataDir() : undefined;
      return runDemo({
        port: intFlag(args, 'port') ?? DEFAULT_SERVE_PORT,
        exitWhenDone: args.flags.has('exit-when-done'),
        headless: args.flags.has('headless'),
        ...(dataDir ? { dataDir } : {}),
        loadDrivers: options.loadDrivers,
      });
    }
    case 'panel-url': {
      need(args, 0, 0, 'no operands');
      const { runPanelUrl, runRevokePanelSessions } = await import('./serve');
      if (args.flags.has('revoke-all')) return runRevokePanelSessions(resolveDataDir(), json);
      return runPanelUrl(resolveDataDir(), json);
    }
    case 'audit': {
      const { runAuditCommand } = await import('./audit-verify');
      return runAuditCommand(args);
    }
    case 'driver': {
      const [, sub, name] = args.positionals;
      if (sub === 'check') {
        const { runDriverCommand } = await import('./driver-check');
        return runDriverCommand(args);
      }
      if (sub !== 'run')
        throw usage(
          sub === undefined ? 'driver needs a subcommand' : `unknown driver command "${sub}"`,
          'use `uplink driver run <tmux|desktop>` or `uplink driver check -- <command…>`',
        );
      need(args, 2, 2, 'run <tmux|desktop>');
      await runBuiltInDriver(name!, resolveDataDir());
      return 0;
    }
    case 'fleet': {
      const [, sub] = args.positionals;
      if (sub !== 'init')
        throw usage(sub === undefined ? 'fleet needs a subcommand' : `unknown fleet command "${sub}"`, 'use `uplink fleet init --hubs a,b,c --out DIR`');
      need(args, 1, 1, 'init --hubs a,b,c --out DIR');
      const hubs = flag(args, 'hubs');
      const out = flag(args, 'out');
      if (!hubs) throw usage('fleet init needs --hubs a,b,c', 'name every hub of the fleet, separated by commas');
      if (!out) throw usage('fleet init needs --out DIR', 'the directory for the keys, the roster and the server config');
      const name = flag(args, 'name');
      const result = await initFleet({
        hubs: hubs.split(','),
        out,
        ...(intFlag(args, 'port') !== undefined ? { port: intFlag(args, 'port')! } : {}),
        ...(name ? { fleet: name } : {}),
        force: args.flags.has('force'),
      }).catch((e: unknown) => {
        throw isDriverError(e) ? e : new HubError('fleet', 'Invalid', String((e as Error).message).split(' — hint: ')[0]!, fleetHint(e));
      });
      print(json ? JSON.stringify(result, null, 2) : formatFleetInit(result));
      return 0;
    }
    case undefined:
    case 'help':
      print(HELP);
      return command === undefined ? 2 : 0;
    default:
      throw usage(`unknown command "${command}"`);
  }
}

/** The hint of an error written as `… — hint: …`, for the rendered line. */
function fleetHint(e: unknown): { hint?: string } {
  const hint = String((e as Error)?.message ?? '').split(' — hint: ')[1];
  return hint ? { hint } : {};
}

/** What `fleet init` wrote, and the fleet section each hub's config.json takes. */
function formatFleetInit(r: FleetInitResult): string {
  const lines = [`fleet ${r.roster.fleet} (roster version ${r.roster.version}): ${Object.keys(r.roster.hubs).length} hubs`, '', 'wrote:'];
  for (const f of r.files) lines.push(`  ${f}`);
  lines.push('', 'start the server:  nats-server -c ' + r.files.find((f) => f.endsWith('nats-server.conf')), '');
  for (const [hub, config] of Object.entries(r.configs)) {
    lines.push(`hub ${hub}: copy ${hub}.nk (mode 0600) and roster.json to its machine, and put in its config.json:`);
    lines.push(`  "fleet": ${JSON.stringify(config)}`, '');
  }
  return lines.map(escapeControl).join('\n').trimEnd();
}

/** The command has no operands beyond `min`..`max`. */
function need(args: ParsedArgs, min: number, max: number, what: string): void {
  const operands = args.positionals.length - 1;
  if (operands < min) throw usage(`${args.positionals[0]} needs ${what}`);
  if (operands > max) throw usage(`too many arguments for ${args.positionals[0]} (expected ${what})`);
}

/**
 * The CLI entry (bundled to dist/cli.mjs, run by bin/uplink without `options`: the product
 * drivers). Resolves with the exit code.
 */
/**
 * A reader that stops early (`uplink log | head`) closes our stdout: that ends the command, as
 * SIGPIPE ends a C tool, instead of an unhandled EPIPE with a stack. Installed once per process.
 */
function endQuietlyOnClosedStdout(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

export async function main(argv: string[], options: CliOptions = {}): Promise<number> {
  endQuietlyOnClosedStdout();
  try {
    const args = parseArgs(argv);
    if (args.flags.has('help')) {
      print(HELP);
      return 0;
    }
    return await run(args, options);
  } catch (e) {
    // The CLI user is the operator: an unexpected failure may show its own message.
    const err = isDriverError(e)
      ? toHubError(undefined, e)
      : new HubError('core', 'Upstream', e instanceof Error ? e.message : String(e), { hint: 'run `uplink doctor`' });
    process.stderr.write(`${err.rendered}\n`);
    return isUsage(err) ? 2 : 1;
  }
}
