/**
 * What hubs of a fleet say to each other over NATS, as JSON. Every message a hub receives is
 * size-checked, parsed and validated against these schemas before anything reads it; one that
 * fails is dropped without an answer (a sender that speaks the protocol never sees that).
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonValue } from '../../kernel';
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { PendingApproval } from '../../../shared/approval';
import { jsonDepth, MAX_DEPTH } from '../bounds';
import { schemaValidator } from '../../kernel';

/** Requests carry args (64 KiB at most) and an identity; replies may carry a screenshot. */
export const MAX_REQUEST_BYTES = 192 * 1024;
export const MAX_REPLY_BYTES = 960 * 1024;
/** A prompt may carry the window's screenshot; a bigger one travels without it. */
export const MAX_PROMPT_BYTES = 768 * 1024;
export const PROTOCOL_VERSION = 1;

const NAME = { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 };
const TEXT = (max: number) => ({ type: 'string', maxLength: max });

/** Who asked, as the calling hub declares it (the owning hub records it as coming from `from`). */
export interface FleetAgent {
  kind: 'mcp' | 'cli' | 'panel';
  name: string;
  agent_id?: string;
  version?: string;
  user?: string;
  session?: string;
}

export type FleetRequest =
  | { v: 1; id: string; from: string; method: 'channels' }
  | { v: 1; id: string; from: string; method: 'describe'; channel: string; op?: string; agent?: FleetAgent }
  | { v: 1; id: string; from: string; method: 'invoke'; channel: string; op: string; args: JsonValue; agent: FleetAgent; interaction?: string; expect?: 'read_only' | 'mutating'; progress?: boolean }
  | { v: 1; id: string; from: string; method: 'send'; channel: string; message: string; reply_hint?: 'full' | 'short' | 'none'; agent: FleetAgent; progress?: boolean }
  | { v: 1; id: string; from: string; method: 'prompts' }
  | { v: 1; id: string; from: string; method: 'decide'; approval_id: string; decision: 'once' | 'deny'; reason?: string; by: string };

export interface FleetErrorBody {
  driver: string;
  kind: string;
  message: string;
  hint?: string;
}

export type FleetReply = { v: 1; id: string; ok: true; result: JsonValue } | { v: 1; id: string; ok: false; error: FleetErrorBody };

/** Sent to the caller's inbox while a call it asked progress for runs (waiting for an operator, long work). */
export interface FleetProgress {
  v: 1;
  id: string;
  progress: { progress: number; total?: number; message: string };
}

export interface FleetPresence {
  v: 1;
  hub: string;
  /** This hub process's random id, so a second hub under the same name shows up as such. */
  instance: string;
  /** When this hub joined (ms since the epoch). */
  since: number;
  /** True on the last message of a hub that leaves. */
  leaving?: boolean;
  /** How many operator panels are attached to it now (its own, not the fleet's). */
  panels?: number;
}

/** A prompt of the owning hub, as every hub of the fleet shows it (ids and channels its own): the shared prompt, which names no hub while it travels. */
const PROMPT_SCHEMA = Type.Omit(PendingApproval, ['hub', 'redacted_args']);
export type FleetPrompt = Static<typeof PROMPT_SCHEMA>;

/** A prompt raised or ended on `hub`, published on its prompts subject. */
export type FleetPromptEvent =
  | { v: 1; hub: string; type: 'added'; approval: FleetPrompt }
  | { v: 1; hub: string; type: 'resolved'; approval_id: string; granted: boolean; authorized: string; by?: string; reason?: string; decision?: 'once' | 'session' | 'always' | 'deny' };

export interface FleetCancel {
  v: 1;
  id: string;
  from: string;
}

const AGENT_SCHEMA = {
  type: 'object',
  required: ['kind', 'name'],
  additionalProperties: false,
  properties: {
    kind: { enum: ['mcp', 'cli', 'panel'] },
    name: TEXT(256),
    agent_id: TEXT(256),
    version: TEXT(256),
    user: TEXT(256),
    session: TEXT(256),
  },
};

const ID = { type: 'string', minLength: 1, maxLength: 128 };
const CALL_ID = { type: 'string', minLength: 1, maxLength: 64 };
const base = { v: { const: PROTOCOL_VERSION }, id: CALL_ID, from: NAME };
const CHANNEL = { type: 'string', minLength: 1, maxLength: 512 };

