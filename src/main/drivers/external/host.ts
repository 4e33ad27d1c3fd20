/**
 * The hub's side of the driver protocol (docs/driver-protocol.md): a driver that runs as a child
 * process, seen by the hub as any other `Driver`. The one client of the protocol: the hub, the
 * conformance check and the panel's debugger all read the same `status()` and `trace()`.
 *
 * The Driver interface's `info()` and `ops()` are synchronous, so both come from the handshake and
 * are cached; until the first start they are a placeholder and no ops. `onChange` says when they
 * change (a first start, a restart into a new version), so the hub can re-register the ops.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { ApprovalPreview, ChannelEntry, DoctorReport, Driver, DriverInfo, InvokeContext, OpSpec, RecvBatch, SendReceipt, SendRequest } from '../contract';
import { decodeLine, encodeLine, EXTENSIONS, LineSplitter, PROTOCOL_VERSION, rpcToError } from './wire';
import type { InitializeParams, RpcErrorObject, RpcId, RpcMessage, RpcResponse } from './wire';
import type { DriverAdmission, DriverProcessState, DriverProcessStatus, DriverTraceEntry } from '../../../shared/driver-status';
import { Emitter } from '../../../shared/emitter';

/** The file the operator admitted and its SHA-256 (64 lowercase hex). */
export interface Integrity {
  file: string;
  sha256: string;
}

export interface ExternalDriverOptions {
  /** The id the operator gave the driver; the driver's `info.id` must equal it. */
  id: string;
  /** argv vector, never a shell line. */
  command: string[];
  /** The working directory (the data dir). */
  cwd: string;
  /**
   * Read before every start. Without this option nothing is checked (the conformance kit runs a
   * command the person typed); with it, `undefined` means the operator has not trusted the driver.
   */
  integrity?: () => Integrity | undefined;
  uplinkVersion?: string;
  /** Bound of the handshake and of calls that bring no deadline of their own (default 15 s). */
  callTimeoutMs?: number;
  /** First restart delay after a crash, doubled per crash in a row up to 30 s (default 500 ms). */
  backoffMs?: number;
  /** How long a stopping driver gets after its stdin closes, and after SIGTERM (default 2 s). */
  stopGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Take the driver's own `info.id` at the handshake instead of requiring `id`: the conformance
   * kit runs a command with no config to name it.
   */
  adoptId?: boolean;
}

export type ProcessState = DriverProcessState;
export type Admission = DriverAdmission;
/** One protocol message as the trace keeps it: payloads masked and cut. */
export type TraceEntry = DriverTraceEntry;

export interface TraceFilter {
  method?: string;
  id?: RpcId;
  /** Only entries with a larger `seq` (polling). */
  after?: number;
  limit?: number;
}

export type ExternalStatus = DriverProcessStatus;

const STDERR_LINES = 200;
const STDERR_LINE_CHARS = 500;
const TRACE_ENTRIES = 1000;
const SUMMARY_CHARS = 512;
const MAX_BACKOFF_MS = 30_000;
/** Up this long, a driver is trusted again: its next crash waits the shortest delay. */
const STABLE_MS = 60_000;
const STOP_GRACE_MS = 2000;
/** The longest crash backoff a call waits out; past it the call fails at once. */
const MAX_CALL_WAIT_MS = 1000;

interface Pending {
  method: string;
  started: number;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  done: () => void;
}

interface Session {
  child: ChildProcessWithoutNullStreams;
  pending: Map<number, Pending>;
  nextId: number;
  startedAt: number;
  extensions: Set<string>;
  dead: boolean;
  stopping: boolean;
  closed: Promise<void>;
}

type Listener = (what: 'state' | 'ops') => void;

/** A driver's JSON-RPC error, kept beside the DriverError made of it (`initialize` reads `supported` in its data). */
const RPC_ERRORS = new WeakMap<Error, RpcErrorObject>();

/** The JSON-RPC error a driver answered, when `error` was made of one (the conformance kit reads its code and data). */
export function rpcErrorOf(error: unknown): RpcErrorObject | undefined {
  return error instanceof Error ? RPC_ERRORS.get(error) : undefined;
}

