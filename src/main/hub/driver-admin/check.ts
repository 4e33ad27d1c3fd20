/**
 * The driver conformance kit (`uplink driver check -- <command…>`): starts a driver through the
 * hub's own client of the protocol (`ExternalDriver`), so it sees the driver exactly as the hub
 * would, and checks one thing at a time, one result per check.
 *
 * It never invokes an op that is not declared `mutating: false`: nobody approves anything here.
 * Two checks need the driver's help and are skipped (with the reason) without it: a driver started
 * with `UPLINK_DRIVER_CHECK=1` in its environment may declare the ops `uplink-check-slow` and
 * `uplink-check-large` (docs/driver-protocol.md). Every other check works on any driver.
 */
import { inputValidator, isValidIdentifier, strictSchemaError } from '../../kernel';
import type { JsonSchema, JsonValue } from '../../kernel';
import {
  ChannelsResultSchema,
  DoctorReportSchema,
  DRIVER_ERROR_KINDS,
  DriverError,
  DriverErrorWireSchema,
  DriverInfoSchema,
  EXTENSIONS,
  ExternalDriver,
  INVALID_PARAMS,
  METHOD_NOT_FOUND,
  OpsResultSchema,
  PARSE_ERROR,
  PROTOCOL_VERSION,
  RecvBatchSchema,
  renderDriverError,
  rpcErrorOf,
} from '../../drivers';
import type { DriverErrorWire, InitializeResult, InvokeContext, OpSpec } from '../../drivers';
import { protocolCheck } from './external';

/** Set to `1` in the environment of a driver the kit starts. */
export const CHECK_ENV = 'UPLINK_DRIVER_CHECK';
/** Convention op: `{ms}` → any result after `ms` milliseconds, sooner when cancelled. */
export const SLOW_OP = 'uplink-check-slow';
/** Convention op: `{bytes}` → `{data}`, a string of exactly `bytes` characters. */
export const LARGE_OP = 'uplink-check-large';
/** What the large-result check asks for: far above a pipe's buffer, well below the line bound. */
export const LARGE_BYTES = 8 * 1024 * 1024;

export const CHECK_NAMES = [
  'handshake',
  'info',
  'channels',
  'ops',
  'schemas',
  'mutating',
  'doctor',
  'recv',
  'errors',
  'invalid_args',
  'unknown_method',
  'malformed',
  'cancel',
  'deadline',
  'large_result',
  'crash_restart',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  name: CheckName;
  status: 'pass' | 'fail' | 'skip';
  /** For a pass, an optional note; for a fail or a skip, why. */
  why?: string;
  hint?: string;
}

export interface CheckOptions {
  /** argv vector, never a shell line. */
  command: string[];
  /** Bound of every call the kit makes (default 5 s). */
  timeoutMs?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Told each result as soon as it is known. */
  onResult?: (result: CheckResult) => void;
}

class Failure extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}
class Skip extends Error {}

function fail(why: string, hint?: string): never {
  throw new Failure(why, hint);
}
function skip(why: string): never {
  throw new Skip(why);
}

interface State {
  d: ExternalDriver;
  timeoutMs: number;
  /** The first start worked: the other checks can run even when the handshake's answer has a flaw. */
  started?: boolean;
  kind?: string;
  ops?: OpSpec[];
  /** The first channel's address (without `<id>:`). */
  addr?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const compiled = new Map<JsonSchema, (value: unknown) => string | undefined>();

/** Why `value` is not what `schema` of the driver protocol describes (the host's own check), or `undefined`. */
function problem(schema: JsonSchema, value: unknown): string | undefined {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = protocolCheck(schema)));
  return check(value);
}