const REQUEST_SCHEMA = {
  oneOf: [
    { type: 'object', required: ['v', 'id', 'from', 'method'], additionalProperties: false, properties: { ...base, method: { const: 'channels' } } },
    {
      type: 'object',
      required: ['v', 'id', 'from', 'method', 'channel'],
      additionalProperties: false,
      properties: { ...base, method: { const: 'describe' }, channel: CHANNEL, op: TEXT(128), agent: AGENT_SCHEMA },
    },
    {
      type: 'object',
      required: ['v', 'id', 'from', 'method', 'channel', 'op', 'args', 'agent'],
      additionalProperties: false,
      properties: {
        ...base,
        method: { const: 'invoke' },
        channel: CHANNEL,
        op: { type: 'string', minLength: 1, maxLength: 128 },
        args: {},
        agent: AGENT_SCHEMA,
        interaction: TEXT(64),
        expect: { enum: ['read_only', 'mutating'] },
        progress: { type: 'boolean' },
      },
    },
    {
      type: 'object',
      required: ['v', 'id', 'from', 'method', 'channel', 'message', 'agent'],
      additionalProperties: false,
      properties: { ...base, method: { const: 'send' }, channel: CHANNEL, message: TEXT(65_536), reply_hint: { enum: ['full', 'short', 'none'] }, agent: AGENT_SCHEMA, progress: { type: 'boolean' } },
    },
    { type: 'object', required: ['v', 'id', 'from', 'method'], additionalProperties: false, properties: { ...base, method: { const: 'prompts' } } },
    {
      type: 'object',
      required: ['v', 'id', 'from', 'method', 'approval_id', 'decision', 'by'],
      additionalProperties: false,
      properties: { ...base, method: { const: 'decide' }, approval_id: ID, decision: { enum: ['once', 'deny'] }, reason: TEXT(2000), by: { type: 'string', minLength: 1, maxLength: 256 } },
    },
  ],
};

const PROMPT_EVENT_SCHEMA = {
  oneOf: [
    { type: 'object', required: ['v', 'hub', 'type', 'approval'], additionalProperties: false, properties: { v: { const: PROTOCOL_VERSION }, hub: NAME, type: { const: 'added' }, approval: PROMPT_SCHEMA } },
    {
      type: 'object',
      required: ['v', 'hub', 'type', 'approval_id', 'granted', 'authorized'],
      additionalProperties: false,
      properties: {
        v: { const: PROTOCOL_VERSION },
        hub: NAME,
        type: { const: 'resolved' },
        approval_id: ID,
        granted: { type: 'boolean' },
        authorized: TEXT(256),
        by: TEXT(512),
        reason: TEXT(2000),
        decision: { enum: ['once', 'session', 'always', 'deny'] },
      },
    },
  ],
};

/** The answer to `prompts`: the owning hub's pending prompts. */
const PROMPT_LIST_SCHEMA = { type: 'array', maxItems: 10_000, items: PROMPT_SCHEMA };

const REPLY_SCHEMA = {
  type: 'object',
  required: ['v', 'id', 'ok'],
  additionalProperties: false,
  properties: {
    v: { const: PROTOCOL_VERSION },
    id: CALL_ID,
    ok: { type: 'boolean' },
    result: {},
    error: {
      type: 'object',
      required: ['driver', 'kind', 'message'],
      additionalProperties: false,
      properties: { driver: TEXT(128), kind: TEXT(32), message: TEXT(8192), hint: TEXT(8192) },
    },
  },
  oneOf: [{ properties: { ok: { const: true } }, required: ['result'] }, { properties: { ok: { const: false } }, required: ['error'] }],
};

const PRESENCE_SCHEMA = {
  type: 'object',
  required: ['v', 'hub', 'instance', 'since'],
  additionalProperties: false,
  properties: { v: { const: PROTOCOL_VERSION }, hub: NAME, instance: { type: 'string', pattern: '^[0-9a-f]{8,32}$' }, since: { type: 'integer', minimum: 0 }, leaving: { type: 'boolean' }, panels: { type: 'integer', minimum: 0, maximum: 1_000_000 } },
};

const PROGRESS_SCHEMA = {
  type: 'object',
  required: ['v', 'id', 'progress'],
  additionalProperties: false,
  properties: {
    v: { const: PROTOCOL_VERSION },
    id: CALL_ID,
    progress: { type: 'object', required: ['progress', 'message'], additionalProperties: false, properties: { progress: { type: 'number' }, total: { type: 'number' }, message: TEXT(1024) } },
  },
};

const CANCEL_SCHEMA = { type: 'object', required: ['v', 'id', 'from'], additionalProperties: false, properties: base };

type Which = 'request' | 'reply' | 'presence' | 'cancel' | 'prompt' | 'prompts' | 'progress';
let validators: Record<Which, ValidateFunction> | undefined;

function compiled(): NonNullable<typeof validators> {
  if (!validators) {
    validators = {
      request: schemaValidator(REQUEST_SCHEMA),
      reply: schemaValidator(REPLY_SCHEMA),
      presence: schemaValidator(PRESENCE_SCHEMA),
      cancel: schemaValidator(CANCEL_SCHEMA),
      prompt: schemaValidator(PROMPT_EVENT_SCHEMA),
      prompts: schemaValidator(PROMPT_LIST_SCHEMA),
      progress: schemaValidator(PROGRESS_SCHEMA),
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

export function encode(message: FleetRequest | FleetReply | FleetPresence | FleetCancel | FleetPromptEvent | FleetProgress): Uint8Array {
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
};
