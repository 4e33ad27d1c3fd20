/**
 * Limits on what an agent or panel hands the hub, checked before anything recurses over it or
 * stores it. Every walk over agent-controlled JSON is a loop with an explicit stack, so a value
 * nested thousands deep is measured without risking the call stack.
 */
import type { JsonValue } from '../kernel';
import { driverOfChannel } from '../drivers';
import { HubError } from './errors';

/** Largest `send` message (bytes of UTF-8). */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** Deepest nesting of args (and of anything stored as JSON) the hub accepts. */
export const MAX_DEPTH = 64;
/** Longest channel address. */
export const MAX_CHANNEL_CHARS = 512;
/** Longest op name. */
export const MAX_OP_CHARS = 128;
/** Longest client name, version, user or session kept on a record. */
export const MAX_CLIENT_CHARS = 256;
/** Longest message, hint, detail or reason kept on a record. */
export const MAX_TEXT_CHARS = 8 * 1024;

/** Whether `value` nests deeper than `max` levels (a scalar is depth 0, `{}` is 1). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, depth + 1]);
  }
  return false;
}

/** `text` cut to `max` characters, saying how long it was. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (cut, ${text.length} chars)` : text;
}

/**
 * The limits of a call, checked first: channel and op length, args nesting, then size. Throws the one-line
 * `core:Invalid` error naming the limit (the field itself is not repeated: it may be megabytes).
 */
export function checkBounds(channel: unknown, op: unknown, args: unknown): void {
  const hint = 'see channel_describe for the channel addresses, op names and params_schema the hub takes';
  if (typeof channel === 'string' && channel.length > MAX_CHANNEL_CHARS) {
    throw new HubError('core', 'Invalid', `the channel is ${channel.length} characters; the limit is ${MAX_CHANNEL_CHARS}`, { hint });
  }
  if (typeof op === 'string' && op.length > MAX_OP_CHARS) {
    throw new HubError('core', 'Invalid', `the op name is ${op.length} characters; the limit is ${MAX_OP_CHARS}`, { hint });
  }
  if (nestsDeeperThan(args, MAX_DEPTH)) {
    throw new HubError('core', 'Invalid', `args nest deeper than ${MAX_DEPTH} levels`, {
      hint: `flatten the args (at most ${MAX_DEPTH} levels of objects and arrays)`,
    });
  }
  if (args === null || typeof args !== 'object') return;
  const size = Buffer.byteLength(JSON.stringify(args));
  const message = (args as { message?: unknown }).message;
  if ((typeof message === 'string' && Buffer.byteLength(message) > MAX_MESSAGE_BYTES) || size > MAX_MESSAGE_BYTES + 1024) {
    throw new HubError(
      driverOfChannel(typeof channel === 'string' ? channel : undefined),
      'Invalid',
      `the ${String(op)} payload is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (64 KiB)`,
      { hint: 'split it into smaller messages, or send a file path instead of the content' },
    );
  }
}

/** What is stored instead of a value nested too deep to store. */
export function deepPlaceholder(): JsonValue {
  return `<not stored: nesting deeper than ${MAX_DEPTH}>`;
}

export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
