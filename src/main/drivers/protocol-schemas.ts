/**
 * The driver protocol's payloads (docs/driver-protocol.md) as JSON Schema, Draft 2020-12, each
 * declared once with TypeBox: the contract's types (`contract.ts`) are derived from these, and the
 * same schemas check what crosses the protocol. The host checks a driver's handshake and answers
 * with them, `uplink driver check` holds a driver to them, and the hub's `send` and `recv`
 * capabilities take and give them.
 *
 * What a driver answers is read liberally (an object may carry properties a later version adds);
 * what the hub sends a driver is exact.
 */
import { Type } from '@sinclair/typebox';
import type { SchemaOptions } from '@sinclair/typebox';
import type { InteractionKind, JsonSchema, JsonValue } from '../kernel';
import { DRIVER_ERROR_KINDS } from './contract';

/**
 * One of `values`, as an `enum` (a failure then names every allowed value, where a union of
 * constants would name only the first).
 */
function oneOf<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** Any JSON value: an op's args and result, a channel's detail. */
export const JsonValueSchema = Type.Unsafe<JsonValue>({});

/** A JSON Schema document (an object) or a boolean schema. */
export const JsonSchemaSchema = Type.Unsafe<JsonSchema>({ anyOf: [{ type: 'object' }, { type: 'boolean' }] });

/** The interaction kinds the kernel selects among, least visual first. */
export const INTERACTION_KINDS = ['typed', 'semantic_ui', 'visual_ui'] as const satisfies readonly InteractionKind[];
export const InteractionSchema = oneOf(INTERACTION_KINDS);
// Does not compile when the kernel has a kind the list lacks.
const _everyKind: [Exclude<InteractionKind, (typeof INTERACTION_KINDS)[number]>] extends [never] ? true : false = true;

export const DriverKindSchema = oneOf(['messaging', 'capability', 'both']);

export const TierRiskSchema = oneOf(['low', 'medium', 'high'], { description: 'How much an agent can do at a tier: the panel colours the tier by it.' });

export const TierSpecSchema = Type.Object(
  {
    name: Type.String({ description: "What setTier takes, and what a channel's detail.tier reports." }),
    description: Type.String({ description: 'What an agent may do on a channel at this tier, in one line.' }),
    risk: TierRiskSchema,
  },
  { description: 'Uplink extension: one permission tier a human may give a channel.' },
);

export const DriverInfoSchema = Type.Object(
  {
    id: Type.String(),
    kind: DriverKindSchema,
    summary: Type.String(),
    tiers: Type.Optional(
      Type.Array(TierSpecSchema, {
        description:
          'Uplink extension: the permission tiers setTier takes, least power first. Present only on a driver with setTier; the panel offers exactly these.',
      }),
    ),
  },
  { description: 'Who a driver is.' },
);

export const ChannelEntrySchema = Type.Object(
  {
    channel: Type.String({ description: 'The full address, <driver>:<addr>.' }),
    labels: Type.Array(Type.String()),
    detail: Type.Unsafe<JsonValue>({ description: 'Driver-specific facts about the channel.' }),
  },
  { description: 'One addressable target of a driver.' },
);

export const OpSpecSchema = Type.Object(
  {
    op: Type.String(),
    summary: Type.String(),
    mutating: Type.Optional(Type.Boolean({ description: 'A missing mutating counts as mutating.' })),
    params_schema: JsonSchemaSchema,
    result_schema: JsonSchemaSchema,
    interactions: Type.Optional(
      Type.Array(InteractionSchema, {
        description:
          "Uplink extension: the interaction kinds the driver can serve this op through (omitted: typed only); the chosen one arrives in the InvokeContext's interaction.",
      }),
    ),
    sensitive_args: Type.Optional(
      Type.Array(Type.String(), { description: 'Uplink extension: args fields whose values must never be stored (e.g. typed passwords).' }),
    ),
  },
  { description: 'One operation a driver offers on its channels.' },
);

export const ReplyHintSchema = oneOf(['full', 'short', 'none']);

/**
 * The longest message a `send` carries, in characters. The hub refuses one over 64 KiB of UTF-8
 * before anything reads it; the schema states the bound to whoever reads it.
 */
export const MAX_SEND_MESSAGE_CHARS = 64 * 1024;

export const SendRequestSchema = Type.Object(
  { message: Type.String({ maxLength: MAX_SEND_MESSAGE_CHARS }), reply_hint: ReplyHintSchema },
  { additionalProperties: false },
);

export const SendReceiptSchema = Type.Object({
  delivered: Type.Boolean(),
  correlation_id: Type.String(),
  verify_excerpt: Type.Optional(Type.String()),
  injected_at: Type.String({ description: 'RFC 3339 time of the injection.' }),
});

/** What a `recv` asks for: the items after `cursor` (from the start without it). */
export const RecvRequestSchema = Type.Object({ cursor: Type.Optional(Type.Integer({ minimum: 0 })) }, { additionalProperties: false });

export const RecvItemSchema = Type.Object({
  cursor: Type.Integer(),
  at: Type.String({ description: 'RFC 3339 time the item was seen.' }),
  from: Type.Optional(Type.String({ description: 'The sender the text names: a claim of whoever wrote it, not an identity.' })),
  id: Type.Optional(
    Type.String({ description: 'The correlation id the item carries; absent on a reply seen where its id was never sent (not_from_addressee).' }),
  ),
  raw: Type.String(),
  channel: Type.Optional(
    Type.String({ description: 'Uplink extension: the channel the item was read from (<driver>:<addr>). A messaging driver sets it on every item.' }),
  ),
  sent_to: Type.Optional(
    Type.String({ description: 'Uplink extension: on a reply, the channel its correlation id was sent to, when the driver remembers it.' }),
  ),
  not_from_addressee: Type.Optional(
    Type.Boolean({
      description:
        "Uplink extension: true on a reply that appeared neither where its correlation id was sent nor in the sender's own channel: someone else wrote it, so it is no answer (its id is left out).",
    }),
  ),
});

