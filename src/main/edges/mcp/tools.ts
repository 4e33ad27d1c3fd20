/**
 * The seven MCP tools (cc-uplink's names and parameters; see docs/driver-contract.md): their input
 * and output schemas, annotations, and the validation of a call's arguments. Every failure becomes
 * one rendered `uplink error […]` line. The schemas stay within what draft-07 and 2020-12
 * validators both read (the SDK client checks results with draft-07 Ajv).
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileSchema, firstSchemaError } from '../schema';
import { checkBounds, HubError, MAX_OP_CHARS } from '../../hub';

/** The tool names. */
export type ToolName = 'channel_list' | 'channel_describe' | 'channel_send' | 'channel_observe' | 'channel_act' | 'channel_recv' | 'channel_doctor';

/** A tool as `tools/list` returns it. */
export interface ToolDefinition {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Absent where the result has no fixed shape (an op's result varies per op). */
  outputSchema?: Record<string, unknown>;
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const strings = { type: 'array', items: str };
const object = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({ type: 'object', properties, required });
const any = (description: string): Record<string, unknown> => ({ description });

const interaction = { type: 'string', enum: ['typed', 'semantic_ui', 'visual_ui'], description: 'Force an interaction kind (hard constraint).' };
const provider = { type: 'string', description: 'Force a provider id, e.g. uplink/desktop-visual (hard constraint).' };
const channel = { type: 'string', description: "Channel address <driver>:<addr>, e.g. tmux:%3 or tmux:codex; another hub's channel in a fleet is <hub>/<driver>:<addr>, e.g. buildbox/tmux:%3." };
const args = {
  type: 'object',
  description: "The op's args: an object matching its params_schema (see channel_describe). A JSON string of that object is accepted too and parsed before validation.",
};
const invokeInput = object({ channel, op: { type: 'string' }, args, interaction, provider }, ['channel', 'op']);

const channelEntry = object({ channel: str, labels: strings, detail: any('Driver-specific facts about the channel.') }, ['channel', 'labels', 'detail']);
const opDescription = object(
  {
    op: str,
    summary: str,
    mutating: bool,
    capability_id: str,
    tool: { type: 'string', enum: ['channel_observe', 'channel_act', 'channel_send', 'channel_recv'] },
    interactions: { type: 'array', items: { type: 'string', enum: ['typed', 'semantic_ui', 'visual_ui'] } },
    params_schema: any('JSON Schema of the op\'s args.'),
    result_schema: any('JSON Schema of the op\'s result (before images move to content items).'),
    sensitive_args: strings,
  },
  ['op', 'summary', 'mutating', 'capability_id', 'tool', 'interactions', 'params_schema', 'result_schema'],
);
const fileState = object({ ok: bool, path: str, error: str }, ['ok', 'path']);

/** Read-only tools: the destructive/idempotent hints are set anyway so no client has to guess. */
const looking = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/** Tool definitions as `tools/list` returns them. */
export const TOOLS: ToolDefinition[] = [
  {
    name: 'channel_list',
    title: 'List channels',
    description: 'List every channel of every enabled driver (channel, labels, detail).',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: object({ channels: { type: 'array', items: channelEntry } }, ['channels']),
    // Closed world: the hub's own view of the drivers it runs, no content from the targets.
    annotations: { title: 'List channels', ...looking, openWorldHint: false },
  },
  {
    name: 'channel_describe',
    title: 'Describe a channel',
    description: 'Describe a channel and its ops (params_schema, result_schema, mutating, and which tool takes each op). Pass op to describe one op.',
    inputSchema: { type: 'object', properties: { channel, op: { type: 'string' } }, required: ['channel'], additionalProperties: false },
    outputSchema: object({ channel: channelEntry, ops: { type: 'array', items: opDescription } }, ['channel', 'ops']),
    annotations: { title: 'Describe a channel', ...looking, openWorldHint: false },
  },
  {
    name: 'channel_send',
    title: 'Send a message',
    description: 'Send a one-line message to a channel (mutating: needs operator approval). Returns a SendReceipt.',
    inputSchema: {
      type: 'object',
      properties: { channel, message: { type: 'string' }, reply_hint: { type: 'string', enum: ['full', 'short', 'none'], description: 'How the recipient is told to reply (default full).' } },
      required: ['channel', 'message'],
      additionalProperties: false,
    },
    outputSchema: object({ delivered: bool, correlation_id: str, verify_excerpt: str, injected_at: { type: 'string', description: 'RFC 3339 time of the injection.' } }, [
      'delivered',
      'correlation_id',
      'injected_at',
    ]),
    // Adds a message without taking anything away; sending twice delivers it twice.
    annotations: { title: 'Send a message', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'channel_observe',
    title: 'Observe a channel',
    description:
      "Run a read-only op (mutating: false) on a channel, e.g. tmux read or desktop screenshot. Returns the op's result (its result_schema is in channel_describe) as JSON text; images in it come as image content items. Mutating ops go through channel_act.",
    inputSchema: { ...invokeInput, additionalProperties: false },
    // No outputSchema: the result's shape is the op's, not the tool's.
    // Open world: what it reads was written by software outside Uplink (treat it as untrusted).
    annotations: { title: 'Observe a channel', ...looking, openWorldHint: true },
  },
  {
    name: 'channel_act',
    title: 'Act on a channel',
    description:
      "Run a mutating op on a channel (needs operator approval), e.g. tmux type or keys. Returns the op's result as JSON text, like channel_observe. Read-only ops go through channel_observe.",
    inputSchema: { ...invokeInput, additionalProperties: false },
    // Typing keys or clicking into other software can overwrite or delete its state, and doing it twice does it twice.
    annotations: { title: 'Act on a channel', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'channel_recv',
    title: 'Receive replies',
    description: 'Read replies and envelopes seen since a cursor (cursors are per driver; pass next_cursor back).',
    inputSchema: { type: 'object', properties: { cursor: { type: 'integer', minimum: 0 }, driver: { type: 'string', description: 'Messaging driver (default: the first).' } }, additionalProperties: false },
    outputSchema: object(
      {
        items: { type: 'array', items: object({ cursor: int, at: { type: 'string', description: 'RFC 3339 time the item was seen.' }, from: str, id: str, raw: str }, ['cursor', 'at', 'raw']) },
        next_cursor: int,
      },
      ['items', 'next_cursor'],
    ),
    // The caller holds the cursor, so the same call reads the same items; other agents wrote them.
    annotations: { title: 'Receive replies', ...looking, openWorldHint: true },
  },
  {
    name: 'channel_doctor',
    title: 'Check health',
    description: "Health of the hub and of every driver (ok, lines), plus the config file's state.",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: object(
      {
        ok: bool,
        drivers: { type: 'array', items: object({ driver: str, ok: bool, lines: strings }, ['driver', 'ok', 'lines']) },
        config: fileState,
        audit: fileState,
        agents: fileState,
        panels_attached: int,
        disabled: strings,
        warnings: strings,
      },
      ['ok', 'drivers', 'config', 'audit', 'agents', 'panels_attached'],
    ),
    annotations: { title: 'Check health', ...looking, openWorldHint: false },
  },
];

const validators = new Map<string, ValidateFunction>(TOOLS.map((t) => [t.name, compileSchema(t.inputSchema)]));

/**
 * Validates a tool call's arguments; throws Invalid naming the pointer and keyword. `args` given
 * as a JSON string (some clients stringify objects) is parsed first and validated as what it holds.
 */
export function checkToolArgs(name: string, raw: unknown): Record<string, unknown> {
  const validate = validators.get(name);
  let input = (raw ?? {}) as Record<string, unknown>;
  const chan = typeof input.channel === 'string' ? input.channel : undefined;
  const driver = chan && chan.indexOf(':') > 0 ? chan.slice(0, chan.indexOf(':')) : 'core';
  // Channel and op bounds before anything looks at them (the schema check, the driver name, the
  // audit record). Args are bounded once, by the hub every call reaches: nothing here walks them.
  checkBounds(input.channel, input.op, undefined);
  if (typeof input.args === 'string') input = { ...input, args: parseArgs(driver, typeof input.op === 'string' ? input.op : 'the op', input.args) };
  for (const field of ['driver', 'provider', 'interaction'] as const) {
    const v = input[field];
    if (typeof v === 'string' && v.length > MAX_OP_CHARS) {
      throw new HubError('core', 'Invalid', `${name} ${field} is ${v.length} characters; the limit is ${MAX_OP_CHARS}`, { hint: `see the ${name} input schema in tools/list` });
    }
  }
  if (!validate) throw new Error(`no validator for tool ${name}`);
  if (!validate(input)) {
    const e = firstSchemaError(validate.errors);
    throw new HubError(driver, 'Invalid', `${name} arguments are invalid at ${e.where}: ${e.keyword}${e.named}`, { hint: `see the ${name} input schema in tools/list` });
  }
  return input;
}

function parseArgs(driver: string, op: string, args: string): unknown {
  try {
    return JSON.parse(args);
  } catch (e) {
    throw new HubError(driver, 'Invalid', `args for ${op} are not valid JSON (${(e as Error).message})`, { hint: 'pass args as a JSON object, e.g. {"lines": 20}' });
  }
}
