/**
 * The driver protocol's wire (docs/driver-protocol.md), shared by both ends: the hub's host that
 * starts out-of-process drivers and the SDK that serves a driver. Line-delimited JSON-RPC 2.0,
 * bounded lines, and the one mapping between a `DriverError` and a JSON-RPC error.
 */
import { DRIVER_ERROR_KINDS, DriverError } from '../contract';
import type { DriverErrorWire } from '../contract';
import type { JsonValue } from '../../kernel';
import type { Static } from '@sinclair/typebox';
import type { InitializeParamsSchema, InitializeResultSchema } from '../protocol-schemas';

/** The protocol version this build speaks. */
export const PROTOCOL_VERSION = '3';

/** The longest line either side accepts (a screenshot's base64 fits many times over). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** JSON-RPC code of a driver's own failure; its `data` is the `DriverErrorWire`. */
export const DRIVER_ERROR_CODE = -32000;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const PARSE_ERROR = -32700;

/** The optional methods a driver may advertise in `initialize`'s `extensions`. */
export const EXTENSIONS = ['preview', 'precheck', 'interactions_for', 'set_tier', 'shutdown'] as const;
export type Extension = (typeof EXTENSIONS)[number];

export type RpcId = number | string;

export interface RpcRequest {
  jsonrpc: '2.0';
  id: RpcId;
  method: string;
  params?: unknown;
}

export interface RpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: RpcId | null;
  result?: unknown;
  error?: RpcErrorObject;
}

export type RpcMessage = RpcRequest | RpcNotification | RpcResponse;

/** `initialize`'s params (hub → driver) and result (driver → hub). */
export type InitializeParams = Static<typeof InitializeParamsSchema>;
export type InitializeResult = Static<typeof InitializeResultSchema>;

/**
 * Splits a byte stream into lines, refusing a line longer than `max` bytes (the caller treats
 * that as a broken peer). Bytes are joined before decoding, so a UTF-8 character split across
 * chunks arrives whole.
 */
export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  readonly #max: number;

  constructor(max = MAX_LINE_BYTES) {
    this.#max = max;
  }

  /** The complete lines in `chunk` (without `\n`, a trailing `\r` dropped); throws past the bound. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#append(chunk.subarray(start, nl));
      const line = Buffer.concat(this.#parts).toString('utf8');
      this.#parts = [];
      this.#size = 0;
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = nl + 1;
    }
    this.#append(chunk.subarray(start));
    return lines;
  }

  #append(part: Buffer): void {
    if (part.length === 0) return;
    this.#size += part.length;
    if (this.#size > this.#max) {
      this.#parts = [];
      this.#size = 0;
      throw new Error(`a line longer than ${this.#max} bytes`);
    }
    this.#parts.push(part);
  }
}

/** One message as a line (JSON escapes every newline, so it is one line by construction). */
export function encodeLine(message: RpcMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Parses one line into a JSON-RPC message, or says in words why it is not one (a peer that writes
 * such a line is broken: its calls in flight fail and it is restarted).
 */
export function decodeLine(line: string): RpcMessage | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return `a line that is not JSON: ${preview(line)}`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || (value as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
    return `a line that is not a JSON-RPC 2.0 message: ${preview(line)}`;
  }
  const m = value as Record<string, unknown>;
  const id = m.id;
  const validId = typeof id === 'number' || typeof id === 'string';
  if (typeof m.method === 'string') {
    if (id !== undefined && !validId) return `a request with an invalid id: ${preview(line)}`;
    return m as unknown as RpcMessage;
  }
  if (!validId && id !== null) return `a response without an id: ${preview(line)}`;
  if ('result' in m === 'error' in m) return `a response with ${'result' in m ? 'both result and error' : 'neither result nor error'}: ${preview(line)}`;
  if ('error' in m) {
    const e = m.error as { code?: unknown; message?: unknown } | null;
    if (!e || typeof e !== 'object' || typeof e.code !== 'number' || typeof e.message !== 'string')
      return `a response with a malformed error: ${preview(line)}`;
  }
  return m as unknown as RpcMessage;
}

function preview(line: string): string {
  const cut = line.length > 120 ? `${line.slice(0, 120)}…` : line;
  return JSON.stringify(cut);
}

/** A driver's failure as a JSON-RPC error object. */
export function errorToRpc(error: unknown): RpcErrorObject {
  if (error instanceof DriverError || isWireError(error)) {
    const wire = error instanceof DriverError ? error.toWire() : (error as DriverErrorWire);
    return { code: DRIVER_ERROR_CODE, message: wire.message, data: wire };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: DRIVER_ERROR_CODE, message, data: { kind: 'Upstream', message } satisfies DriverErrorWire };
}

/**
 * A JSON-RPC error from a driver as a `DriverError`, rendered exactly as documented: its `data`
 * when that is a DriverError (a `hint` that is not a string is dropped; `evidence` may be any JSON
 * value); `data` with a `message` but no valid `kind` is `Upstream` with that message (and its hint
 * and evidence); an error without such `data` is `Upstream` with the error's own message, nothing
 * added (-32601 also gets a hint naming the method the driver lacks).
 */
export function rpcToError(error: RpcErrorObject, method: string): DriverError {
  const data = error.data !== null && typeof error.data === 'object' && !Array.isArray(error.data) ? (error.data as Record<string, unknown>) : undefined;
  if (data && typeof data.message === 'string') {
    const kind = (DRIVER_ERROR_KINDS as readonly string[]).includes(data.kind as string) ? (data.kind as DriverErrorWire['kind']) : 'Upstream';
    return new DriverError(kind, data.message, {
      ...(typeof data.hint === 'string' ? { hint: data.hint } : {}),
      ...(data.evidence !== undefined ? { evidence: data.evidence as JsonValue } : {}),
    });
  }
  if (error.code === METHOD_NOT_FOUND)
    return new DriverError('Upstream', error.message, {
      hint: `the driver does not offer ${method}; check it speaks protocol 3: \`uplink driver check -- <its command>\``,
    });
  return new DriverError('Upstream', error.message);
}

function isWireError(value: unknown): value is DriverErrorWire {
  const v = value as Partial<DriverErrorWire> | null;
  return (
    !!v && typeof v === 'object' && typeof v.message === 'string' && typeof v.kind === 'string' && (DRIVER_ERROR_KINDS as readonly string[]).includes(v.kind)
  );
}