export const RecvBatchSchema = Type.Object({ items: Type.Array(RecvItemSchema), next_cursor: Type.Integer() });

export const DoctorReportSchema = Type.Object({ driver: Type.String(), ok: Type.Boolean(), lines: Type.Array(Type.String()) });

export const CallerEnvironmentSchema = Type.Object(
  {
    pid: Type.Optional(
      Type.Integer({
        minimum: 2,
        description:
          "The calling process, as the hub established it (the one process that holds the caller's connection). Absent: the hub has no evidence of where the caller runs.",
      }),
    ),
    tmux: Type.Optional(Type.String({ description: 'Not sent by this hub: $TMUX as a caller claims it proves nothing (see pid).' })),
    tmux_pane: Type.Optional(Type.String({ description: 'Not sent by this hub: $TMUX_PANE as a caller claims it proves nothing (see pid).' })),
  },
  {
    description:
      "Uplink extension: a caller outside the hub's own process. Present (even empty): the call is not the driver process's own, so the driver's environment says nothing about it. A terminal is the caller's only when pid proves it (a tmux pane's process is pid or one of its ancestors).",
  },
);

export const InvokeContextSchema = Type.Object(
  {
    interaction: Type.Optional(InteractionSchema),
    agent: Type.Optional(
      Type.String({ description: 'Who asked: the id the caller authenticated as, never a name a client declared (for envelopes and the audit).' }),
    ),
    invocation_id: Type.Optional(Type.String()),
    caller: Type.Optional(CallerEnvironmentSchema),
    deadline_ms: Type.Optional(Type.Number({ description: "How many milliseconds the hub waits for this call's answer." })),
  },
  { description: 'Uplink extension: facts the hub passes along with a call.' },
);

export const ApprovalPreviewSchema = Type.Object(
  {
    text: Type.Optional(Type.String({ description: 'The action in words.' })),
    image_png: Type.Optional(Type.String({ description: 'Base64 PNG of the target (desktop windows).' })),
    mark: Type.Optional(
      Type.Object(
        { x: Type.Number(), y: Type.Number(), width: Type.Optional(Type.Number()), height: Type.Optional(Type.Number()) },
        { description: 'Where the action lands, in image pixels.' },
      ),
    ),
    lines: Type.Optional(Type.Array(Type.String(), { description: "The target's last lines of text, control characters escaped." })),
    lines_hidden: Type.Optional(Type.String({ description: 'Why lines is missing although the target has text.' })),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'Why what the prompt shows may not be what the action meets.' })),
  },
  { description: 'Uplink extension: shown to the operator with an approval prompt.' },
);

export const DriverErrorKindSchema = oneOf(DRIVER_ERROR_KINDS);

export const DriverErrorWireSchema = Type.Object(
  {
    kind: DriverErrorKindSchema,
    message: Type.String(),
    hint: Type.Optional(Type.String()),
    evidence: Type.Optional(
      Type.Unsafe<JsonValue>({ description: 'What the driver saw, any JSON value: kept as JSON for the operator, never shown to the agent.' }),
    ),
  },
  { description: "A driver's failure as it crosses the wire: a JSON-RPC error's data." },
);

// ── the protocol's methods: what the hub sends, what a driver answers ──────────────────────────

export const InitializeParamsSchema = Type.Object({ protocol_version: Type.String(), uplink_version: Type.String() }, { additionalProperties: false });

export const InitializeResultSchema = Type.Object({
  protocol_version: Type.String(),
  info: DriverInfoSchema,
  extensions: Type.Optional(Type.Array(Type.String(), { description: 'The optional methods the driver serves.' })),
});

/** The data of an error answering `initialize` from a driver that speaks other versions. */
export const UnsupportedVersionSchema = Type.Object({ supported: Type.Array(Type.String()) });

export const ChannelsResultSchema = Type.Array(ChannelEntrySchema);
export const OpsResultSchema = Type.Array(OpSpecSchema);

export const SendParamsSchema = Type.Object(
  { addr: Type.String(), request: SendRequestSchema, context: Type.Optional(InvokeContextSchema) },
  { additionalProperties: false },
);
export const InvokeParamsSchema = Type.Object(
  { addr: Type.String(), op: Type.String(), args: JsonValueSchema, context: InvokeContextSchema },
  { additionalProperties: false },
);
export const RecvParamsSchema = Type.Object({ cursor: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) }, { additionalProperties: false });
export const PreviewParamsSchema = Type.Object({ addr: Type.String(), op: Type.String(), args: JsonValueSchema }, { additionalProperties: false });
export const PreviewResultSchema = Type.Union([ApprovalPreviewSchema, Type.Null()]);
export const PrecheckParamsSchema = Type.Object(
  { addr: Type.String(), op: Type.String(), args: JsonValueSchema, context: Type.Optional(InvokeContextSchema) },
  { additionalProperties: false },
);
export const InteractionsForParamsSchema = Type.Object({ addr: Type.String() }, { additionalProperties: false });
export const InteractionsForResultSchema = Type.Array(InteractionSchema);
export const SetTierParamsSchema = Type.Object({ addr: Type.String(), tier: Type.String() }, { additionalProperties: false });
export const CancelParamsSchema = Type.Object({ id: Type.Union([Type.Integer(), Type.String()]) }, { additionalProperties: false });
