/**
 * What hubs of a fleet say to each other over NATS, as JSON: each message declared once, as a
 * TypeBox schema its type is derived from. Every message a hub receives is size-checked, parsed
 * and validated against these schemas before anything reads it; one that fails is dropped without
 * an answer (a sender that speaks the protocol never sees that).
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonValue } from '../../kernel';
import { PendingApproval } from '../../../shared/approval';
import { Outcome } from '../../../shared/audit-record';
import { jsonDepth, MAX_DEPTH } from '../bounds';
import { schemaValidator } from '../../kernel';

/** Requests carry args (64 KiB at most) and an identity; replies may carry a screenshot. */
export const MAX_REQUEST_BYTES = 192 * 1024;
export const MAX_REPLY_BYTES = 960 * 1024;
/** A prompt may carry the window's screenshot; a bigger one travels without it. */
export const MAX_PROMPT_BYTES = 768 * 1024;
export const PROTOCOL_VERSION = 1;

const NAME = Type.String({ pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 });
const TEXT = (max: number) => Type.String({ maxLength: max });
const ID = Type.String({ minLength: 1, maxLength: 128 });
const CALL_ID = Type.String({ minLength: 1, maxLength: 64 });
const CHANNEL = Type.String({ minLength: 1, maxLength: 512 });
const INT = Type.Integer({ minimum: 0 });
const JSON_VALUE = Type.Unsafe<JsonValue>({});
const V = Type.Literal(PROTOCOL_VERSION);
const closed = { additionalProperties: false } as const;

/** Who asked, as the calling hub declares it (the owning hub records it as coming from `from`). */
const FleetAgentSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('mcp'), Type.Literal('cli'), Type.Literal('panel')]),
    name: TEXT(256),
    agent_id: Type.Optional(TEXT(256)),
    version: Type.Optional(TEXT(256)),
    user: Type.Optional(TEXT(256)),
    session: Type.Optional(TEXT(256)),
  },
  closed,
);
export type FleetAgent = Static<typeof FleetAgentSchema>;

/** What every request carries: the protocol version, the call's id, and the asking hub. */
const base = { v: V, id: CALL_ID, from: NAME };
const REPLY_HINT = Type.Union([Type.Literal('full'), Type.Literal('short'), Type.Literal('none')]);

const FleetRequestSchema = Type.Union([
  Type.Object({ ...base, method: Type.Literal('channels') }, closed),
  Type.Object({ ...base, method: Type.Literal('describe'), channel: CHANNEL, op: Type.Optional(TEXT(128)), agent: Type.Optional(FleetAgentSchema) }, closed),
  Type.Object(
    {
      ...base,
      method: Type.Literal('invoke'),
      channel: CHANNEL,
      op: Type.String({ minLength: 1, maxLength: 128 }),
      args: JSON_VALUE,
      agent: FleetAgentSchema,
      interaction: Type.Optional(TEXT(64)),
      expect: Type.Optional(Type.Union([Type.Literal('read_only'), Type.Literal('mutating')])),
      progress: Type.Optional(Type.Boolean()),
    },
    closed,
  ),
  Type.Object(
    {
      ...base,
      method: Type.Literal('send'),
      channel: CHANNEL,
      message: TEXT(65_536),
      reply_hint: Type.Optional(REPLY_HINT),
      agent: FleetAgentSchema,
      progress: Type.Optional(Type.Boolean()),
    },
    closed,
  ),
  Type.Object({ ...base, method: Type.Literal('prompts') }, closed),
  Type.Object(
    {
      ...base,
      method: Type.Literal('decide'),
      approval_id: ID,
      decision: Type.Union([Type.Literal('once'), Type.Literal('deny')]),
      reason: Type.Optional(TEXT(2000)),
      by: Type.String({ minLength: 1, maxLength: 256 }),
    },
    closed,
  ),
]);
export type FleetRequest = Static<typeof FleetRequestSchema>;

/** A call's error as the owning hub ended it, with how it ended there (`outcome`, as its record says). */
const FleetErrorBodySchema = Type.Object(
  { driver: TEXT(128), kind: TEXT(32), message: TEXT(8192), hint: Type.Optional(TEXT(8192)), outcome: Type.Optional(Outcome) },
  closed,
);
export type FleetErrorBody = Static<typeof FleetErrorBodySchema>;

const FleetReplySchema = Type.Union([
  Type.Object({ v: V, id: CALL_ID, ok: Type.Literal(true), result: JSON_VALUE }, closed),
  Type.Object({ v: V, id: CALL_ID, ok: Type.Literal(false), error: FleetErrorBodySchema }, closed),
]);
export type FleetReply = Static<typeof FleetReplySchema>;

/** Sent to the caller's inbox while a call it asked progress for runs (waiting for an operator, long work). */
const FleetProgressSchema = Type.Object(
  { v: V, id: CALL_ID, progress: Type.Object({ progress: Type.Number(), total: Type.Optional(Type.Number()), message: TEXT(1024) }, closed) },
  closed,
);
export type FleetProgress = Static<typeof FleetProgressSchema>;

