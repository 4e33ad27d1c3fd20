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

/** The kinds of a driver's failure; the schema of the wire form is built from this list. */
export const DRIVER_ERROR_KINDS = ['NotFound', 'Unavailable', 'Rejected', 'Timeout', 'Upstream', 'Invalid'] as const;

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

export const DriverKindSchema = oneOf(['messaging', 'capability', 'both'], {
  description:
    "What a driver serves: 'capability' only its ops; 'messaging' also send and recv (the hub offers them as its ops send and recv); 'both' the same as 'messaging' (a driver whose channels are both conversations and tools).",
});

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
    id: Type.String({
      description: "The driver id ([a-z][a-z0-9-]*): its channels are <id>:<addr>. An external driver's must equal the id its config entry gives it.",
    }),
    kind: DriverKindSchema,
    summary: Type.String({ description: 'What the driver gives access to, in one line (shown to agents and the operator).' }),
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
    op: Type.String({
      description:
        'The op name: lowercase letters and digits with single ".", "/" or "-" between them, starting with a letter. The hub offers it as the capability <driver>.<op> and refuses a driver that declares another name.',
    }),
    summary: Type.String({ description: 'What the op does, in one line: the capability description agents read.' }),
    mutating: Type.Optional(
      Type.Boolean({ description: "false: read-only, runs without the operator. true or missing: every call waits for the operator's approval." }),
    ),
    params_schema: Type.Unsafe<JsonSchema>({
      ...JsonSchemaSchema,
      description: "The args' JSON Schema (Draft 2020-12). The hub validates args against it and fills in its defaults before invoke.",
    }),
    result_schema: Type.Unsafe<JsonSchema>({
      ...JsonSchemaSchema,
      description: "The result's JSON Schema (Draft 2020-12). The hub validates every result against it; a result that does not conform fails the call.",
    }),
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

export const DoctorReportSchema = Type.Object(
  {
    driver: Type.String({ description: "The driver's id." }),
    ok: Type.Boolean({ description: 'Whether the driver can serve its channels now.' }),
    lines: Type.Array(Type.String(), { description: 'What it checked and found, one fact a line (shown by `uplink doctor`).' }),
  },
  { description: "A driver's health check." },
);

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
    message: Type.String({ description: 'What went wrong, in one line: shown to the agent as given.' }),
    hint: Type.Optional(Type.String({ description: 'What to do about it, in one line: shown after " — hint: ".' })),
    evidence: Type.Optional(
      Type.Unsafe<JsonValue>({
        description:
          "Any JSON value: what the driver saw (a pane's last lines, what changed about a target). For the operator's audit, not the agent's error line.",
      }),
    ),
  },
  { description: "A driver's failure as it crosses the wire: a JSON-RPC error's data." },
);

/** The JSON-RPC error object a driver answers a failed request with. */
export const RpcErrorSchema = Type.Object(
  {
    code: Type.Integer({
      description:
        "-32000 for a driver's own failure (data: a DriverError); -32601 unknown method; -32602 params it cannot read; -32700 a line that is not JSON; -32600 not a request.",
    }),
    message: Type.String(),
    data: Type.Optional(Type.Unsafe<JsonValue>({ description: 'With code -32000: a DriverError. Answering initialize: an UnsupportedVersion.' })),
  },
  { description: "A JSON-RPC 2.0 response's error member." },
);

// ── the protocol's methods: what the hub sends, what a driver answers ──────────────────────────

export const InitializeParamsSchema = Type.Object(
  {
    protocol_version: Type.String({ description: 'The protocol version the hub speaks.' }),
    uplink_version: Type.String({ description: "The hub's Uplink version." }),
  },
  { additionalProperties: false },
);

/** The params of the methods that take none (`info`, `channels`, `ops`, `doctor`, `shutdown`). */
export const EmptyParamsSchema = Type.Object({}, { additionalProperties: false });

/** The result of the methods that answer nothing (`precheck` that lets a call through, `set_tier`, `shutdown`). */
export const NullResultSchema = Type.Null();

export const InitializeResultSchema = Type.Object({
  protocol_version: Type.String({ description: "The protocol version the driver speaks: the hub uses it only when it is the hub's." }),
  info: DriverInfoSchema,
  extensions: Type.Optional(Type.Array(Type.String(), { description: 'The optional methods the driver serves.' })),
});

/** The data of an error answering `initialize` from a driver that speaks other versions. */
export const UnsupportedVersionSchema = Type.Object(
  { supported: Type.Array(Type.String(), { description: 'The protocol versions the driver speaks.' }) },
  { description: "The data of the error a driver answers initialize with when it does not speak the hub's version." },
);

export const ChannelsResultSchema = Type.Array(ChannelEntrySchema);
export const OpsResultSchema = Type.Array(OpSpecSchema);

const AddrSchema = Type.String({ description: 'The channel without its "<driver>:" prefix.' });

