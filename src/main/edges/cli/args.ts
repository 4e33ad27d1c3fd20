/**
 * A small argv parser for `uplink`: positionals plus known `--flags` (boolean or valued). Unknown
 * flags are usage errors, never silently ignored.
 */
// Straight from errors: this module is on the CLI's fast path, which must not load the hub.
import { HubError } from '../../hub';

/** `uplink serve`'s port unless `--port` says otherwise (`--port 0` picks a free one). */
export const DEFAULT_SERVE_PORT = 7420;

/** Parsed command line. */
export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

/** Flags that take a value. */
const VALUED = new Set([
  'reply-hint',
  'interaction',
  'provider',
  'port',
  'host',
  'limit',
  'channel',
  'op',
  'agent',
  'state',
  'text',
  'tier',
  'cursor',
  'driver',
  'sha256',
  'timeout',
  'out',
  'reason',
  'hubs',
  'name',
  'witness',
]);
/** Flags that are switches. */
const SWITCHES = new Set([
  'json',
  'follow',
  'help',
  'insecure-plain-http',
  'yes',
  'exit-when-done',
  'headless',
  'list',
  'session',
  'always',
  'force',
  'revoke-all',
]);

/** Parses argv (without the command itself is fine too). */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!a.startsWith('--') || a === '--') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq > 0 ? eq : undefined);
    if (SWITCHES.has(name) && eq < 0) {
      flags.set(name, true);
    } else if (VALUED.has(name)) {
      const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (value === undefined) throw usage(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw usage(`unknown option --${name}`);
    }
  }
  return { positionals, flags };
}

/** The hint every usage error carries (and how main tells them apart: exit code 2). */
export const USAGE_HINT = 'see `uplink --help`';

/** A usage error (exit code 2); `how` goes before the usual hint. */
export function usage(message: string, how?: string): HubError {
  return new HubError('core', 'Invalid', message, { hint: how ? `${how}; ${USAGE_HINT}` : USAGE_HINT });
}

/** Whether an error is a usage error (exit code 2). */
export const isUsage = (err: HubError): boolean => err.hint?.endsWith(USAGE_HINT) === true;

/** A string flag, if given. */
export function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

/** A non-negative integer flag within `min`..`max` (inclusive), if given. */
export function intFlag(args: ParsedArgs, name: string, range: { min?: number; max?: number } = {}): number | undefined {
  const v = flag(args, name);
  if (v === undefined) return undefined;
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range;
  const n = Number(v);
  const what = range.min === undefined && range.max === undefined ? 'a non-negative integer' : `an integer from ${min} to ${max}`;
  if (!/^\d+$/.test(v) || n < min || n > max) throw usage(`--${name} must be ${what}, not "${v}"`);
  return n;
}

/** A flag that must be one of `values`, if given. */
export function enumFlag<T extends string>(args: ParsedArgs, name: string, values: readonly T[]): T | undefined {
  const v = flag(args, name);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) throw usage(`--${name} cannot be "${v}"`, `use one of ${values.join(', ')}`);
  return v as T;
}
