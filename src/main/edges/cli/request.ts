/**
 * The CLI's commands as data: `{command, args}`. The command line becomes one (usage errors here,
 * exit 2), and the same value runs in an embedded hub or travels to the running hub's `POST /cli`,
 * which checks it again with `parseCliBody` (types, known fields, enumerations, sizes) because a
 * body is untrusted whoever sent it. Light on purpose: the forwarding path loads this, not the hub.
 */
import { HubError } from '../../hub';
import { OUTCOMES } from '../../../shared/audit-record';
import { enumFlag, flag, intFlag, usage } from './args';
import type { ParsedArgs } from './args';
import { MIN_PREFIX_CHARS, tooShortPrefix } from './approvals';
import { escapeControl } from '../../../shared/escape';

/** What `--state` may be: how a call ended. */
export const LOG_STATES = OUTCOMES;
/** `--limit` bound: the entries are held in memory before printing oldest-first. */
export const MAX_LOG_LIMIT = 1_000_000;
export const REPLY_HINTS = ['full', 'short', 'none'] as const;
export const INTERACTIONS = ['typed', 'semantic_ui', 'visual_ui'] as const;
export const AGENT_ACTIONS = ['list', 'create', 'revoke'] as const;
export const DRIVER_ACTIONS = ['status', 'trust', 'restart'] as const;
const SHA256 = /^[0-9a-fA-F]{64}$/;
/** What `approve` grants: once (default), `--session`, `--always` — the panel's buttons. */
export const APPROVALS = ['once', 'session', 'always'] as const;
/** The longest `--reason` the hub keeps (the panel's bound too). */
export const MAX_REASON_CHARS = 2000;
/** An approval id, or the unique prefix of one, is short; the bound keeps a pasted blob out of errors. */
export const MAX_APPROVAL_ID_CHARS = 256;

type Str = string;
/** Each command's args. Optional fields are absent, never undefined (the body is JSON). */
export interface CliCommands {
  doctor: Record<string, never>;
  channels: Record<string, never>;
  ops: { channel: Str };
  send: { channel: Str; message: Str; reply_hint: (typeof REPLY_HINTS)[number] };
  recv: { cursor?: number; driver?: Str };
  /** `json_args` is the text as typed: the hub parses it, so a malformed one is audited there. */
  invoke: { channel: Str; op: Str; json_args?: Str; interaction?: (typeof INTERACTIONS)[number]; provider?: Str };
  tier: { channel: Str; tier: Str };
  agents: { action: (typeof AGENT_ACTIONS)[number]; name?: Str };
  /** `sha256`: the hash the operator checked; the hub refuses the trust when the file has another. */
  drivers: { action: (typeof DRIVER_ACTIONS)[number]; id?: Str; sha256?: Str };
  log: { follow: boolean; limit: number; channel?: Str; op?: Str; agent?: Str; state?: (typeof LOG_STATES)[number]; text?: Str };
  /** The pending approval prompts, oldest first. */
  approvals: Record<string, never>;
  /** `id`: an approval id or a unique prefix of one (the hub resolves it). */
  approve: { id: Str; decision: (typeof APPROVALS)[number] };
  /** `reason` is returned to the agent. */
  deny: { id: Str; reason?: Str };
}
export type CliCommand = keyof CliCommands;
export type CliRequest = { [C in CliCommand]: { command: C; args: CliCommands[C] } }[CliCommand];

/** Where the CLI runs (its tmux pane), so the hub's drivers see the same caller an embedded hub would. */
export interface CliCaller {
  tmux?: string;
  tmux_pane?: string;
}

/** The body of `POST /cli`. `user` is the OS account holding the operator key. */
export interface CliBody {
  command: CliCommand;
  args: CliCommands[CliCommand];
  user: string;
  caller?: CliCaller;
}

/** The largest `POST /cli` body: room for a 64 KiB message or args, so the hub's own limits speak. */
export const MAX_CLI_BODY_BYTES = 1024 * 1024;
const MAX_USER = 256;
const MAX_CALLER = 4096;

/** The command's operands: at least `min`, at most `max`. */
function need(args: ParsedArgs, min: number, max: number, what: string): string[] {
  const operands = args.positionals.slice(1);
  if (operands.length < min) throw usage(`${args.positionals[0]} needs ${what}`);
  if (operands.length > max) throw usage(`too many arguments for ${args.positionals[0]} (expected ${what})`);
  return operands;
}

/** Drops undefined fields, so the request is the same JSON whichever way it travels. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** `--session`, `--always` and `--reason` belong to approve and deny only. */
function decisionFlags(args: ParsedArgs, command: string | undefined): void {
  const misplaced = (['session', 'always', 'reason'] as const).filter(
    (f) => args.flags.has(f) && !(command === 'approve' && f !== 'reason') && !(command === 'deny' && f === 'reason'),
  );
  if (misplaced.length) throw usage(`--${misplaced[0]} is for ${misplaced[0] === 'reason' ? 'deny' : 'approve'}`);
}