/** SHA-256 of a file, hex. */
export async function sha256File(file: string): Promise<string> {
  return createHash('sha256').update(await readFile(file)).digest('hex');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Args with the op's sensitive fields (and, under a `sensitive` flag, its text) masked. */
function maskArgs(args: unknown, sensitive: readonly string[]): unknown {
  if (!isRecord(args)) return args;
  const all = 'sensitive' in args && args.sensitive !== false;
  if (!all && !sensitive.some((k) => k in args)) return args;
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, sensitive.includes(k) || (all && v !== null && typeof v !== 'boolean' && typeof v !== 'number') ? '••••' : v]));
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** An out-of-process driver. */
export class ExternalDriver implements Driver {
  #id: string;
  readonly command: string[];
  #options: ExternalDriverOptions;
  #info: DriverInfo | undefined;
  #ops: OpSpec[] = [];
  #session: Session | undefined;
  #starting: Promise<Session> | undefined;
  #state: ProcessState = 'idle';
  #error: DriverError | undefined;
  #admission: Admission;
  #integrity: ExternalStatus['integrity'] = {};
  #protocol: string | undefined;
  #starts = 0;
  #crashes = 0;
  #nextStartAt = 0;
  #lastExit: ExternalStatus['last_exit'];
  #stderr: string[] = [];
  #trace: TraceEntry[] = [];
  #seq = 0;
  #changes = new Emitter<'state' | 'ops'>();
  #disposed = false;
  #handshake: unknown;
  #strays: ((response: RpcResponse) => void) | undefined;

  preview?: Driver['preview'];
  precheck?: Driver['precheck'];
  interactionsFor?: Driver['interactionsFor'];
  setTier?: Driver['setTier'];

  constructor(options: ExternalDriverOptions) {
    if (options.command.length === 0) throw new Error(`external driver ${options.id} has an empty command`);
    this.#options = options;
    this.#id = options.id;
    this.command = [...options.command];
    this.#admission = 'unchecked';
  }

  get id(): string {
    return this.#id;
  }

  // ── the Driver interface ───────────────────────────────────────────────────────────────────
  info(): DriverInfo {
    return this.#info ?? { id: this.id, kind: 'capability', summary: 'an external driver, not started yet' };
  }

  ops(): OpSpec[] {
    return this.#ops;
  }

  async channels(): Promise<ChannelEntry[]> {
    const entries = await this.#call('channels', {});
    if (!Array.isArray(entries)) throw new DriverError('Upstream', `${this.id} answered channels with something other than a list`);
    for (const e of entries as ChannelEntry[]) {
      // A driver names only its own channels: one listing `tmux:%1` must not pose as another driver.
      if (!isRecord(e) || typeof e.channel !== 'string' || !e.channel.startsWith(`${this.id}:`)) {
        throw new DriverError('Upstream', `${this.id} listed a channel outside ${this.id}: (${cut(JSON.stringify(isRecord(e) ? e.channel : e) ?? 'nothing', 80)})`, { hint: 'every channel a driver lists must start with its configured id and a colon' });
      }
    }
    return entries as ChannelEntry[];
  }

  send(addr: string, request: SendRequest, ctx?: InvokeContext, signal?: AbortSignal): Promise<SendReceipt> {
    return this.#call('send', { addr, request, ...(ctx ? { context: ctx } : {}) }, { signal, deadlineMs: ctx?.deadline_ms }) as Promise<SendReceipt>;
  }

  invoke(addr: string, op: string, args: JsonValue, ctx?: InvokeContext, signal?: AbortSignal): Promise<JsonValue> {
    return this.#call('invoke', { addr, op, args, context: ctx ?? {} }, { signal, deadlineMs: ctx?.deadline_ms }) as Promise<JsonValue>;
  }

  recv(cursor?: number): Promise<RecvBatch> {
    return this.#call('recv', { cursor: cursor ?? null }) as Promise<RecvBatch>;
  }

