/**
 * The driver's side of the driver protocol (docs/driver-protocol.md): `serveDriver` serves any
 * `Driver` over line-delimited JSON-RPC on stdin/stdout. Built-in drivers run this way under
 * `uplink driver run`, and third parties get it as `uplink/driver-sdk`.
 */
import type { Readable, Writable } from 'node:stream';
import { DriverError } from '../contract';
import type { Driver, InvokeContext, SendRequest } from '../contract';
import type { JsonValue } from '../../kernel';
import {
  EXTENSIONS,
  INVALID_PARAMS,
  LineSplitter,
  MAX_LINE_BYTES,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  PROTOCOL_VERSION,
  decodeLine,
  encodeLine,
  errorToRpc,
} from './wire';
import type { Extension, RpcId, RpcResponse } from './wire';

/** Where a served driver reads and writes; the process's own stdio unless a test gives others. */
export interface ServeIo {
  input: Readable;
  output: Writable;
  /** The driver's log (default stderr). */
  log: Writable;
  /** Ends the process when serving ends (default: true exactly when serving on process.stdout). */
  exit: boolean;
}

/** JSON-RPC's code for a request that may not come now (before `initialize`). */
const INVALID_REQUEST = -32600;

/** A params object the driver cannot read: answered -32602 with what was wrong. */
class BadParams extends Error {}

type Params = Record<string, unknown>;

function str(p: Params, key: string): string {
  const v = p[key];
  if (typeof v !== 'string') throw new BadParams(`"${key}" must be a string`);
  return v;
}

function obj(p: Params, key: string, optional = false): Params | undefined {
  const v = p[key];
  if (v === undefined && optional) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new BadParams(`"${key}" must be an object`);
  return v as Params;
}

function sendRequest(p: Params): SendRequest {
  const r = obj(p, 'request')!;
  const message = str(r, 'message');
  const hint = r.reply_hint;
  if (hint !== 'full' && hint !== 'short' && hint !== 'none') throw new BadParams('"request.reply_hint" must be full, short or none');
  return { message, reply_hint: hint };
}

/** The optional methods `driver` implements, by their wire names (`shutdown` is always served). */
export function extensionsOf(driver: Driver): Extension[] {
  const has: Record<Extension, boolean> = {
    preview: typeof driver.preview === 'function',
    precheck: typeof driver.precheck === 'function',
    interactions_for: typeof driver.interactionsFor === 'function',
    set_tier: typeof driver.setTier === 'function',
    shutdown: true,
  };
  return EXTENSIONS.filter((e) => has[e]);
}

/**
 * Serves `driver` until the hub sends `shutdown` or closes stdin; then disposes it and, on the
 * process's stdio, exits. While serving on process.stdout everything else written there (a
 * stray console.log, a library's banner) goes to stderr, so stdout carries protocol lines only.
 */
