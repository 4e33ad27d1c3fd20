/**
 * The hub's side of the driver protocol (docs/driver-protocol.md): a driver that runs as a child
 * process, seen by the hub as any other `Driver`. The one client of the protocol: the hub, the
 * conformance check and the panel's debugger all read the same `status()` and `trace()`.
 *
 * The Driver interface's `info()` and `ops()` are synchronous, so both come from the handshake and
 * are cached; until the first start they are a placeholder and no ops. `onChange` says when they
 * change (a first start, a restart into a new version), so the hub can re-register the ops.
 * Every answer the hub reads is checked against its protocol schema first (./answers).
 */
import type { InteractionKind, JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { ApprovalPreview, ChannelEntry, DoctorReport, Driver, DriverInfo, InvokeContext, OpSpec, RecvBatch, SendReceipt, SendRequest } from '../contract';
import * as S from '../protocol-schemas';
import type { Static } from '@sinclair/typebox';
import { EXTENSIONS, PROTOCOL_VERSION } from './wire';
import type { InitializeParams, InitializeResult, RpcResponse } from './wire';
import { admit } from './admission';
import type { Admission } from './admission';
import { AnswerChecks, CHECK_HINT } from './answers';

import { rpcErrorOf, Session } from './session';
import type { CallOptions, ExitInfo, SessionHost } from './session';
import { cut, maskArgs, StderrTail, Trace } from './trace';
import type { TraceEntry, TraceFilter } from './trace';
import type { DriverProcessState, DriverProcessStatus } from '../../../shared/driver-status';
import { Emitter } from '../../../shared/emitter';
import type { ExternalDriverOptions } from './options';

export type { ExternalDriverOptions } from './options';

export type ProcessState = DriverProcessState;

export type ExternalStatus = DriverProcessStatus;

const MAX_BACKOFF_MS = 30_000;
/** Up this long, a driver is trusted again: its next crash waits the shortest delay. */
const STABLE_MS = 60_000;
const STOP_GRACE_MS = 2000;
/** The longest crash backoff a call waits out; past it the call fails at once. */
const MAX_CALL_WAIT_MS = 1000;

type Listener = (what: 'state' | 'ops') => void;

/** One step of a restart, as the panel and `uplink drivers restart` show it. */
export type RestartProgress = (step: string) => void;

/** An out-of-process driver. */
export class ExternalDriver implements Driver {
  #id: string;
  readonly command: string[];
  #options: ExternalDriverOptions;
  #answers: AnswerChecks;
  #info: DriverInfo | undefined;
  #ops: OpSpec[] = [];
  #session: Session | undefined;
  #starting: Promise<Session> | undefined;
  #state: ProcessState = 'idle';
  #error: DriverError | undefined;
  #admission: Admission = 'unchecked';
  #integrity: ExternalStatus['integrity'] = {};
  #starts = 0;
  #crashes = 0;
  #nextStartAt = 0;
  #lastExit: ExitInfo | undefined;
  #stderr = new StderrTail();
  #trace = new Trace();
  #changes = new Emitter<'state' | 'ops'>();
  #disposed = false;
  #handshake: unknown;
  #strays: ((response: RpcResponse) => void) | undefined;
  /** The last request the driver answered (a ping or a call), and when. */
  #lastAnswer: { method: string; at: number } | undefined;
  /** When the ping in flight was sent (undefined: none in flight). */
  #pingSentAt: number | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #notRespondingSince: number | undefined;
  /** What every session of this driver needs of it. */
  #host: SessionHost;

  preview?: Driver['preview'];
  precheck?: Driver['precheck'];
  interactionsFor?: Driver['interactionsFor'];
  setTier?: Driver['setTier'];

  constructor(options: ExternalDriverOptions) {
    if (options.command.length === 0) throw new Error(`external driver ${options.id} has an empty command`);
    if (options.integrity && !options.admittedDir)
      throw new Error(`external driver ${options.id} is admitted by integrity but has no admittedDir to run it from`);
    this.#options = options;
    this.#id = options.id;
    this.command = [...options.command];
    this.#answers = new AnswerChecks(options.check);
    this.#host = {
      id: () => this.#id,
      trace: this.#trace,
      stderr: this.#stderr,
      callTimeoutMs: () => this.#options.callTimeoutMs ?? 15_000,
      stopGraceMs: () => this.#options.stopGraceMs ?? STOP_GRACE_MS,
      masked: (params) => this.#masked(params),
      strays: () => this.#strays,
      exited: (session, exit) => {
        if (!session.stopping || !this.#lastExit || this.#lastExit.at < session.startedAt) this.#lastExit = exit;
      },
      failed: (session, message) => this.#failed(session, message),
      answered: (method, at) => (this.#lastAnswer = { method, at }),
    };
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
    const entries = this.#answers.expect(S.ChannelsResultSchema, await this.#call('channels', {}), this.id, 'channels', 'a list of ChannelEntry');
    // A driver names only its own channels: one listing `tmux:%1` must not pose as another driver.
    const foreign = entries.find((e) => !e.channel.startsWith(`${this.id}:`));
    if (foreign)
      throw new DriverError('Upstream', `${this.id} listed a channel outside ${this.id}: (${cut(JSON.stringify(foreign.channel), 80)})`, {
        hint: 'every channel a driver lists must start with its configured id and a colon',
      });
    return entries;
  }

  async send(addr: string, request: SendRequest, ctx?: InvokeContext, signal?: AbortSignal): Promise<SendReceipt> {
    const params: Static<typeof S.SendParamsSchema> = { addr, request, ...(ctx ? { context: ctx } : {}) };
    return this.#answers.expect(
      S.SendReceiptSchema,
      await this.#call('send', params, { signal, deadlineMs: ctx?.deadline_ms }),
      this.id,
      'send',
      'a SendReceipt',
    );
  }

  /** The result is checked by the kernel, against the op's own `result_schema`. */
  invoke(addr: string, op: string, args: JsonValue, ctx?: InvokeContext, signal?: AbortSignal): Promise<JsonValue> {
    const params: Static<typeof S.InvokeParamsSchema> = { addr, op, args, context: ctx ?? {} };
    return this.#call('invoke', params, { signal, deadlineMs: ctx?.deadline_ms }) as Promise<JsonValue>;
  }

  async recv(cursor?: number): Promise<RecvBatch> {
    const params: Static<typeof S.RecvParamsSchema> = { cursor: cursor ?? null };
    return this.#answers.expect(S.RecvBatchSchema, await this.#call('recv', params), this.id, 'recv', 'a RecvBatch');
  }

  async doctor(): Promise<DoctorReport> {
    // A driver that leaves the ping unanswered would leave doctor unanswered too: say so at once.
    if (this.#state === 'not_responding') return { driver: this.id, ok: false, lines: [describe(this.#notResponding())] };
    try {
      await this.ensureStarted();
    } catch (e) {
      return { driver: this.id, ok: false, lines: [describe(e)] };
    }
    const report = this.#answers.expect(S.DoctorReportSchema, await this.#call('doctor', {}), this.id, 'doctor', 'a DoctorReport');
    const s = this.#session;
    const line = `external driver: pid ${s?.child.pid ?? '?'}, protocol ${s?.protocol ?? '?'}, ${this.#starts - 1} restart(s)`;
    return { driver: this.id, ok: report.ok, lines: [...report.lines, line] };
  }

  dispose(): Promise<void> {
    this.#disposed = true;
    this.#stopPinging();
    this.#setState('stopped');
    return this.#stop();
  }

  // ── for the hub and the tools ──────────────────────────────────────────────────────────────
  /** Starts the driver when it is not running (waiting out a crash backoff); rejects with why it cannot run. */
  async ensureStarted(signal?: AbortSignal): Promise<void> {
    await this.#ready(signal);
  }

  /**
   * Stops the process and starts it again now, forgetting crash backoff and a version refusal;
   * `progress` hears each step (stopping, how it stopped, starting).
   */
  async restart(progress: RestartProgress = () => undefined): Promise<void> {
    const session = this.#session && !this.#session.dead ? this.#session : undefined;
    if (session) {
      const pid = session.child.pid;
      this.#setState('stopping');
      progress(`stopping ${this.id}${pid !== undefined ? ` (pid ${pid})` : ''}…`);
      const started = Date.now();
      const how = await session.stop(this.#notRespondingSince !== undefined);
      progress(`stopped in ${((Date.now() - started) / 1000).toFixed(1)} s: ${how}`);
    }
    this.#crashes = 0;
    this.#nextStartAt = 0;
    this.#error = undefined;
    this.#setState('idle');
    progress(`starting ${this.id}…`);
    await this.ensureStarted();
  }

  /**
   * The hub cannot use what the driver declared (ops the kernel refuses): it is not used until
   * restarted, and says why.
   */
  refuse(message: string): void {
    this.#error = new DriverError('Unavailable', message, { hint: "fix the driver's ops (`uplink driver check -- <its command>`), then restart it" });
    this.#ops = [];
    this.#setState('incompatible');
    if (this.#session) void this.#session.stop();
  }

  /** The driver's answer to the last `initialize`, as it came (the conformance kit checks its shape). */
  handshake(): unknown {
    return this.#handshake;
  }

  /**
   * Any method of the protocol, with the deadline and cancellation of an op call (the conformance
   * kit). A JSON-RPC error rejects as a DriverError; `rpcErrorOf` gives what the driver answered.
   */
  call(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
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
      for (const line of lines) session.writeRaw(line);
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
      // The version this process agreed to in its handshake: none while nothing runs that did.
      ...(s && !s.dead && s.protocol ? { protocol_version: s.protocol } : {}),
      extensions: s ? [...s.extensions] : [],
      restarts: Math.max(0, this.#starts - 1),
      ...(s ? { started_at: s.startedAt } : {}),
      ...(this.#state === 'backoff' ? { next_start_at: this.#nextStartAt } : {}),
      ...(this.#lastExit ? { last_exit: { ...this.#lastExit } } : {}),
      // An entry the config does not admit is untrusted before any start: no hash needed to know.
      admission: this.#admission === 'unchecked' && this.#options.integrity && !this.#options.integrity() ? 'untrusted' : this.#admission,
      integrity: { ...this.#integrity },
      ...(this.#state === 'not_responding' ? { error: describe(this.#notResponding()) } : this.#error ? { error: describe(this.#error) } : {}),
      in_flight: s ? s.inFlight : 0,
      ...(this.#lastAnswer ? { last_answer: { ...this.#lastAnswer } } : {}),
      ...(this.#notRespondingSince !== undefined ? { not_responding_since: this.#notRespondingSince } : {}),
      stderr: this.#stderr.lines(),
    };
  }

  /** The protocol trace, oldest first, filtered; bounded to the last 1000 messages. */
  trace(filter: TraceFilter = {}): TraceEntry[] {
    return this.#trace.list(filter);
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
      throw new DriverError(
        'Unavailable',
        `${this.id} crashed ${this.#crashes} times in a row; it is started again in ${Math.ceil(wait / 1000)} s${this.#error ? ` (last: ${this.#error.message})` : ''}`,
        { hint: 'retry later, or restart it in the panel once it is fixed; its stderr is in the panel' },
      );
    }
    if (wait > 0) await sleep(wait, signal);
    const run = await this.#admit();
    this.#setState('starting');
    this.#starts += 1;
    const env = this.#options.env ?? process.env;
    // An admitted driver runs the hub's copy of its file; where it was installed, it finds in the environment.
    const session = run
      ? new Session(run.command, { cwd: this.#options.cwd, env: { ...env, UPLINK_DRIVER_FILE: run.file } }, this.#host)
      : new Session(this.command, { cwd: this.#options.cwd, env }, this.#host);
    this.#session = session;
    try {
      const params: InitializeParams = { protocol_version: PROTOCOL_VERSION, uplink_version: this.#options.uplinkVersion ?? '0.1.0' };
      const init = await session.call('initialize', params).catch((e: Error) => {
        const data = rpcErrorOf(e)?.data;
        if (this.#answers.problem(S.UnsupportedVersionSchema, data) === undefined)
          this.#incompatible((data as Static<typeof S.UnsupportedVersionSchema>).supported);
        throw e;
      });
      this.#handshake = init;
      const result = this.#checkInitialize(init);
      const extensions = (result.extensions ?? []).filter((e) => (EXTENSIONS as readonly string[]).includes(e));
      session.extensions = new Set(extensions);
      const ops = this.#answers.expect(S.OpsResultSchema, await session.call('ops', {}), this.id, 'ops', 'a list of OpSpec');
      session.protocol = result.protocol_version;
      this.#info = { ...result.info, id: this.id };
      this.#bindExtensions(session.extensions);
      const changed = JSON.stringify(ops) !== JSON.stringify(this.#ops);
      this.#ops = ops;
      this.#error = undefined;
      this.#notRespondingSince = undefined;
      this.#setState('running');
      this.#startPinging(session);
      if (changed) this.#emit('ops');
      return session;
    } catch (e) {
      const error = e instanceof DriverError ? e : new DriverError('Unavailable', `${this.id} failed its handshake: ${(e as Error).message}`);
      if (this.#state !== 'incompatible') this.#error = error;
      void session.stop();
      throw error;
    }
  }

  /**
   * Before every start: the file the operator admitted must still be that file, and the start runs
   * the bytes that were checked (the command to spawn, undefined when nothing is checked).
   */
  async #admit(): Promise<{ command: string[]; file: string } | undefined> {
    const get = this.#options.integrity;
    if (!get) return undefined;
    const wanted = get();
    const env = this.#options.env ?? process.env;
    const { admission, integrity, refusal, run } = await admit(this.id, wanted, {
      command: this.command,
      cwd: this.#options.cwd,
      path: env.PATH,
      dir: this.#options.admittedDir!,
    });
    this.#admission = admission;
    this.#integrity = integrity;
    let error = refusal;
    if (!error) {
      try {
        this.#options.onAdmitted?.(wanted!);
      } catch (e) {
        // Not recorded, not run.
        error = new DriverError('Unavailable', `${this.id} is not started: its admission could not be recorded (${(e as Error).message})`, {
          hint: "check the hub's audit in doctor, then restart the driver",
        });
      }
    }
    if (error) {
      this.#error = error;
      this.#setState('refused');
      throw error;
    }
    return run;
  }

  /** The handshake's answer, once it speaks this protocol version and names this driver. */
  #checkInitialize(init: unknown): InitializeResult {
    // The version first: a driver of another version may answer in another shape.
    const version = (init as { protocol_version?: unknown } | null)?.protocol_version;
    if (typeof version !== 'string') throw new DriverError('Upstream', `${this.id} answered initialize without a protocol_version`, { hint: CHECK_HINT });
    if (version !== PROTOCOL_VERSION) this.#incompatible([version]);
    const result = this.#answers.expect(S.InitializeResultSchema, init, this.id, 'initialize', 'its protocol_version, info and extensions');
    const id = result.info.id;
    if (this.#options.adoptId) {
      if (!/^[a-z][a-z0-9-]*$/.test(id))
        throw new DriverError('Upstream', `the driver calls itself "${cut(id, 64)}", which is not a driver id`, {
          hint: 'an id is a lowercase letter, then lowercase letters, digits and "-"',
        });
      this.#id = id;
    }
    if (id !== this.id) {
      this.#error = new DriverError('Unavailable', `${this.id} is not used: the driver calls itself "${cut(id, 64)}", but the config names it "${this.id}"`, {
        hint: "make the id in external_drivers equal the driver's info.id",
      });
      this.#setState('incompatible');
      throw this.#error;
    }
    return result;
  }

  #incompatible(theirs: string[]): never {
    const versions = theirs.map((v) => cut(String(v), 16)).join(', ');
    this.#error = new DriverError('Unavailable', `${this.id} is not used: it speaks driver protocol ${versions}, this Uplink speaks ${PROTOCOL_VERSION}`, {
      hint: `update the driver or Uplink so both speak protocol ${PROTOCOL_VERSION}, then restart the driver`,
    });
    this.#setState('incompatible');
    throw this.#error;
  }

  #bindExtensions(ext: Set<string>): void {
    const expect = this.#answers.expect.bind(this.#answers);
    this.preview = ext.has('preview')
      ? async (addr, op, args): Promise<ApprovalPreview | undefined> => {
          const params: Static<typeof S.PreviewParamsSchema> = { addr, op, args };
          return expect(S.PreviewResultSchema, await this.#call('preview', params), this.id, 'preview', 'an ApprovalPreview or null') ?? undefined;
        }
      : undefined;
    // A refusal arrives as the JSON-RPC error the op itself would fail with; `#call` throws it.
    this.precheck = ext.has('precheck')
      ? async (addr, op, args, ctx) => {
          const params: Static<typeof S.PrecheckParamsSchema> = { addr, op, args, ...(ctx ? { context: ctx } : {}) };
          await this.#call('precheck', params);
        }
      : undefined;
    this.interactionsFor = ext.has('interactions_for')
      ? async (addr): Promise<InteractionKind[]> => {
          const params: Static<typeof S.InteractionsForParamsSchema> = { addr };
          return expect(
            S.InteractionsForResultSchema,
            await this.#call('interactions_for', params),
            this.id,
            'interactions_for',
            'a list of interaction kinds',
          );
        }
      : undefined;
    this.setTier = ext.has('set_tier')
      ? async (addr, tier) => {
          const params: Static<typeof S.SetTierParamsSchema> = { addr, tier };
          await this.#call('set_tier', params);
        }
      : undefined;
  }

  /** A session is over: after a crash (not a stop), the next call starts it again after the backoff. */
  #failed(session: Session, message: string): void {
    if (session === this.#session) {
      this.#stopPinging();
      this.#notRespondingSince = undefined;
    }
    if (session.stopping || this.#disposed) return;
    const up = Date.now() - session.startedAt;
    this.#crashes = up >= STABLE_MS ? 1 : this.#crashes + 1;
    this.#nextStartAt = Date.now() + Math.min((this.#options.backoffMs ?? 500) * 2 ** (this.#crashes - 1), MAX_BACKOFF_MS);
    if (this.#state === 'running' || this.#state === 'starting' || this.#state === 'not_responding') {
      this.#error = new DriverError('Unavailable', message);
      this.#setState('backoff');
    }
  }

  async #call(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    // Each call would wait out its whole deadline on a driver that answers nothing: fail it now.
    if (this.#state === 'not_responding') throw this.#notResponding();
    const session = await this.#ready(options.signal);
    return session.call(method, params, options);
  }

  // ── responsiveness: the ping ───────────────────────────────────────────────────────────────
  /** Pings `session` while it runs (with the `ping` option), one ping in flight at a time. */
  #startPinging(session: Session): void {
    this.#stopPinging();
    const ping = this.#options.ping;
    if (!ping) return;
    this.#pingTimer = setInterval(() => this.#pingTick(session, ping.timeoutMs), ping.intervalMs);
    // A CLI command's hub must still exit when its work is done.
    this.#pingTimer.unref();
  }

  #stopPinging(): void {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = undefined;
    this.#pingSentAt = undefined;
  }

  #pingTick(session: Session, timeoutMs: number): void {
    if (session !== this.#session || session.dead || session.stopping) return;
    const sent = this.#pingSentAt;
    if (sent !== undefined) {
      if (this.#state === 'running' && Date.now() - sent >= timeoutMs) this.#becameUnresponsive(session, sent);
      return;
    }
    this.#pingSentAt = Date.now();
    // `info` is the protocol's cheapest request; it is no op call, so nothing reaches the audit.
    // Any answer counts, an error too (a driver may not offer info): only a closed session does not.
    const answered = (): void => {
      if (session !== this.#session || session.dead) return;
      this.#pingSentAt = undefined;
      if (this.#state === 'not_responding') {
        this.#notRespondingSince = undefined;
        this.#setState('running');
      }
    };
    session.call('info', {}, { ping: true }).then(answered, answered);
  }

  /** The ping sent at `since` is still unanswered: calls in flight fail now, and new ones at once. */
  #becameUnresponsive(session: Session, since: number): void {
    this.#notRespondingSince = since;
    this.#setState('not_responding');
    session.abandon(() => this.#notResponding());
  }

  #notResponding(): DriverError {
    const since = this.#notRespondingSince ?? Date.now();
    const last = this.#lastAnswer;
    const lastWords = last ? `its last answer was to ${last.method} at ${clock(last.at)}` : 'it has answered nothing yet';
    return new DriverError(
      'Unavailable',
      `${this.id} is not responding: its process runs but has left the hub's ping unanswered for ${Math.max(1, Math.round((Date.now() - since) / 1000))} s (${lastWords})`,
      {
        hint: `it may be stopped (SIGSTOP) or stuck; calls fail at once until it answers again — restart it in the panel's Drivers view or with \`uplink drivers restart ${this.id}\``,
      },
    );
  }

  /** What of a request the trace may keep: args of an op's `sensitive_args` (and flagged text) masked. */
  #masked(params: Record<string, unknown>): unknown {
    if (!('args' in params)) return params;
    const spec = this.#ops.find((o) => o.op === params.op);
    return { ...params, args: maskArgs(params.args, spec?.sensitive_args ?? []) };
  }

  async #stop(): Promise<void> {
    this.#stopPinging();
    await this.#session?.stop(this.#notRespondingSince !== undefined);
  }
}

/** An error as one line with its hint. */
function describe(e: unknown): string {
  if (e instanceof DriverError) return e.hint ? `${e.message} — hint: ${e.hint}` : e.message;
  return e instanceof Error ? e.message : String(e);
}

/** A time of day as the operator's clock shows it (the hub's local time, 24-hour). */
function clock(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
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
