/**
 * The seven MCP tools (cc-uplink's names and parameters; see docs/driver-contract.md): their input
 * and output schemas, each declared once with TypeBox (the types of a call's arguments and of a
 * tool's structured result are derived from them), annotations, and the validation of a call's
 * arguments. Every failure becomes one rendered `uplink error […]` line. The schemas stay within
 * what draft-07 and 2020-12 validators both read (the SDK client checks results with draft-07 Ajv).
 */
import { Type } from '@sinclair/typebox';
import type { Static, TObject } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileSchema, describeSchemaError } from '../schema';
import {
  ChannelEntrySchema,
  checkBounds,
  DoctorReportSchema,
  driverOfChannel,
  HubError,
  INTERACTION_KINDS,
  MAX_OP_CHARS,
  OpSpecSchema,
  RecvBatchSchema,
  SendReceiptSchema,
} from '../../hub';
import type { InteractionKind, JsonSchema, JsonValue, OpDescription } from '../../hub';
import { MAX_CURSOR_CHARS } from './recv';

/** The tool names. */
export type ToolName = 'channel_list' | 'channel_describe' | 'channel_send' | 'channel_observe' | 'channel_act' | 'channel_recv' | 'channel_doctor';

/** A tool as `tools/list` returns it. */
export interface ToolDefinition {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: TObject;
  /** Absent where the result has no fixed shape (an op's result varies per op). */
  outputSchema?: TObject;
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

const closed = { additionalProperties: false } as const;
const strings = Type.Array(Type.String());
const oneOf = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

const channel = Type.String({
  description: "Channel address <driver>:<addr>, e.g. tmux:%3 or tmux:codex; another hub's channel in a fleet is <hub>/<driver>:<addr>, e.g. buildbox/tmux:%3.",
});
const invokeProperties = {
  channel,
  op: Type.String(),
  args: Type.Optional(
    Type.Unsafe<{ [key: string]: JsonValue }>({
      type: 'object',
      description:
        "The op's args: an object matching its params_schema (see channel_describe). A JSON string of that object is accepted too and parsed before validation.",
    }),
  ),
  interaction: Type.Optional(oneOf(INTERACTION_KINDS satisfies readonly InteractionKind[], 'Force an interaction kind (hard constraint).')),
  provider: Type.Optional(Type.String({ description: 'Force a provider id, e.g. uplink/desktop-visual (hard constraint).' })),
};

/** What each tool takes: declared once, as the schema `tools/list` shows and the call is checked against. */
const INPUTS = {
  channel_list: Type.Object({}, closed),
  channel_describe: Type.Object({ channel, op: Type.Optional(Type.String()) }, closed),
  channel_send: Type.Object(
    { channel, message: Type.String(), reply_hint: Type.Optional(oneOf(['full', 'short', 'none'], 'How the recipient is told to reply (default full).')) },
    closed,
  ),
  channel_observe: Type.Object(invokeProperties, closed),
  channel_act: Type.Object(invokeProperties, closed),
  channel_recv: Type.Object(
    {
      cursor: Type.Optional(
        Type.Union([Type.String({ maxLength: MAX_CURSOR_CHARS }), Type.Integer({ minimum: 0 })], {
          description:
            "Where to read from: the next_cursor of the last channel_recv, passed back as it was (omit it to read from the beginning). Without driver it is an opaque string holding every messaging driver's position; with driver, that driver's integer cursor.",
        }),
      ),
      driver: Type.Optional(
        Type.String({ description: 'Read one messaging driver only, with its own integer cursor (default: every messaging driver, merged).' }),
      ),
    },
    closed,
  ),
  channel_doctor: Type.Object({}, closed),
} satisfies Record<ToolName, TObject>;

/** A tool call's arguments, once checked. */
export type ToolInput<T extends ToolName> = Static<(typeof INPUTS)[T]>;

const OP_TOOLS = ['channel_observe', 'channel_act', 'channel_send', 'channel_recv'] as const satisfies ReadonlyArray<OpDescription['tool']>;

/** An op as channel_describe shows it: its OpSpec, normalized, with the tool that takes it. */
const OpDescriptionSchema = Type.Object({
  ...OpSpecSchema.properties,
  mutating: Type.Boolean(),
  capability_id: Type.String(),
  tool: oneOf(OP_TOOLS),
  interactions: Type.Array(oneOf(INTERACTION_KINDS)),
  params_schema: Type.Unsafe<JsonSchema>({ description: "JSON Schema of the op's args." }),
  result_schema: Type.Unsafe<JsonSchema>({ description: "JSON Schema of the op's result (before images move to content items)." }),
});
const fileState = Type.Object({ ok: Type.Boolean(), path: Type.String(), error: Type.Optional(Type.String()) });

/** What each tool with a fixed-shape result answers, as its structuredContent. */
const OUTPUTS = {
  channel_list: Type.Object({ channels: Type.Array(ChannelEntrySchema) }),
  channel_describe: Type.Object({ channel: ChannelEntrySchema, ops: Type.Array(OpDescriptionSchema) }),
  channel_send: SendReceiptSchema,
  channel_recv: Type.Object({
    items: RecvBatchSchema.properties.items,
    next_cursor: Type.Union([Type.String(), Type.Integer()], {
      description: "Pass it back as cursor: an opaque string when every messaging driver was read, the driver's integer cursor with driver.",
    }),
    failed: Type.Optional(
      Type.Array(Type.Object({ driver: Type.String(), error: Type.String() }), {
        description: 'Messaging drivers that could not be read this time (their position is kept in next_cursor).',
      }),
    ),
  }),
  channel_doctor: Type.Object({
    ok: Type.Boolean(),
    drivers: Type.Array(DoctorReportSchema),
    config: fileState,
    audit: fileState,
    agents: fileState,
    panels_attached: Type.Integer(),
    disabled: Type.Optional(strings),
    warnings: Type.Optional(strings),
  }),
} satisfies Partial<Record<ToolName, TObject>>;

/** A tool's structured result. */
export type ToolOutput<T extends keyof typeof OUTPUTS> = Static<(typeof OUTPUTS)[T]>;

/** Read-only tools: the destructive/idempotent hints are set anyway so no client has to guess. */
const looking = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/** Tool definitions as `tools/list` returns them. */
export const TOOLS: ToolDefinition[] = [
  {
    name: 'channel_list',
    title: 'List channels',
    description: 'List every channel of every enabled driver (channel, labels, detail).',
    inputSchema: INPUTS.channel_list,
    outputSchema: OUTPUTS.channel_list,
    // Closed world: the hub's own view of the drivers it runs, no content from the targets.
    annotations: { title: 'List channels', ...looking, openWorldHint: false },
  },
  {
    name: 'channel_describe',
    title: 'Describe a channel',
    description: 'Describe a channel and its ops (params_schema, result_schema, mutating, and which tool takes each op). Pass op to describe one op.',
    inputSchema: INPUTS.channel_describe,
    outputSchema: OUTPUTS.channel_describe,
    annotations: { title: 'Describe a channel', ...looking, openWorldHint: false },
  },
  {
    name: 'channel_send',
    title: 'Send a message',
    description: 'Send a one-line message to a channel (mutating: needs operator approval). Returns a SendReceipt.',
    inputSchema: INPUTS.channel_send,
    outputSchema: OUTPUTS.channel_send,
    // Adds a message without taking anything away; sending twice delivers it twice.
    annotations: { title: 'Send a message', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'channel_observe',
    title: 'Observe a channel',
    description:
      "Run a read-only op (mutating: false) on a channel, e.g. tmux read or desktop screenshot. Returns the op's result (its result_schema is in channel_describe) as JSON text; images in it come as image content items. Mutating ops go through channel_act.",
    inputSchema: INPUTS.channel_observe,
    // No outputSchema: the result's shape is the op's, not the tool's.
    // Open world: what it reads was written by software outside Uplink (treat it as untrusted).
    annotations: { title: 'Observe a channel', ...looking, openWorldHint: true },
  },
  {
    name: 'channel_act',
    title: 'Act on a channel',
    description:
      "Run a mutating op on a channel (needs operator approval), e.g. tmux type or keys. Returns the op's result as JSON text, like channel_observe. Read-only ops go through channel_observe.",
    inputSchema: INPUTS.channel_act,
    // Typing keys or clicking into other software can overwrite or delete its state, and doing it twice does it twice.
    annotations: { title: 'Act on a channel', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'channel_recv',
    title: 'Receive replies',
    description:
      'Read replies and envelopes seen since a cursor. Without driver, every messaging driver is read and the items merged, ordered by time then driver; pass next_cursor back as cursor (an opaque string). With driver, only that driver, with its integer cursor.',
    inputSchema: INPUTS.channel_recv,
    outputSchema: OUTPUTS.channel_recv,
    // The caller holds the cursor, so the same call reads the same items; other agents wrote them.
    annotations: { title: 'Receive replies', ...looking, openWorldHint: true },
  },
  {
    name: 'channel_doctor',
    title: 'Check health',
    description: "Health of the hub and of every driver (ok, lines), plus the config file's state.",
    inputSchema: INPUTS.channel_doctor,
    outputSchema: OUTPUTS.channel_doctor,
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
  const driver = driverOfChannel(chan);
  // Channel and op bounds before anything looks at them (the schema check, the driver name, the
  // audit record). Args are bounded once, by the hub every call reaches: nothing here walks them.
  checkBounds(input.channel, input.op, undefined);
  if (typeof input.args === 'string') input = { ...input, args: parseArgs(driver, typeof input.op === 'string' ? input.op : 'the op', input.args) };
  for (const field of ['driver', 'provider', 'interaction'] as const) {
    const v = input[field];
    if (typeof v === 'string' && v.length > MAX_OP_CHARS) {
      throw new HubError('core', 'Invalid', `${name} ${field} is ${v.length} characters; the limit is ${MAX_OP_CHARS}`, {
        hint: `see the ${name} input schema in tools/list`,
      });
    }
  }
  if (!validate) throw new Error(`no validator for tool ${name}`);
  if (!validate(input)) {
    throw new HubError(driver, 'Invalid', `${name} arguments are invalid: ${describeSchemaError(validate.errors)}`, {
      hint: `see the ${name} input schema in tools/list`,
    });
  }
  return input;
}

function parseArgs(driver: string, op: string, args: string): unknown {
  try {
    return JSON.parse(args);
  } catch (e) {
    throw new HubError(driver, 'Invalid', `args for ${op} are not valid JSON (${(e as Error).message})`, {
      hint: 'pass args as a JSON object, e.g. {"lines": 20}',
    });
  }
}