  async doctor(): Promise<DoctorReport> {
    try {
      await this.ensureStarted();
    } catch (e) {
      return { driver: this.id, ok: false, lines: [describe(e)] };
    }
    const report = (await this.#call('doctor', {})) as DoctorReport;
    if (!isRecord(report) || !Array.isArray(report.lines)) throw new DriverError('Upstream', `${this.id} answered doctor with something other than a DoctorReport`);
    const s = this.#session;
    const line = `external driver: pid ${s?.child.pid ?? '?'}, protocol ${this.#protocol ?? '?'}, ${this.#starts - 1} restart(s)`;
    return { driver: this.id, ok: report.ok === true, lines: [...report.lines.map(String), line] };
  }

  dispose(): Promise<void> {
    this.#disposed = true;
    this.#setState('stopped');
    return this.#stop();
  }

  // ── for the hub and the tools ──────────────────────────────────────────────────────────────
  /** Starts the driver when it is not running (waiting out a crash backoff); rejects with why it cannot run. */
  async ensureStarted(signal?: AbortSignal): Promise<void> {
    await this.#ready(signal);
  }

  /** Stops the process and starts it again now, forgetting crash backoff and a version refusal. */
  async restart(): Promise<void> {
    await this.#stop();
    this.#crashes = 0;
    this.#nextStartAt = 0;
    this.#error = undefined;
    this.#setState('idle');
    await this.ensureStarted();
  }

  /**
   * The hub cannot use what the driver declared (ops the kernel refuses): it is not used until
   * restarted, and says why.
   */
  refuse(message: string): void {
    this.#error = new DriverError('Unavailable', message, { hint: 'fix the driver\'s ops (`uplink driver check -- <its command>`), then restart it' });
    this.#ops = [];
    this.#setState('incompatible');
    if (this.#session) void this.#stopSession(this.#session);
  }

  /** The driver's answer to the last `initialize`, as it came (the conformance kit checks its shape). */
  handshake(): unknown {
    return this.#handshake;
  }

  /**
   * Any method of the protocol, with the deadline and cancellation of an op call (the conformance
   * kit). A JSON-RPC error rejects as a DriverError; `rpcErrorOf` gives what the driver answered.
   */
  call(method: string, params: Record<string, unknown>, options: { signal?: AbortSignal; deadlineMs?: number } = {}): Promise<unknown> {
    return this.#call(method, params, options);
  }

  /**
   * Writes lines the protocol never sends to the running driver and collects, for `waitMs`, the
   * answers to ids it was never asked (the conformance kit's malformed-request check). Meanwhile
   * such an answer does not count as a broken driver.
   */
  async exchangeRaw(lines: string[], waitMs: number): Promise<RpcResponse[]> {
    const session = await this.#ready();
    const got: RpcResponse[] = [];
    this.#strays = (r) => got.push(r);
    try {
      for (const line of lines) {
        this.#record({ dir: 'out', type: 'invalid', bytes: Buffer.byteLength(line) + 1, summary: cut(line, SUMMARY_CHARS) });
        session.child.stdin.write(`${line}\n`);
      }
      await sleep(waitMs);
    } finally {
      this.#strays = undefined;
    }
    return got;
  }

  /** Told when the state or the ops change (after a handshake). */
  onChange(listener: Listener): () => void {
    return this.#changes.on(listener);
  }

  status(): ExternalStatus {
    const s = this.#session;
    return {
      id: this.id,
      command: [...this.command],
      state: this.#state,
      ...(s && !s.dead && s.child.pid !== undefined ? { pid: s.child.pid } : {}),
      ...(this.#protocol ? { protocol_version: this.#protocol } : {}),
      extensions: s ? [...s.extensions] : [],
      restarts: Math.max(0, this.#starts - 1),
      ...(s ? { started_at: s.startedAt } : {}),
      ...(this.#state === 'backoff' ? { next_start_at: this.#nextStartAt } : {}),
      ...(this.#lastExit ? { last_exit: { ...this.#lastExit } } : {}),
      // An entry the config does not admit is untrusted before any start: no hash needed to know.
      admission: this.#admission === 'unchecked' && this.#options.integrity && !this.#options.integrity() ? 'untrusted' : this.#admission,
      integrity: { ...this.#integrity },
      ...(this.#error ? { error: describe(this.#error) } : {}),
      in_flight: s && !s.dead ? s.pending.size : 0,
      stderr: [...this.#stderr],
    };
  }

  /** The protocol trace, oldest first, filtered; bounded to the last 1000 messages. */
  trace(filter: TraceFilter = {}): TraceEntry[] {
    const out = this.#trace.filter((t) => (filter.method === undefined || t.method === filter.method) && (filter.id === undefined || t.id === filter.id) && (filter.after === undefined || t.seq > filter.after));
    return filter.limit !== undefined ? out.slice(-filter.limit) : out;
  }

  // ── the process ────────────────────────────────────────────────────────────────────────────
  #setState(state: ProcessState): void {
    if (this.#state === 'stopped' && state !== 'stopped' && this.#disposed) return;
    this.#state = state;
    this.#emit('state');
  }

  #emit(what: 'state' | 'ops'): void {
    this.#changes.emit(what);
  }

  async #ready(signal?: AbortSignal): Promise<Session> {
    if (this.#state === 'incompatible' && this.#error) throw this.#error;
    if (this.#session && !this.#session.dead) return this.#session;
    if (this.#disposed) throw new DriverError('Unavailable', `${this.id} is stopped`, { hint: 'the hub is shutting down; start it again and retry' });
    this.#starting ??= this.#start(signal).finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  async #start(signal?: AbortSignal): Promise<Session> {
    const wait = this.#nextStartAt - Date.now();
    // A short wait is absorbed by the call; a long one would stall every listing, so it is said instead.
    if (wait > MAX_CALL_WAIT_MS) {
      throw new DriverError('Unavailable', `${this.id} crashed ${this.#crashes} times in a row; it is started again in ${Math.ceil(wait / 1000)} s${this.#error ? ` (last: ${this.#error.message})` : ''}`, { hint: 'retry later, or restart it in the panel once it is fixed; its stderr is in the panel' });
    }
    if (wait > 0) await sleep(wait, signal);
    await this.#admit();
    this.#setState('starting');
    const session = this.#spawn();
    try {
      const init = await this.#send(session, 'initialize', { protocol_version: PROTOCOL_VERSION, uplink_version: this.#options.uplinkVersion ?? '0.1.0' } satisfies InitializeParams).catch((e: Error) => {
        const data = RPC_ERRORS.get(e)?.data;
        if (isRecord(data) && Array.isArray(data.supported)) this.#incompatible(data.supported.map(String));
        throw e;
      });
      this.#handshake = init;
      this.#checkInitialize(init);
      const result = init as { protocol_version: string; info: DriverInfo; extensions?: unknown };
      const extensions = Array.isArray(result.extensions) ? result.extensions.filter((e): e is string => typeof e === 'string' && (EXTENSIONS as readonly string[]).includes(e)) : [];
      session.extensions = new Set(extensions);
      const ops = await this.#send(session, 'ops', {});
      if (!Array.isArray(ops) || !ops.every((o) => isRecord(o) && typeof o.op === 'string' && isRecord(o.params_schema) && 'result_schema' in o)) {
        throw new DriverError('Upstream', `${this.id} answered ops with something other than a list of OpSpec`, { hint: 'check it with `uplink driver check -- <its command>`' });
      }
      this.#protocol = result.protocol_version;
      this.#info = { ...result.info, id: this.id };
      this.#bindExtensions(session.extensions);
      const changed = JSON.stringify(ops) !== JSON.stringify(this.#ops);
      this.#ops = ops as OpSpec[];
      this.#error = undefined;
      this.#setState('running');
      if (changed) this.#emit('ops');
      return session;
    } catch (e) {
      const error = e instanceof DriverError ? e : new DriverError('Unavailable', `${this.id} failed its handshake: ${(e as Error).message}`);
      if (this.#state !== 'incompatible') this.#error = error;
      void this.#stopSession(session);
      throw error;
    }
  }

  /** Before every start: the file the operator admitted must still be that file. */
  async #admit(): Promise<void> {
    const get = this.#options.integrity;
    if (!get) return;
    const integrity = get();
    if (!integrity) {
      this.#admission = 'untrusted';
      this.#integrity = {};
      // Agents read this line too (channel_doctor): the command, whose arguments may be private, is in status() only.
      this.#refuse(new DriverError('Unavailable', `${this.id} is not started: it waits for the operator to trust it`, { hint: 'trust it in the panel, which shows its command and the hash of its file' }));
    }
    let actual: string;
    try {
      actual = await sha256File(integrity.file);
    } catch (e) {
      this.#admission = 'mismatch';
      this.#integrity = { file: integrity.file, expected: integrity.sha256 };
      this.#refuse(new DriverError('Unavailable', `${this.id} is not started: its integrity file ${integrity.file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); admitted sha256 ${integrity.sha256}`, { hint: 'restore the file, or trust the driver again in the panel' }));
    }
    this.#integrity = { file: integrity.file, expected: integrity.sha256, actual };
    if (actual !== integrity.sha256.toLowerCase()) {
      this.#admission = 'mismatch';
      this.#refuse(new DriverError('Unavailable', `${this.id} is not started: integrity check failed, ${integrity.file} has sha256 ${actual} but the operator admitted ${integrity.sha256}`, { hint: 'if the change is yours, trust the driver again in the panel; otherwise find out who changed the file' }));
    }
    this.#admission = 'admitted';
  }

  #refuse(error: DriverError): never {
    this.#error = error;
    this.#setState('refused');
    throw error;
  }

  #checkInitialize(init: unknown): void {
    if (!isRecord(init) || typeof init.protocol_version !== 'string') throw new DriverError('Upstream', `${this.id} answered initialize without a protocol_version`, { hint: 'check it with `uplink driver check -- <its command>`' });
    if (init.protocol_version !== PROTOCOL_VERSION) this.#incompatible([init.protocol_version]);
    const info = init.info;
    if (!isRecord(info) || typeof info.id !== 'string' || typeof info.summary !== 'string' || !['messaging', 'capability', 'both'].includes(info.kind as string)) {
      throw new DriverError('Upstream', `${this.id} answered initialize without a valid info (id, kind, summary)`, { hint: 'check it with `uplink driver check -- <its command>`' });
    }
    if (this.#options.adoptId) {
      if (!/^[a-z][a-z0-9-]*$/.test(info.id)) throw new DriverError('Upstream', `the driver calls itself "${cut(info.id, 64)}", which is not a driver id`, { hint: 'an id is a lowercase letter, then lowercase letters, digits and "-"' });
      this.#id = info.id;
    }
    if (info.id !== this.id) {
      this.#error = new DriverError('Unavailable', `${this.id} is not used: the driver calls itself "${cut(info.id, 64)}", but the config names it "${this.id}"`, { hint: 'make the id in external_drivers equal the driver\'s info.id' });
      this.#setState('incompatible');
      throw this.#error;
    }
  }

  #incompatible(theirs: string[]): never {
    const versions = theirs.map((v) => cut(String(v), 16)).join(', ');
    this.#protocol = theirs[0];
    this.#error = new DriverError('Unavailable', `${this.id} is not used: it speaks driver protocol ${versions}, this Uplink speaks ${PROTOCOL_VERSION}`, { hint: `update the driver or Uplink so both speak protocol ${PROTOCOL_VERSION}, then restart the driver` });
    this.#setState('incompatible');
    throw this.#error;
  }

  #bindExtensions(ext: Set<string>): void {
    this.preview = ext.has('preview') ? async (addr, op, args) => ((await this.#call('preview', { addr, op, args })) as ApprovalPreview | null) ?? undefined : undefined;
    // A refusal arrives as the JSON-RPC error the op itself would fail with; `#call` throws it.
    this.precheck = ext.has('precheck') ? async (addr, op, args, ctx) => void (await this.#call('precheck', { addr, op, args, ...(ctx ? { context: ctx } : {}) })) : undefined;
    this.interactionsFor = ext.has('interactions_for') ? async (addr) => (await this.#call('interactions_for', { addr })) as Array<'typed' | 'semantic_ui' | 'visual_ui'> : undefined;
    this.setTier = ext.has('set_tier') ? async (addr, tier) => void (await this.#call('set_tier', { addr, tier })) : undefined;
  }

  #spawn(): Session {
    const [file, ...args] = this.command;
    const child = spawn(file!, args, { cwd: this.#options.cwd, env: this.#options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    this.#starts += 1;
    let resolveClosed: () => void = () => undefined;
    const session: Session = { child, pending: new Map(), nextId: 1, startedAt: Date.now(), extensions: new Set(), dead: false, stopping: false, closed: new Promise((r) => (resolveClosed = r)) };
    this.#session = session;
    const lines = new LineSplitter();
    child.stdout.on('data', (chunk: Buffer) => {
      if (session.dead) return;
      let got: string[];
      try {
        got = lines.push(chunk);
      } catch (e) {
        this.#fail(session, `wrote ${(e as Error).message}`);
        return;
      }
      for (const line of got) {
        if (session.dead) return;
        this.#onLine(session, line);
      }
    });
    // stdout closed while the process lives on: give its exit a moment to say more (code, signal).
    child.stdout.on('end', () => setTimeout(() => this.#fail(session, 'closed its stdout'), 200).unref());
    let partial = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = cut(parts.pop() ?? '', STDERR_LINE_CHARS);
      for (const p of parts) this.#stderrLine(p);
    });
    child.stdin.on('error', () => undefined); // EPIPE after a crash: the close below says what happened
    child.on('error', (e) => {
      this.#fail(session, `could not be started (${(e as NodeJS.ErrnoException).code ?? e.message}: ${file})`);
      resolveClosed();
    });
    child.on('close', (code, signal) => {
      if (partial) this.#stderrLine(partial);
      partial = '';
      const reason = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      if (!session.stopping || !this.#lastExit || this.#lastExit.at < session.startedAt) this.#lastExit = { at: Date.now(), code, signal, reason };
      this.#fail(session, reason);
      resolveClosed();
    });
    return session;
  }

  #stderrLine(line: string): void {
    this.#stderr.push(cut(line.replace(/\r$/, ''), STDERR_LINE_CHARS));
    if (this.#stderr.length > STDERR_LINES) this.#stderr.splice(0, this.#stderr.length - STDERR_LINES);
  }

  /** The process is gone or broken: its calls in flight fail, and the next call starts it again after the backoff. */
  #fail(session: Session, what: string): void {
    if (session.dead) return;
    session.dead = true;
    const last = this.#stderr.at(-1);
    const message = `${this.id} ${what}${last ? `; its last stderr line: ${cut(last, 200)}` : ''}`;
    for (const p of session.pending.values()) {
      p.done();
      p.reject(new DriverError('Unavailable', message, { hint: 'it is started again on the next call; its stderr is in the panel and `uplink doctor`' }));
    }
    session.pending.clear();
    if (session.child.exitCode === null && session.child.signalCode === null) {
      session.child.stdin.end();
      void this.#kill(session);
    }
    if (session.stopping || this.#disposed) return;
    const up = Date.now() - session.startedAt;
    this.#crashes = up >= STABLE_MS ? 1 : this.#crashes + 1;
    this.#nextStartAt = Date.now() + Math.min((this.#options.backoffMs ?? 500) * 2 ** (this.#crashes - 1), MAX_BACKOFF_MS);
    if (this.#state === 'running' || this.#state === 'starting') {
      this.#error = new DriverError('Unavailable', message);
      this.#setState('backoff');
    }
  }

  #onLine(session: Session, line: string): void {
    const message = decodeLine(line);
    if (typeof message === 'string') {
      this.#record({ dir: 'in', type: 'invalid', bytes: Buffer.byteLength(line), summary: cut(line, SUMMARY_CHARS) });
      this.#fail(session, `wrote ${message}`);
      return;
    }
    if ('method' in message) {
      this.#record({ dir: 'in', type: 'id' in message ? 'request' : 'notification', method: message.method, ...('id' in message ? { id: message.id } : {}), bytes: Buffer.byteLength(line), summary: cut(line, SUMMARY_CHARS) });
      // The protocol has no requests from a driver: answer as JSON-RPC says, and carry on.
      if ('id' in message) this.#write(session, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `the hub serves no method ${cut(message.method, 64)}` } });
      return;
    }
    const response = message as RpcResponse;
    const id = response.id;
    const pending = typeof id === 'number' ? session.pending.get(id) : undefined;
    this.#record({ dir: 'in', type: response.error ? 'error' : 'response', ...(pending ? { method: pending.method } : {}), ...(id !== null ? { id } : {}), bytes: Buffer.byteLength(line), ...(pending ? { ms: Date.now() - pending.started } : {}), summary: cut(line, SUMMARY_CHARS) });
    if (!pending) {
      // A cancelled or timed-out call may still be answered (the answer is dropped); an id never asked is a broken peer.
      const asked = typeof id === 'number' && Number.isInteger(id) && id >= 1 && id < session.nextId;
      if (!asked && this.#strays) this.#strays(response);
      else if (!asked) this.#fail(session, `answered id ${cut(JSON.stringify(id), 40)}, which it was never asked`);
      return;
    }
    session.pending.delete(id as number);
    pending.done();
    if (response.error) {
      const error = rpcToError(response.error, pending.method);
      RPC_ERRORS.set(error, response.error);
      pending.reject(error);
    } else pending.resolve(response.result);
  }

  async #call(method: string, params: Record<string, unknown>, options: { signal?: AbortSignal; deadlineMs?: number } = {}): Promise<unknown> {
    const session = await this.#ready(options.signal);
    return this.#send(session, method, params, options);
  }

  #send(session: Session, method: string, params: Record<string, unknown>, options: { signal?: AbortSignal; deadlineMs?: number } = {}): Promise<unknown> {
    const { signal } = options;
    if (session.dead) return Promise.reject(new DriverError('Unavailable', `${this.id} is not running`, { hint: 'retry: it is started again on the next call' }));
    if (signal?.aborted) return Promise.reject(new DriverError('Rejected', `${this.id}.${method} was cancelled`));
    const id = session.nextId++;
    const ms = options.deadlineMs ?? this.#options.callTimeoutMs ?? 15_000;
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        if (!session.pending.delete(id)) return;
        done();
        if (!session.dead) this.#write(session, { jsonrpc: '2.0', method: 'cancel', params: { id } });
      };
      const timer = setTimeout(() => {
        cancel();
        reject(new DriverError('Timeout', `${this.id} did not answer ${method} within ${Math.round(ms / 100) / 10} s`, { hint: 'the driver may be stuck; see its stderr in the panel or `uplink doctor`' }));
      }, ms);
      const onAbort = (): void => {
        cancel();
        reject(new DriverError('Rejected', `${this.id}.${method} was cancelled`));
      };
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      session.pending.set(id, { method, started: Date.now(), resolve, reject, done });
      this.#write(session, { jsonrpc: '2.0', id, method, params }, params);
    });
  }

  #write(session: Session, message: RpcMessage, params?: Record<string, unknown>): void {
    const line = encodeLine(message);
    const m = message as { id?: RpcId; method?: string; error?: unknown };
    const type = m.method === undefined ? 'error' : m.id === undefined ? 'notification' : 'request';
    this.#record({ dir: 'out', type, ...(m.method ? { method: m.method } : {}), ...(m.id !== undefined ? { id: m.id } : {}), bytes: Buffer.byteLength(line), summary: cut(JSON.stringify(params ? this.#masked(params) : message), SUMMARY_CHARS) });
    session.child.stdin.write(line);
  }

  /** What of a request the trace may keep: args of an op's `sensitive_args` (and flagged text) masked. */
  #masked(params: Record<string, unknown>): unknown {
    if (!('args' in params)) return params;
    const spec = this.#ops.find((o) => o.op === params.op);
    return { ...params, args: maskArgs(params.args, spec?.sensitive_args ?? []) };
  }

  #record(entry: Omit<TraceEntry, 'seq' | 'at'>): void {
    this.#trace.push({ seq: ++this.#seq, at: Date.now(), ...entry });
    if (this.#trace.length > TRACE_ENTRIES) this.#trace.splice(0, this.#trace.length - TRACE_ENTRIES);
  }

  async #stop(): Promise<void> {
    const session = this.#session;
    if (session) await this.#stopSession(session);
  }

  /** `shutdown` when offered, stdin closed, then SIGTERM and SIGKILL for a process that lingers. */
  async #stopSession(session: Session): Promise<void> {
    if (session.stopping) return session.closed;
    session.stopping = true;
    if (!session.dead && session.extensions.has('shutdown')) await this.#send(session, 'shutdown', {}, { deadlineMs: this.#options.stopGraceMs ?? STOP_GRACE_MS }).catch(() => undefined);
    session.child.stdin.end();
    await this.#kill(session);
    this.#fail(session, 'was stopped');
  }

  async #kill(session: Session): Promise<void> {
    const grace = this.#options.stopGraceMs ?? STOP_GRACE_MS;
    // The grace timer must not outlive the process it waits for: a CLI command would idle until it fired.
    // Unref'd is enough: a child still running holds the event loop until the timer escalates.
    const exited = (ms: number): Promise<boolean> => Promise.race([session.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    if (await exited(grace)) return;
    session.child.kill('SIGTERM');
    if (await exited(grace)) return;
    session.child.kill('SIGKILL');
    await exited(grace);
  }
}

/** An error as one line with its hint. */
function describe(e: unknown): string {
  if (e instanceof DriverError) return e.hint ? `${e.message} — hint: ${e.hint}` : e.message;
  return e instanceof Error ? e.message : String(e);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new DriverError('Rejected', 'cancelled while waiting to restart the driver'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