/** The approval id operand of approve/deny: an id or a prefix of at least 4 characters. */
function approvalId(args: ParsedArgs, what: string): string {
  const [id] = need(args, 1, 1, what);
  if (id!.length > MAX_APPROVAL_ID_CHARS) throw usage(`an approval id is at most ${MAX_APPROVAL_ID_CHARS} characters`, 'list them with `uplink approvals`');
  if (tooShortPrefix(id!))
    throw usage(`approval id "${escapeControl(id!)}" is too short: give at least ${MIN_PREFIX_CHARS} characters of it`, 'copy it from `uplink approvals`');
  return id!;
}

/** The request a command line asks for, or undefined for commands that are not hub calls. */
export function requestFromArgs(args: ParsedArgs): CliRequest | undefined {
  const command = args.positionals[0];
  decisionFlags(args, command);
  switch (command) {
    case 'doctor':
    case 'channels':
      return { command, args: {} };
    case 'ops': {
      const [channel] = need(args, 1, 1, '<channel>');
      return { command, args: { channel: channel! } };
    }
    case 'send': {
      const [channel, message] = need(args, 2, 2, '<channel> <message>');
      const hint = flag(args, 'reply-hint') ?? 'full';
      if (!(REPLY_HINTS as readonly string[]).includes(hint)) throw usage(`--reply-hint must be full, short or none, not "${hint}"`);
      return { command, args: { channel: channel!, message: message!, reply_hint: hint as 'full' } };
    }
    case 'recv':
      need(args, 0, 0, 'no operands (use --cursor N, --driver D)');
      return { command, args: defined({ cursor: intFlag(args, 'cursor'), driver: flag(args, 'driver') }) };
    case 'invoke': {
      const [channel, op, raw] = need(args, 2, 3, '<channel> <op> [json-args]');
      const interaction = flag(args, 'interaction');
      if (interaction !== undefined && !(INTERACTIONS as readonly string[]).includes(interaction))
        throw usage(`--interaction must be typed, semantic_ui or visual_ui, not "${interaction}"`);
      return {
        command,
        args: defined({ channel: channel!, op: op!, json_args: raw, interaction: interaction as 'typed' | undefined, provider: flag(args, 'provider') }),
      };
    }
    case 'tier': {
      const [channel, tier] = need(args, 2, 2, '<channel> <tier>');
      return { command, args: { channel: channel!, tier: tier! } };
    }
    case 'agents': {
      const [sub, name] = need(args, 0, 2, '[create <name> | revoke <name>]');
      if (sub === undefined) return { command, args: { action: 'list' } };
      if (sub !== 'create' && sub !== 'revoke') throw usage(`unknown agents command "${sub}" (expected create or revoke)`);
      if (name === undefined) throw usage(`agents ${sub} needs <name>`);
      return { command, args: { action: sub, name } };
    }
    case 'drivers': {
      const [sub, id] = need(args, 0, 2, '[trust <id> | restart <id>]');
      if (sub === undefined) return { command, args: { action: 'status' } };
      if (sub !== 'trust' && sub !== 'restart') throw usage(`unknown drivers command "${sub}" (expected trust or restart)`);
      if (id === undefined) throw usage(`drivers ${sub} needs <id>`);
      const sha256 = flag(args, 'sha256');
      if (sha256 !== undefined && (sub !== 'trust' || !SHA256.test(sha256)))
        throw usage(sub === 'trust' ? `--sha256 must be 64 hex digits, not "${sha256.slice(0, 80)}"` : '--sha256 is for drivers trust');
      return { command, args: defined({ action: sub, id, sha256: sha256?.toLowerCase() }) };
    }
    case 'log':
      return {
        command,
        args: defined({
          follow: args.flags.has('follow'),
          limit: intFlag(args, 'limit', { min: 1, max: MAX_LOG_LIMIT }) ?? 50,
          channel: flag(args, 'channel') || undefined,
          op: flag(args, 'op') || undefined,
          agent: flag(args, 'agent') || undefined,
          state: enumFlag(args, 'state', LOG_STATES),
          text: flag(args, 'text') || undefined,
        }),
      };
    case 'approvals':
      need(args, 0, 0, 'no operands');
      return { command, args: {} };
    case 'approve': {
      const id = approvalId(args, '<id> (an approval id or a unique prefix of it, from `uplink approvals`)');
      if (args.flags.has('session') && args.flags.has('always')) throw usage('approve takes --session or --always, not both');
      return { command, args: { id, decision: args.flags.has('always') ? 'always' : args.flags.has('session') ? 'session' : 'once' } };
    }
    case 'deny': {
      const id = approvalId(args, '<id> (an approval id or a unique prefix of it, from `uplink approvals`)');
      const reason = flag(args, 'reason');
      if (reason !== undefined && reason.length > MAX_REASON_CHARS) throw usage(`--reason is at most ${MAX_REASON_CHARS} characters`);
      return { command, args: defined({ id, reason: reason || undefined }) };
    }
    default:
      return undefined;
  }
}

