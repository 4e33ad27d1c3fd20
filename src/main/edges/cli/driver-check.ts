/**
 * `uplink driver check [--timeout ms] -- <command…>`: the driver conformance kit on a command the
 * person typed. It starts no hub and reads no config: only the driver runs.
 */
import { checkDriver } from '../../hub';
import type { CheckResult } from '../../hub';
import { intFlag, usage } from './args';
import type { ParsedArgs } from './args';
import { print } from './format';

export async function runDriverCommand(args: ParsedArgs): Promise<number> {
  const [, sub, ...command] = args.positionals;
  if (sub !== 'check')
    throw usage(sub === undefined ? 'driver needs a subcommand' : `unknown driver subcommand "${sub}"`, 'use `uplink driver check -- <command…>`');
  if (command.length === 0)
    throw usage('driver check needs the command that starts the driver', 'put it after `--`, e.g. `uplink driver check -- node my-driver.mjs`');
  const timeoutMs = intFlag(args, 'timeout', { min: 100, max: 600_000 }) ?? 5000;
  const results = await checkDriver({ command, timeoutMs, onResult: (r) => print(formatCheck(r)) });
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

/** A result as its one line. */
export function formatCheck(r: CheckResult): string {
  if (r.status === 'pass') return r.why ? `pass ${r.name} (${r.why})` : `pass ${r.name}`;
  if (r.status === 'skip') return `skip ${r.name}: ${r.why}`;
  return `fail ${r.name}: ${r.why}${r.hint ? ` — hint: ${r.hint}` : ''}`;
}