export const SendParamsSchema = Type.Object(
  { addr: AddrSchema, request: SendRequestSchema, context: Type.Optional(InvokeContextSchema) },
  { additionalProperties: false },
);
export const InvokeParamsSchema = Type.Object(
  {
    addr: AddrSchema,
    op: Type.String({ description: 'One of the ops the driver declared.' }),
    args: Type.Unsafe<JsonValue>({ description: "Validated against the op's params_schema, its defaults filled in." }),
    context: InvokeContextSchema,
  },
  { additionalProperties: false },
);
/** What `invoke` answers: any JSON value, which the hub checks against the op's `result_schema`. */
export const InvokeResultSchema = Type.Unsafe<JsonValue>({ description: "Any JSON value; the hub checks it against the op's result_schema." });
export const RecvParamsSchema = Type.Object(
  { cursor: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "The previous batch's next_cursor; null: from the start." }) },
  { additionalProperties: false },
);
export const PreviewParamsSchema = Type.Object({ addr: AddrSchema, op: Type.String(), args: JsonValueSchema }, { additionalProperties: false });
export const PreviewResultSchema = Type.Union([ApprovalPreviewSchema, Type.Null()]);
export const PrecheckParamsSchema = Type.Object(
  { addr: AddrSchema, op: Type.String(), args: JsonValueSchema, context: Type.Optional(InvokeContextSchema) },
  { additionalProperties: false },
);
export const InteractionsForParamsSchema = Type.Object({ addr: AddrSchema }, { additionalProperties: false });
export const InteractionsForResultSchema = Type.Array(InteractionSchema);
export const SetTierParamsSchema = Type.Object(
  { addr: AddrSchema, tier: Type.String({ description: "One of the tiers' names in DriverInfo.tiers." }) },
  { additionalProperties: false },
);
export const CancelParamsSchema = Type.Object(
  { id: Type.Union([Type.Integer(), Type.String()], { description: 'The JSON-RPC id of the request to cancel.' }) },
  { additionalProperties: false },
);

// ── the published document (docs/schemas/driver-protocol.schema.json) ──────────────────────────

/**
 * Every payload of the protocol by the name docs/driver-protocol.md gives it. `npm run schemas`
 * writes these into the published document, and a test fails when that file differs from them.
 */
export const PROTOCOL_SCHEMAS = {
  InitializeParams: InitializeParamsSchema,
  InitializeResult: InitializeResultSchema,
  UnsupportedVersion: UnsupportedVersionSchema,
  DriverInfo: DriverInfoSchema,
  DriverKind: DriverKindSchema,
  TierSpec: TierSpecSchema,
  TierRisk: TierRiskSchema,
  EmptyParams: EmptyParamsSchema,
  NullResult: NullResultSchema,
  ChannelEntry: ChannelEntrySchema,
  ChannelsResult: ChannelsResultSchema,
  OpSpec: OpSpecSchema,
  OpsResult: OpsResultSchema,
  JsonSchema: JsonSchemaSchema,
  Interaction: InteractionSchema,
  InvokeParams: InvokeParamsSchema,
  InvokeContext: InvokeContextSchema,
  CallerEnvironment: CallerEnvironmentSchema,
  InvokeResult: InvokeResultSchema,
  SendParams: SendParamsSchema,
  SendRequest: SendRequestSchema,
  ReplyHint: ReplyHintSchema,
  SendReceipt: SendReceiptSchema,
  RecvParams: RecvParamsSchema,
  RecvBatch: RecvBatchSchema,
  RecvItem: RecvItemSchema,
  DoctorReport: DoctorReportSchema,
  PreviewParams: PreviewParamsSchema,
  PreviewResult: PreviewResultSchema,
  ApprovalPreview: ApprovalPreviewSchema,
  PrecheckParams: PrecheckParamsSchema,
  InteractionsForParams: InteractionsForParamsSchema,
  InteractionsForResult: InteractionsForResultSchema,
  SetTierParams: SetTierParamsSchema,
  CancelParams: CancelParamsSchema,
  RpcError: RpcErrorSchema,
  DriverError: DriverErrorWireSchema,
  DriverErrorKind: DriverErrorKindSchema,
} as const;

export type ProtocolPayload = keyof typeof PROTOCOL_SCHEMAS;

/**
 * The published JSON Schema document: one `$defs` entry per payload. A subschema equal to another
 * payload's (DriverInfo inside InitializeResult) is written as a `$ref` to it, which validates
 * exactly the same values; `{}` (any JSON value) stays inline.
 */
export function protocolSchemaDocument(protocolVersion: string): Record<string, JsonValue> {
  const plain = (schema: unknown): JsonValue => JSON.parse(JSON.stringify(schema)) as JsonValue;
  const named = new Map<string, string>();
  for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) {
    const key = JSON.stringify(plain(schema));
    if (key !== '{}' && !named.has(key)) named.set(key, name);
  }
  const withRefs = (value: JsonValue, top: boolean): JsonValue => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v) => withRefs(v, false));
    const name = top ? undefined : named.get(JSON.stringify(value));
    if (name) return { $ref: `#/$defs/${name}` };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'enum' || k === 'required' ? v : withRefs(v, false)]));
  };
  const defs: Record<string, JsonValue> = {};
  for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) defs[name] = withRefs(plain(schema), true);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $comment: 'Generated from src/main/drivers/protocol-schemas.ts by `npm run schemas`; do not edit by hand.',
    title: `The Uplink driver protocol, version ${protocolVersion}`,
    description: 'Every payload of docs/driver-protocol.md, under $defs by the name the page gives it.',
    $defs: defs,
  };
}
