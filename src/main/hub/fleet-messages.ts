/**
 * What hubs of a fleet say to each other over NATS, as JSON. Every message a hub receives is
 * size-checked, parsed and validated against these schemas before anything reads it; one that
 * fails is dropped without an answer (a sender that speaks the protocol never sees that).
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonValue } from '../kernel';
import { jsonDepth } from './config';
import { MAX_DEPTH } from './bounds';
import { schemaValidator } from '../kernel';

/** Requests carry args (64 KiB at most) and an identity; replies may carry a screenshot. */
export const MAX_REQUEST_BYTES = 192 * 1024;
export const MAX_REPLY_BYTES = 960 * 1024;
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
  | { v: 1; id: string; from: string; method: 'invoke'; channel: string; op: string; args: JsonValue; agent: FleetAgent; interaction?: string; expect?: 'read_only' | 'mutating' }
  | { v: 1; id: string; from: string; method: 'send'; channel: string; message: string; reply_hint?: 'full' | 'short' | 'none'; agent: FleetAgent };

export interface FleetErrorBody {
  driver: string;
  kind: string;
  message: string;
  hint?: string;
}

export type FleetReply = { v: 1; id: string; ok: true; result: JsonValue } | { v: 1; id: string; ok: false; error: FleetErrorBody };

export interface FleetPresence {
  v: 1;
  hub: string;
  /** This hub process's random id, so a second hub under the same name shows up as such. */
  instance: string;
  /** When this hub joined (ms since the epoch). */
  since: number;
  /** True on the last message of a hub that leaves. */
  leaving?: boolean;
}

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

const base = { v: { const: PROTOCOL_VERSION }, id: { type: 'string', minLength: 1, maxLength: 64 }, from: NAME };
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
      },
    },
    {
      type: 'object',
      required: ['v', 'id', 'from', 'method', 'channel', 'message', 'agent'],
      additionalProperties: false,
      properties: { ...base, method: { const: 'send' }, channel: CHANNEL, message: TEXT(65_536), reply_hint: { enum: ['full', 'short', 'none'] }, agent: AGENT_SCHEMA },
    },
  ],
};

const REPLY_SCHEMA = {
  type: 'object',
  required: ['v', 'id', 'ok'],
  additionalProperties: false,
  properties: {
    v: { const: PROTOCOL_VERSION },
    id: { type: 'string', minLength: 1, maxLength: 64 },
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
  properties: { v: { const: PROTOCOL_VERSION }, hub: NAME, instance: { type: 'string', pattern: '^[0-9a-f]{8,32}$' }, since: { type: 'integer', minimum: 0 }, leaving: { type: 'boolean' } },
};

const CANCEL_SCHEMA = { type: 'object', required: ['v', 'id', 'from'], additionalProperties: false, properties: base };

let validators: Record<'request' | 'reply' | 'presence' | 'cancel', ValidateFunction> | undefined;

function compiled(): NonNullable<typeof validators> {
  if (!validators) {
    validators = {
      request: schemaValidator(REQUEST_SCHEMA),
      reply: schemaValidator(REPLY_SCHEMA),
      presence: schemaValidator(PRESENCE_SCHEMA),
      cancel: schemaValidator(CANCEL_SCHEMA),
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
export function decode(which: 'request' | 'reply' | 'presence' | 'cancel', data: Uint8Array): unknown {
  const max = which === 'reply' ? MAX_REPLY_BYTES : which === 'request' ? MAX_REQUEST_BYTES : 4096;
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

export function encode(message: FleetRequest | FleetReply | FleetPresence | FleetCancel): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/** The subjects of one hub (docs/fleet.md). */
export const subjects = {
  call: (hub: string) => `uplink.${hub}.call`,
  cancel: (hub: string) => `uplink.${hub}.cancel`,
  presence: (hub: string) => `uplink.presence.${hub}`,
  allPresence: 'uplink.presence.*',
};
