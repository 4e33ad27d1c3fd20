/**
 * The seven MCP tools (cc-uplink's names and parameters; see docs/driver-contract.md), their input schemas, and the
 * validation of a call's arguments. Every failure becomes one rendered `uplink error […]` line.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { checkBounds, HubError, MAX_OP_CHARS } from '../../hub';

/** The tool names. */
export type ToolName = 'channel_list' | 'channel_describe' | 'channel_send' | 'channel_observe' | 'channel_act' | 'channel_recv' | 'channel_doctor';

const interaction = { type: 'string', enum: ['typed', 'semantic_ui', 'visual_ui'], description: 'Force an interaction kind (hard constraint).' };
const provider = { type: 'string', description: 'Force a provider id, e.g. uplink/desktop-visual (hard constraint).' };
const channel = { type: 'string', description: 'Channel address <driver>:<addr>, e.g. tmux:%3 or tmux:codex.' };
const args = { description: "The op's args: an object matching its params_schema (see channel_describe).", type: ['object', 'string'] };

/** Tool definitions as `tools/list` returns them. */
export const TOOLS: Array<{ name: ToolName; description: string; inputSchema: Record<string, unknown>; annotations: Record<string, unknown> }> = [
  {
    name: 'channel_list',
    description: 'List every channel of every enabled driver (ChannelEntry: channel, labels, detail).',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'channel_describe',
    description: "Describe a channel and its ops (params_schema, result_schema, mutating, and which tool takes each op). Pass op to describe one op.",
    inputSchema: { type: 'object', properties: { channel, op: { type: 'string' } }, required: ['channel'], additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'channel_send',
    description: 'Send a one-line message to a channel (mutating: needs operator approval). Returns a SendReceipt.',
    inputSchema: {
      type: 'object',
      properties: { channel, message: { type: 'string' }, reply_hint: { type: 'string', enum: ['full', 'short', 'none'], description: 'How the recipient is told to reply (default full).' } },
      required: ['channel', 'message'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false },
  },
  {
    name: 'channel_observe',
    description: 'Run a read-only op (mutating: false) on a channel, e.g. tmux read. Mutating ops go through channel_act.',
    inputSchema: { type: 'object', properties: { channel, op: { type: 'string' }, args, interaction, provider }, required: ['channel', 'op'], additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'channel_act',
    description: 'Run a mutating op on a channel (needs operator approval), e.g. tmux type or keys. Read-only ops go through channel_observe.',
    inputSchema: { type: 'object', properties: { channel, op: { type: 'string' }, args, interaction, provider }, required: ['channel', 'op'], additionalProperties: false },
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  {
    name: 'channel_recv',
    description: 'Read replies and envelopes seen since a cursor (cursors are per driver; pass next_cursor back).',
    inputSchema: { type: 'object', properties: { cursor: { type: 'integer', minimum: 0 }, driver: { type: 'string', description: 'Messaging driver (default: the first).' } }, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'channel_doctor',
    description: "Health of the hub and of every driver (ok, lines), plus the config file's state.",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  },
];

const ajv = new Ajv2020({ strict: false, allErrors: false });
const validators = new Map<string, ValidateFunction>(TOOLS.map((t) => [t.name, ajv.compile(t.inputSchema)]));

/** Validates a tool call's arguments; throws Invalid naming the pointer and keyword. */
export function checkToolArgs(name: string, raw: unknown): Record<string, unknown> {
  const validate = validators.get(name);
  const input = (raw ?? {}) as Record<string, unknown>;
  // Channel and op bounds before anything looks at them (the schema check, the driver name, the
  // audit record). Args are bounded once, by the hub every call reaches: nothing here walks them.
  checkBounds(input.channel, input.op, undefined);
  for (const field of ['driver', 'provider', 'interaction'] as const) {
    const v = input[field];
    if (typeof v === 'string' && v.length > MAX_OP_CHARS) {
      throw new HubError('core', 'Invalid', `${name} ${field} is ${v.length} characters; the limit is ${MAX_OP_CHARS}`, { hint: `see the ${name} input schema in tools/list` });
    }
  }
  const chan = typeof input.channel === 'string' ? input.channel : undefined;
  const driver = chan && chan.indexOf(':') > 0 ? chan.slice(0, chan.indexOf(':')) : 'core';
  if (!validate) {
    throw new HubError('core', 'NotFound', `no tool ${name}`, { hint: `the tools are ${TOOLS.map((t) => t.name).join(', ')}` });
  }
  if (!validate(input)) {
    const e = validate.errors?.[0];
    const where = e?.instancePath || '/';
    const extra = e?.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : e?.keyword === 'required' ? ` (${String((e.params as { missingProperty?: string }).missingProperty)})` : '';
    throw new HubError(driver, 'Invalid', `${name} arguments are invalid at ${where}: ${e?.keyword ?? 'schema'}${extra}`, { hint: `see the ${name} input schema in tools/list` });
  }
  return input;
}

/** Parses `args` given as a JSON string (some clients stringify objects). */
export function parseArgs(driver: string, op: string, args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args);
  } catch (e) {
    throw new HubError(driver, 'Invalid', `args for ${op} are not valid JSON (${(e as Error).message})`, { hint: 'pass args as a JSON object, e.g. {"lines": 20}' });
  }
}