export async function serveDriver(driver: Driver, io: Partial<ServeIo> = {}): Promise<void> {
  const input = io.input ?? process.stdin;
  const output = io.output ?? process.stdout;
  const log = io.log ?? process.stderr;
  const exit = io.exit ?? output === process.stdout;
  const write = output.write.bind(output) as (chunk: string) => boolean;
  const restore = output === process.stdout ? divertStdout(log) : () => {};

  const extensions = extensionsOf(driver);
  const inFlight = new Map<RpcId, AbortController>();
  let initialized = false;
  let ended = false;

  const answer = (response: RpcResponse): void => {
    if (ended) return; // serving stopped: the hub no longer waits for these
    let line = encodeLine(response);
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      line = encodeLine({
        jsonrpc: '2.0',
        id: response.id,
        error: errorToRpc(
          new DriverError('Upstream', `the answer is larger than the protocol's ${MAX_LINE_BYTES} bytes`, { hint: 'ask for less (a smaller range or limit)' }),
        ),
      });
    }
    write(line);
  };
  const fail = (id: RpcId | null, code: number, message: string): void => answer({ jsonrpc: '2.0', id, error: { code, message } });

  const call = async (method: string, p: Params, signal: AbortSignal): Promise<unknown> => {
    switch (method) {
      case 'info':
        return driver.info();
      case 'channels':
        return driver.channels();
      case 'ops':
        return driver.ops();
      case 'doctor':
        return driver.doctor();
      case 'send':
        return driver.send(str(p, 'addr'), sendRequest(p), obj(p, 'context', true) as InvokeContext | undefined);
      case 'invoke':
        if (!('args' in p)) throw new BadParams('"args" is missing');
        return driver.invoke(str(p, 'addr'), str(p, 'op'), p.args as JsonValue, obj(p, 'context', true) as InvokeContext | undefined, signal);
      case 'recv': {
        const cursor = p.cursor;
        if (cursor !== undefined && cursor !== null && (typeof cursor !== 'number' || !Number.isFinite(cursor)))
          throw new BadParams('"cursor" must be a number or null');
        return driver.recv(cursor ?? undefined);
      }
      case 'preview':
        if (!driver.preview) break;
        if (!('args' in p)) throw new BadParams('"args" is missing');
        return (await driver.preview(str(p, 'addr'), str(p, 'op'), p.args as JsonValue)) ?? null;
      case 'precheck':
        if (!driver.precheck) break;
        if (!('args' in p)) throw new BadParams('"args" is missing');
        await driver.precheck(str(p, 'addr'), str(p, 'op'), p.args as JsonValue, obj(p, 'context', true) as InvokeContext | undefined);
        return null;
      case 'interactions_for':
        if (!driver.interactionsFor) break;
        return driver.interactionsFor(str(p, 'addr'));
      case 'set_tier':
        if (!driver.setTier) break;
        await driver.setTier(str(p, 'addr'), str(p, 'tier'));
        return null;
    }
    return NOT_FOUND;
  };

  const handle = async (id: RpcId, method: string, params: unknown): Promise<void> => {
    const controller = new AbortController();
    inFlight.set(id, controller);
    try {
      if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params))) throw new BadParams('params must be an object');
      const result = await call(method, (params ?? {}) as Params, controller.signal);
      if (result === NOT_FOUND) fail(id, METHOD_NOT_FOUND, `no method ${JSON.stringify(method)}`);
      else answer({ jsonrpc: '2.0', id, result: result ?? null });
    } catch (e) {
      if (e instanceof BadParams) fail(id, INVALID_PARAMS, `${method}: ${e.message}`);
      else answer({ jsonrpc: '2.0', id, error: errorToRpc(e) });
    } finally {
      inFlight.delete(id);
    }
  };

  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  let code = 0;
  const end = async (exitCode: number, shutdownId?: RpcId): Promise<void> => {
    if (ended) return;
    ended = true;
    code = exitCode;
    input.off('data', onData);
    for (const c of inFlight.values()) c.abort();
    try {
      await driver.dispose?.();
    } catch (e) {
      log.write(`dispose failed: ${e instanceof Error ? e.message : String(e)}\n`);
    }
    if (shutdownId !== undefined) write(encodeLine({ jsonrpc: '2.0', id: shutdownId, result: null }));
    finish();
  };

  const onLine = (line: string): void => {
    if (line.trim() === '') return;
    const message = decodeLine(line);
    if (typeof message === 'string') {
      log.write(`ignored ${message}\n`);
      fail(null, PARSE_ERROR, message);
      return;
    }
    if (!('method' in message)) return; // the hub answers nothing we asked: a driver sends no requests
    const { method, params } = message;
    const id = 'id' in message ? message.id : undefined;
    if (id === undefined) {
      if (method === 'cancel') {
        const target = (params as { id?: unknown } | undefined)?.id;
        if (typeof target === 'number' || typeof target === 'string') inFlight.get(target)?.abort(new DriverError('Timeout', 'the hub cancelled the call'));
      }
      return;
    }
    if (method === 'initialize') {
      const version = (params as { protocol_version?: unknown } | undefined)?.protocol_version;
      if (typeof version !== 'string') return fail(id, INVALID_PARAMS, 'initialize: "protocol_version" must be a string');
      let info;
      try {
        info = driver.info();
      } catch (e) {
        return answer({ jsonrpc: '2.0', id, error: errorToRpc(e) });
      }
      initialized = true;
      // Always the version this side speaks: a hub that speaks another one then declines.
      return answer({ jsonrpc: '2.0', id, result: { protocol_version: PROTOCOL_VERSION, info, extensions } });
    }
    if (!initialized) return fail(id, INVALID_REQUEST, `${method} before initialize`);
    if (method === 'shutdown') {
      void end(0, id);
      return;
    }
    if (inFlight.has(id)) return fail(id, INVALID_REQUEST, `id ${JSON.stringify(id)} is already in flight`);
    void handle(id, method, params);
  };

  const splitter = new LineSplitter();
  const onData = (chunk: Buffer | string): void => {
    let lines: string[];
    try {
      lines = splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    } catch (e) {
      // The hub never writes such a line: the pipe is not what it should be, so stop serving.
      log.write(`stopped: the hub wrote ${e instanceof Error ? e.message : String(e)}\n`);
      void end(1);
      return;
    }
    for (const line of lines) onLine(line);
  };
  input.on('data', onData);
  input.once('end', () => void end(0));
  input.once('error', () => void end(1));

  await done;
  restore();
  if (exit) {
    // Exit once stdout has taken every answer (the last one may be `shutdown`'s).
    output.write('', () => process.exit(code));
  }
}

const NOT_FOUND = Symbol('method not found');

/** Sends process.stdout's other writers to `log`; returns how to undo it. */
function divertStdout(log: Writable): () => void {
  const original = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (log.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;
  return () => {
    process.stdout.write = original;
  };
}