function cut(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

const show = (value: unknown): string => cut(JSON.stringify(value) ?? String(value), 80);

function describe(e: unknown): string {
  if (e instanceof DriverError) return e.hint ? `${e.message} (${e.hint})` : e.message;
  return e instanceof Error ? e.message : String(e);
}

function context(ms: number): InvokeContext {
  return { interaction: 'typed', agent: 'uplink-check', invocation_id: 'uplink-check', deadline_ms: ms };
}

function hasOp(s: State, op: string): boolean {
  return !!s.ops?.some((o) => o.op === op && o.mutating === false);
}

/** The first op the kit may invoke. */
function readOnlyOp(s: State): OpSpec {
  if (!s.ops) skip('ops did not answer');
  return s.ops!.find((o) => o.mutating === false) ?? skip('no op is declared "mutating": false, and the kit invokes no other');
}

function channelAddr(s: State): string {
  return s.addr ?? skip('the driver lists no channel to call');
}

/** Rejects unless the same process still serves (a crash would be hidden by the host's restart). */
async function stillServing(s: State, restarts: number, after: string): Promise<void> {
  try {
    await s.d.call('info', {});
  } catch (e) {
    fail(`it stopped answering after ${after}: ${describe(e)}`, 'keep serving: one bad message must not stop the driver');
  }
  const { restarts: now, last_exit, stderr } = s.d.status();
  // Node ends a crash's stderr with its version: the line naming the error says more.
  const telling = stderr.findLast((l) => /error/i.test(l)) ?? stderr.at(-1) ?? 'nothing';
  if (now !== restarts)
    fail(
      `it fell over after ${after} (${last_exit?.reason ?? 'its process ended'}; stderr: ${cut(telling)})`,
      'keep serving: one bad message must not stop the driver',
    );
}

async function settle(p: Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const CHECKS: Record<CheckName, (s: State) => Promise<string | void>> = {
  async handshake(s) {
    try {
      await s.d.ensureStarted();
    } catch (e) {
      // The host's own hint speaks of restarts and the panel; here a person typed a command.
      const message = e instanceof Error ? e.message : String(e);
      if (/^driver could not be started/.test(message))
        fail(`the ${message}`, 'check the command: its program must exist and be executable (an argv vector, no shell)');
      throw e;
    }
    s.started = true;
    // The host has checked the answer against the protocol's schema before it started.
    const init = s.d.handshake() as InitializeResult;
    s.kind = init.info.kind;
    const ext = init.extensions ?? [];
    const note = `${s.d.id}, protocol ${PROTOCOL_VERSION}, extensions: ${ext.length ? ext.join(', ') : 'none'}`;
    const unknown = ext.filter((e) => !(EXTENSIONS as readonly string[]).includes(e));
    if (unknown.length)
      fail(
        `initialize's extensions lists ${unknown.map(show).join(', ')}, not a known extension`,
        `list only the optional methods you serve: ${EXTENSIONS.join(', ')}`,
      );
    return note;
  },

  async info(s) {
    const info = await s.d.call('info', {});
    const wrong = problem(DriverInfoSchema, info);
    if (wrong) fail(`info answered ${show(info)}, not a DriverInfo: ${wrong}`, 'answer info with the DriverInfo of initialize');
    const { id, kind } = info as { id: string; kind: string };
    const was = (s.d.handshake() as InitializeResult).info;
    if (id !== was.id || kind !== was.kind)
      fail(`info says ${show(id)} (${show(kind)}), initialize said "${was.id}" (${was.kind})`, 'answer info with the DriverInfo of initialize');
  },

  async channels(s) {
    const listed = await s.d.call('channels', {});
    const wrong = problem(ChannelsResultSchema, listed);
    if (wrong)
      fail(
        `channels answered ${show(listed)}, not a list of ChannelEntry: ${wrong}`,
        'answer channels with ChannelEntry objects (channel "<id>:<addr>", labels: strings, detail)',
      );
    // The host's own reading: it refuses a channel outside the driver's id.
    const entries = await s.d.channels();
    const bad = entries.find((e) => e.channel.length <= s.d.id.length + 1);
    if (bad)
      fail(
        `the entry ${show(bad)} has no address after "${s.d.id}:"`,
        'answer channels with ChannelEntry objects (channel "<id>:<addr>", labels: strings, detail)',
      );
    s.addr = entries[0]?.channel.slice(s.d.id.length + 1);
    return entries.length ? `${entries.length} channel(s)` : 'no channel now: the checks that call one are skipped';
  },

  async ops(s) {
    const ops = await s.d.call('ops', {});
    const wrong = problem(OpsResultSchema, ops);
    if (wrong)
      fail(
        `ops answered ${show(ops)}, not a list of OpSpec: ${wrong}`,
        'answer ops with a list of OpSpec (op, summary, mutating, params_schema, result_schema)',
      );
    s.ops = ops as OpSpec[];
    const seen = new Set<string>();
    for (const { op } of s.ops) {
      if (!isValidIdentifier(`${s.d.id}.${op}`))
        fail(`the op name ${show(op)} cannot be offered`, 'an op name is lowercase letters and digits, with ".", "/" or "-" between them');
      if (seen.has(op)) fail(`the op "${op}" is declared twice`, 'declare each op once');
      seen.add(op);
    }
    return `${seen.size} op(s)`;
  },

  async schemas(s) {
    if (!s.ops) skip('ops did not answer');
    for (const o of s.ops!) {
      for (const which of ['params_schema', 'result_schema'] as const) {
        const error = strictSchemaError(o[which]);
        if (error)
          fail(
            `${o.op}'s ${which} does not compile as JSON Schema Draft 2020-12 in strict mode: ${cut(error)}`,
            'fix the schema: strict mode refuses unknown keywords and other likely typos',
          );
      }
    }
  },

  async mutating(s) {
    if (!s.ops) skip('ops did not answer');
    const undeclared = s.ops!.filter((o) => typeof o.mutating !== 'boolean').map((o) => o.op);
    if (undeclared.length)
      fail(
        `${undeclared.join(', ')} ${undeclared.length === 1 ? 'does' : 'do'} not declare "mutating" (missing counts as mutating: every call waits for the operator)`,
        'declare "mutating": false on read-only ops and "mutating": true on the others',
      );
  },

  async doctor(s) {
    const r = await s.d.call('doctor', {});
    const wrong = problem(DoctorReportSchema, r);
    if (wrong) fail(`doctor answered ${show(r)}, not a DoctorReport: ${wrong}`, 'answer doctor with {"driver": <id>, "ok": true|false, "lines": [<strings>]}');
    const report = r as { ok: boolean; lines: string[] };
    if (!report.ok) return `it reports not ok: ${cut(report.lines[0] ?? '')}`;
  },

  async recv(s) {
    if (s.kind === 'capability') skip('a capability driver serves no recv');
    const r = await s.d.call('recv', { cursor: null });
    const wrong = problem(RecvBatchSchema, r);
    if (wrong) fail(`recv answered ${show(r)}, not a RecvBatch: ${wrong}`, 'a messaging driver answers recv with {"items": [...], "next_cursor": <integer>}');
  },

  async errors(s) {
    const op = readOnlyOp(s);
    const addr = `uplink-check-no-such-channel-${process.pid}`;
    const { value, error } = await settle(s.d.invoke(addr, op.op, {}, context(s.timeoutMs)));
    if (!error)
      fail(
        `${op.op} on ${s.d.id}:${addr}, a channel that does not exist, answered ${show(value)}`,
        'answer an address you do not have with a DriverError of kind NotFound',
      );
    const rpc = rpcErrorOf(error) ?? fail(`${op.op} on a channel that does not exist did not answer: ${describe(error)}`);
    const data = rpc.data as Partial<DriverErrorWire> | undefined;
    const fix = `answer {"code": -32000, "message": …, "data": {"kind": one of ${DRIVER_ERROR_KINDS.join(', ')}, "message": …, "hint": …}}`;
    if (!isRecord(data)) fail(`its error (${rpc.code} ${show(rpc.message)}) carries no DriverError in its data`, fix);
    const wrong = problem(DriverErrorWireSchema, data);
    if (wrong) fail(`its error's data is not a DriverError: ${wrong}`, fix);
    if (/[\r\n]/.test(`${data!.message}${data!.hint ?? ''}`))
      fail('its error message or hint spans several lines', 'an error is one line: what went wrong, and a hint');
    return cut(renderDriverError(s.d.id, error as DriverError), 200);
  },

  async invalid_args(s) {
    const op = readOnlyOp(s);
    const addr = channelAddr(s);
    const validate = inputValidator(op.params_schema);
    const CANDIDATES: JsonValue[] = [{ 'uplink-check-unknown': true }, 42, 'uplink-check', null, []];
    const bad = CANDIDATES.find((c) => !validate(structuredClone(c))) ?? skip(`${op.op}'s params_schema accepts anything`);
    const restarts = s.d.status().restarts;
    const { error } = await settle(s.d.invoke(addr, op.op, bad, context(s.timeoutMs)));
    const rpc = rpcErrorOf(error);
    const refused = rpc && (rpc.code === INVALID_PARAMS || (error as DriverError).kind === 'Invalid');
    if (error && !refused)
      fail(
        `${op.op} with args its params_schema refuses (${show(bad)}) failed as ${describe(error)}`,
        'answer args your params_schema refuses with a DriverError of kind Invalid',
      );
    await stillServing(s, restarts, `args its params_schema refuses (${show(bad)})`);
    if (!error) return `${op.op} answered ${show(bad)}: it relies on the hub's validation`;
  },

  async unknown_method(s) {
    const { value, error } = await settle(s.d.call('uplink-check-no-such-method', {}));
    if (!error)
      fail(`it answered the unknown method uplink-check-no-such-method with ${show(value)}`, 'answer a method you do not serve with the JSON-RPC error -32601');
    const rpc =
      rpcErrorOf(error) ?? fail(`it did not answer an unknown method: ${describe(error)}`, 'answer a method you do not serve with the JSON-RPC error -32601');
    if (rpc.code !== METHOD_NOT_FOUND)
      fail(`it answered an unknown method with the error code ${rpc.code}, not -32601`, 'answer a method you do not serve with the JSON-RPC error -32601');
  },

  async malformed(s) {
    await s.d.ensureStarted();
    const restarts = s.d.status().restarts;
    const answers = await s.d.exchangeRaw(['uplink-check: this line is not JSON', '{"jsonrpc":"2.0","id":"uplink-check-malformed"}'], 300);
    const PROTOCOL_ERRORS = [PARSE_ERROR, -32600, METHOD_NOT_FOUND, INVALID_PARAMS];
    const hint = 'answer a line that is not JSON with -32700 and a request without a method with -32600 (or ignore them), then carry on';
    for (const a of answers) {
      if (!a.error) fail(`it answered a malformed request with the result ${show(a.result)}`, hint);
      if (!PROTOCOL_ERRORS.includes(a.error!.code)) fail(`it answered a malformed request with the error code ${a.error!.code}`, hint);
    }
    await stillServing(s, restarts, 'a line that is not JSON and a request without a method');
    return answers.length ? `answered ${answers.map((a) => a.error!.code).join(', ')}` : 'ignored them';
  },

  async cancel(s) {
    await s.d.ensureStarted();
    const restarts = s.d.status().restarts;
    const ac = new AbortController();
    const slow = hasOp(s, SLOW_OP) && s.addr !== undefined;
    const call = slow
      ? s.d.invoke(s.addr!, SLOW_OP, { ms: Math.round(s.timeoutMs / 2) }, context(s.timeoutMs), ac.signal)
      : s.d.call('channels', {}, { signal: ac.signal });
    setTimeout(() => ac.abort(), slow ? 100 : 0);
    await settle(call);
    const last = s.d
      .trace({ method: slow ? 'invoke' : 'channels' })
      .filter((t) => t.dir === 'out')
      .at(-1);
    const sent = !!last && s.d.trace({ method: 'cancel', after: last.seq }).length > 0;
    // The call may be answered before the cancel goes out; the hub also sends one for an id just answered.
    if (!sent && last) await s.d.exchangeRaw([JSON.stringify({ jsonrpc: '2.0', method: 'cancel', params: { id: last.id } })], 100);
    await stillServing(s, restarts, 'a cancel');
    return sent ? `cancelled ${slow ? SLOW_OP : 'channels'} in flight` : 'cancel of a call just answered';
  },

  async deadline(s) {
    if (!hasOp(s, SLOW_OP)) skip(`the driver offers no read-only ${SLOW_OP} op when ${CHECK_ENV}=1`);
    const addr = channelAddr(s);
    const quick = await settle(s.d.invoke(addr, SLOW_OP, { ms: 50 }, context(s.timeoutMs)));
    if (quick.error) fail(`${SLOW_OP} {ms: 50} failed: ${describe(quick.error)}`, `answer ${SLOW_OP} after ms milliseconds`);
    const restarts = s.d.status().restarts;
    const deadline = 300;
    const late = settle(s.d.invoke(addr, SLOW_OP, { ms: deadline * 10 }, context(deadline)));
    await sleep(50);
    const meanwhile = await settle(s.d.call('info', {}, { deadlineMs: deadline * 3 }));
    if (meanwhile.error)
      fail(
        `it did not answer info while a slow call was in flight: ${describe(meanwhile.error)}`,
        'serve requests concurrently: a slow call must not hold up the others',
      );
    const { error } = await late;
    if (!(error instanceof DriverError) || error.kind !== 'Timeout')
      fail(`a call past its deadline_ms (${deadline} ms) ended as ${error ? describe(error) : 'a result'}, not as a Timeout`);
    await stillServing(s, restarts, 'a call past its deadline');
  },

  async large_result(s) {
    if (!hasOp(s, LARGE_OP)) skip(`the driver offers no read-only ${LARGE_OP} op when ${CHECK_ENV}=1`);
    const addr = channelAddr(s);
    const r = await s.d.invoke(addr, LARGE_OP, { bytes: LARGE_BYTES }, context(Math.max(s.timeoutMs, 10_000)));
    const data = isRecord(r) ? r.data : undefined;
    if (typeof data !== 'string' || data.length !== LARGE_BYTES)
      fail(
        `${LARGE_OP} {bytes: ${LARGE_BYTES}} answered ${typeof data === 'string' ? `${data.length} characters` : show(r)}`,
        `answer {"data": <a string of exactly bytes characters>}, as one line`,
      );
    return `${LARGE_BYTES / 1024 / 1024} MiB`;
  },

  async crash_restart(s) {
    await s.d.ensureStarted();
    const { pid, restarts } = s.d.status();
    const slow = hasOp(s, SLOW_OP) && s.addr !== undefined;
    const call = settle(slow ? s.d.invoke(s.addr!, SLOW_OP, { ms: s.timeoutMs }, context(s.timeoutMs)) : s.d.call('doctor', {}));
    await (slow ? sleep(100) : new Promise((r) => setImmediate(r)));
    if (pid !== undefined) process.kill(pid, 'SIGKILL');
    const { error } = await call;
    if (error && !(error instanceof DriverError && error.kind === 'Unavailable'))
      fail(`the call in flight when the driver was killed ended as ${describe(error)}, not Unavailable`);
    // A call answered before the kill landed: the next one must not go to the dying process.
    for (const until = Date.now() + s.timeoutMs; s.d.status().pid === pid && Date.now() < until;) await sleep(10);
    const again = await settle(s.d.call('ops', {}));
    if (again.error)
      fail(
        `it did not start again after being killed: ${describe(again.error)}`,
        'a driver must start cleanly after a crash: leave no lock file, port or state that stops the next start',
      );
    if (s.d.status().restarts <= restarts) fail('the kill did not end the driver');
    return error ? 'the call in flight failed as Unavailable, the next call restarted it' : 'the call was answered before the kill; the next call restarted it';
  },
};

/** Runs every check against the driver `command` starts; the results in order. */
export async function checkDriver(options: CheckOptions): Promise<CheckResult[]> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const d = new ExternalDriver({
    id: 'driver',
    check: protocolCheck,
    adoptId: true,
    command: options.command,
    cwd: options.cwd ?? process.cwd(),
    env: { ...(options.env ?? process.env), [CHECK_ENV]: '1' },
    callTimeoutMs: timeoutMs,
    backoffMs: 50,
    stopGraceMs: 1000,
  });
  const s: State = { d, timeoutMs };
  const results: CheckResult[] = [];
  const report = (r: CheckResult): void => {
    results.push(r);
    options.onResult?.(r);
  };
  try {
    for (const name of CHECK_NAMES) {
      if (name !== 'handshake' && !s.started) {
        report({ name, status: 'skip', why: 'the driver did not start' });
        continue;
      }
      try {
        const note = await CHECKS[name](s);
        report({ name, status: 'pass', ...(note ? { why: note } : {}) });
      } catch (e) {
        if (e instanceof Skip) report({ name, status: 'skip', why: e.message });
        else if (e instanceof Failure) report({ name, status: 'fail', why: e.message, ...(e.hint ? { hint: e.hint } : {}) });
        else
          report({
            name,
            status: 'fail',
            why: e instanceof Error ? e.message : String(e),
            hint: (e instanceof DriverError && e.hint) || 'see docs/driver-protocol.md',
          });
      }
    }
  } finally {
    await d.dispose();
  }
  return results;
}