const FleetPresenceSchema = Type.Object(
  {
    v: V,
    hub: NAME,
    /** This hub process's random id, so a second hub under the same name shows up as such. */
    instance: Type.String({ pattern: '^[0-9a-f]{8,32}$' }),
    /** When this hub joined (ms since the epoch). */
    since: INT,
    /** True on the last message of a hub that leaves. */
    leaving: Type.Optional(Type.Boolean()),
    /** How many operator panels are attached to it now (its own, not the fleet's). */
    panels: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  closed,
);
export type FleetPresence = Static<typeof FleetPresenceSchema>;

// ── a pending approval as the fleet carries it ───────────────────────────────────────────────

/**
 * A prompt of the owning hub, as every hub of the fleet shows it (ids and channels its own): the
 * shared pending approval, which names no hub while it travels, and no redacted args (only the
 * owner's panel may scope it).
 */
const FleetPromptSchema = Type.Omit(PendingApproval, ['hub', 'redacted_args']);
export type FleetPrompt = Static<typeof FleetPromptSchema>;

/** The answer to `prompts`: the owning hub's pending prompts. */
const FleetPromptListSchema = Type.Array(FleetPromptSchema, { maxItems: 10_000 });

/** A prompt raised, changed (checked again, preview refreshed) or ended on `hub`, published on its prompts subject. */
const FleetPromptEventSchema = Type.Union([
  Type.Object({ v: V, hub: NAME, type: Type.Literal('added'), approval: FleetPromptSchema }, closed),
  Type.Object({ v: V, hub: NAME, type: Type.Literal('updated'), approval: FleetPromptSchema }, closed),
  Type.Object(
    {
      v: V,
      hub: NAME,
      type: Type.Literal('resolved'),
      approval_id: ID,
      granted: Type.Boolean(),
      authorized: TEXT(256),
      by: Type.Optional(TEXT(512)),
      reason: Type.Optional(TEXT(2000)),
      decision: Type.Optional(Type.Union([Type.Literal('once'), Type.Literal('session'), Type.Literal('always'), Type.Literal('deny')])),
    },
    closed,
  ),
]);
export type FleetPromptEvent = Static<typeof FleetPromptEventSchema>;

const FleetCancelSchema = Type.Object(base, closed);
export type FleetCancel = Static<typeof FleetCancelSchema>;

/** A hub's audit checkpoint, for the others to witness: how many records, the chain head's sha256, when. */
const FleetCheckpointSchema = Type.Object({ v: V, hub: NAME, count: INT, head: Type.String({ pattern: '^[0-9a-f]{64}$' }), at: INT }, closed);
export type FleetCheckpointMessage = Static<typeof FleetCheckpointSchema>;

type Which = 'request' | 'reply' | 'presence' | 'cancel' | 'prompt' | 'prompts' | 'progress' | 'checkpoint';
let validators: Record<Which, ValidateFunction> | undefined;

function compiled(): NonNullable<typeof validators> {
  if (!validators) {
    validators = {
      request: schemaValidator(FleetRequestSchema),
      reply: schemaValidator(FleetReplySchema),
      presence: schemaValidator(FleetPresenceSchema),
      cancel: schemaValidator(FleetCancelSchema),
      prompt: schemaValidator(FleetPromptEventSchema),
      prompts: schemaValidator(FleetPromptListSchema),
      progress: schemaValidator(FleetProgressSchema),
      checkpoint: schemaValidator(FleetCheckpointSchema),
    };
  }
  return validators;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The message in `data` if it is one of `which`, within `maxBytes` and nested no deeper than the
 * hub accepts from agents; otherwise undefined (the caller drops it).
 */
export function decode(which: 'request', data: Uint8Array): FleetRequest | undefined;
export function decode(which: 'reply', data: Uint8Array): FleetReply | undefined;
export function decode(which: 'presence', data: Uint8Array): FleetPresence | undefined;
export function decode(which: 'cancel', data: Uint8Array): FleetCancel | undefined;
export function decode(which: 'prompt', data: Uint8Array): FleetPromptEvent | undefined;
export function decode(which: 'progress', data: Uint8Array): FleetProgress | undefined;
export function decode(which: 'checkpoint', data: Uint8Array): FleetCheckpointMessage | undefined;
export function decode(which: Which, data: Uint8Array): unknown {
  const max = which === 'reply' ? MAX_REPLY_BYTES : which === 'request' ? MAX_REQUEST_BYTES : which === 'prompt' ? MAX_PROMPT_BYTES : 4096;
  if (data.byteLength > max) return undefined;
  try {
    const text = decoder.decode(data);
    if (jsonDepth(text) > MAX_DEPTH + 4) return undefined;
    const value: unknown = JSON.parse(text);
    return compiled()[which](value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const encoder = new TextEncoder();

export function encode(
  message: FleetRequest | FleetReply | FleetPresence | FleetCancel | FleetPromptEvent | FleetProgress | FleetCheckpointMessage,
): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/** A `prompts` reply's result, when it is a list of prompts (the reply itself was checked already). */
export function promptList(value: unknown): FleetPrompt[] | undefined {
  return compiled().prompts(value) ? (value as FleetPrompt[]) : undefined;
}

/** The subjects of one hub (docs/fleet.md). */
export const subjects = {
  call: (hub: string) => `uplink.${hub}.call`,
  cancel: (hub: string) => `uplink.${hub}.cancel`,
  presence: (hub: string) => `uplink.presence.${hub}`,
  allPresence: 'uplink.presence.*',
  prompts: (hub: string) => `uplink.prompts.${hub}`,
  allPrompts: 'uplink.prompts.*',
  checkpoint: (hub: string) => `uplink.checkpoint.${hub}`,
  allCheckpoints: 'uplink.checkpoint.*',
};
