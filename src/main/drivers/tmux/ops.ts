/**
 * The tmux ops with their JSON Schemas (Draft 2020-12, closed objects, defaults stated), and the
 * driver-side argument parsing that applies the same defaults when the driver is called directly.
 */
import { DriverError, type OpSpec } from '../contract';
import type { JsonValue } from '../../kernel';

const receiptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['delivered', 'correlation_id', 'injected_at'],
  properties: {
    delivered: { type: 'boolean' },
    correlation_id: { type: 'string', pattern: '^[0-9a-f]{8}$' },
    verify_excerpt: { type: 'string' },
    injected_at: { type: 'string' },
  },
};

const quietMs = { type: 'integer', minimum: 0, maximum: 600_000, default: 1500, description: 'How long the pane must stay unchanged.' };

/** The op list, in a stable order. */
export const TMUX_OPS: OpSpec[] = [
  {
    op: 'read',
    summary: 'Capture the last N lines of a pane (joins wrapped lines). Counts as the "read first" for type/keys.',
    mutating: false,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { lines: { type: 'integer', minimum: 1, maximum: 100_000, default: 50 } },
    },
    result_schema: { type: 'object', additionalProperties: false, required: ['text'], properties: { text: { type: 'string' } } },
  },
  {
    op: 'await-idle',
    summary: 'Wait until the pane has shown no output and no redraw (spinners count as activity) for quiet_ms; idle:false on timeout.',
    mutating: false,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      properties: { quiet_ms: quietMs, timeout_ms: { type: 'integer', minimum: 0, maximum: 3_600_000, default: 60_000 } },
    },
    result_schema: { type: 'object', additionalProperties: false, required: ['idle'], properties: { idle: { type: 'boolean' } } },
  },
  {
    op: 'type',
    summary: 'Type literal text into a raw console (fire-and-forget; read afterwards to confirm). Needs operator and a read within 60 s.',
    mutating: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 10_000 },
        enter: { type: 'boolean', default: false },
        sensitive: { type: 'boolean', default: false, description: 'Keep the text out of previews, logs and the audit store.' },
      },
    },
    result_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['typed', 'enter'],
      properties: { typed: { type: 'integer', minimum: 0 }, enter: { type: 'boolean' } },
    },
  },
  {
    op: 'keys',
    summary: 'Press special keys (Enter, Escape, Tab, arrows, …: operator; C-/M- chords: godmode). Needs a read within 60 s.',
    mutating: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['keys'],
      properties: { keys: { type: 'array', minItems: 1, maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 32 } } },
    },
    result_schema: { type: 'object', additionalProperties: false, required: ['sent'], properties: { sent: { type: 'integer', minimum: 0 } } },
  },
  {
    op: 'label',
    summary: 'Set the pane label (@name) so the pane is addressable as tmux:<label>. A rename never raises a tier.',
    mutating: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^%\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$' } },
    },
    result_schema: { type: 'object', additionalProperties: false, required: ['label'], properties: { label: { type: 'string' } } },
  },
  {
    op: 'ask',
    summary: 'Send a message without reply hint, wait until the peer is quiet, and return everything it printed after the question.',
    mutating: true,
    params_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['message'],
      properties: {
        message: { type: 'string', minLength: 1, maxLength: 10_000 },
        quiet_ms: quietMs,
        timeout_ms: { type: 'integer', minimum: 0, maximum: 3_600_000, default: 120_000 },
      },
    },
    result_schema: {
      type: 'object',
      additionalProperties: false,
      required: ['transcript', 'receipt'],
      properties: { transcript: { type: 'string' }, receipt: receiptSchema },
    },
  },
];

/** Reads an args object; `Invalid` for anything but a plain object (or nothing). */
export function argsObject(args: JsonValue | undefined, op: string): Record<string, JsonValue> {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'object' || Array.isArray(args)) throw new DriverError('Invalid', `${op}: args must be an object`, { hint: 'see the op schema (channel_describe)' });
  const allowed = Object.keys((TMUX_OPS.find((o) => o.op === op)?.params_schema as { properties?: object }).properties ?? {});
  const extra = Object.keys(args).filter((k) => !allowed.includes(k));
  if (extra.length) throw new DriverError('Invalid', `${op}: unknown argument ${extra.join(', ')}`, { hint: `allowed: ${allowed.join(', ')}` });
  return args;
}

/** An integer argument with a default and bounds. */
export function intArg(args: Record<string, JsonValue>, name: string, fallback: number, min: number, max: number, op: string): number {
  const v = args[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new DriverError('Invalid', `${op}: ${name} must be an integer from ${min} to ${max}`);
  }
  return v;
}

/** A boolean argument with a default. */
export function boolArg(args: Record<string, JsonValue>, name: string, fallback: boolean, op: string): boolean {
  const v = args[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new DriverError('Invalid', `${op}: ${name} must be true or false`);
  return v;
}

/** A required non-empty string argument. */
export function stringArg(args: Record<string, JsonValue>, name: string, op: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v === '') throw new DriverError('Invalid', `${op}: ${name} is required (a non-empty string)`);
  return v;
}