/** A field's type: a string, one of some strings, a bounded integer, or a switch. */
type Field = { type: 'string'; values?: readonly string[]; max?: number } | { type: 'int'; min: number; max: number } | { type: 'bool' };
const str: Field = { type: 'string' };
const oneOf = (values: readonly string[]): Field => ({ type: 'string', values });
/** Per command: its fields, required ones marked with a trailing `!`. */
const FIELDS: { [C in CliCommand]: Record<string, Field> } = {
  doctor: {},
  channels: {},
  ops: { 'channel!': str },
  send: { 'channel!': str, 'message!': str, 'reply_hint!': oneOf(REPLY_HINTS) },
  recv: { cursor: { type: 'int', min: 0, max: Number.MAX_SAFE_INTEGER }, driver: str },
  invoke: { 'channel!': str, 'op!': str, json_args: str, interaction: oneOf(INTERACTIONS), provider: str },
  tier: { 'channel!': str, 'tier!': str },
  agents: { 'action!': oneOf(AGENT_ACTIONS), name: str },
  drivers: { 'action!': oneOf(DRIVER_ACTIONS), id: str, sha256: str },
  log: {
    'follow!': { type: 'bool' },
    'limit!': { type: 'int', min: 1, max: MAX_LOG_LIMIT },
    channel: str,
    op: str,
    agent: str,
    state: oneOf(LOG_STATES),
    text: str,
  },
  approvals: {},
  approve: { 'id!': { type: 'string', max: MAX_APPROVAL_ID_CHARS }, 'decision!': oneOf(APPROVALS) },
  deny: { 'id!': { type: 'string', max: MAX_APPROVAL_ID_CHARS }, reason: { type: 'string', max: MAX_REASON_CHARS } },
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(message: string): HubError {
  return new HubError('core', 'Invalid', message, { hint: 'send {"command", "args", "user"} as `uplink` does; see `uplink --help`' });
}

function checkField(where: string, field: Field, v: unknown): void {
  if (field.type === 'bool' && typeof v !== 'boolean') throw invalid(`${where} must be true or false`);
  if (field.type === 'int' && (!Number.isSafeInteger(v) || (v as number) < field.min || (v as number) > field.max))
    throw invalid(`${where} must be an integer from ${field.min} to ${field.max}`);
  if (field.type === 'string') {
    if (typeof v !== 'string') throw invalid(`${where} must be a string`);
    if (field.values && !field.values.includes(v)) throw invalid(`${where} must be one of ${field.values.join(', ')}`);
    if (field.max !== undefined && v.length > field.max) throw invalid(`${where} must be at most ${field.max} characters`);
  }
}

function boundedString(where: string, v: unknown, max: number): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw invalid(`${where} must be a string of 1 to ${max} characters`);
  return v;
}

/** Checks a parsed `POST /cli` body (throws a `core:Invalid` HubError naming the first problem). */
export function parseCliBody(body: unknown): CliBody {
  if (!isObject(body)) throw invalid('the body must be a JSON object');
  for (const key of Object.keys(body)) if (!['command', 'args', 'user', 'caller'].includes(key)) throw invalid(`unknown field "${key.slice(0, 64)}"`);
  const { command, args, user, caller } = body;
  if (typeof command !== 'string' || !Object.hasOwn(FIELDS, command)) throw invalid(`command must be one of ${Object.keys(FIELDS).join(', ')}`);
  const fields = FIELDS[command as CliCommand];
  if (!isObject(args)) throw invalid('args must be an object');
  const known = new Map(Object.entries(fields).map(([k, f]) => [k.replace(/!$/, ''), { field: f, required: k.endsWith('!') }]));
  for (const key of Object.keys(args)) if (!known.has(key)) throw invalid(`${command} takes no argument "${key.slice(0, 64)}"`);
  for (const [key, { field, required }] of known) {
    if (args[key] === undefined) {
      if (required) throw invalid(`${command} needs args.${key}`);
      continue;
    }
    checkField(`args.${key}`, field, args[key]);
  }
  const out: CliBody = { command: command as CliCommand, args: args as CliCommands[CliCommand], user: boundedString('user', user, MAX_USER) };
  if (caller !== undefined) {
    if (!isObject(caller)) throw invalid('caller must be an object');
    const c: CliCaller = {};
    for (const [key, v] of Object.entries(caller)) {
      if (key !== 'tmux' && key !== 'tmux_pane') throw invalid(`unknown caller field "${key.slice(0, 64)}"`);
      c[key] = boundedString(`caller.${key}`, v, MAX_CALLER);
    }
    out.caller = c;
  }
  return out;
}
