/**
 * One run of an out-of-process driver: the child process, the line-delimited JSON-RPC it speaks
 * (calls bounded by a deadline and cancellable, answers matched by id), and how it is stopped.
 * The host starts a new session after a crash; what outlives a run (the trace, stderr, the crash
 * count, the state) is the host's.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { DriverError } from '../contract';
import { decodeLine, encodeLine, LineSplitter, rpcToError } from './wire';
import type { RpcErrorObject, RpcId, RpcMessage, RpcResponse } from './wire';
import { cut, STDERR_LINE_CHARS, SUMMARY_CHARS } from './trace';
import type { StderrTail, Trace } from './trace';

export interface CallOptions {
  signal?: AbortSignal;
  deadlineMs?: number;
  /**
   * The host's ping: kept out of the trace (a ping a second would push real traffic out of it),
   * with no deadline of its own (the host watches how long it waits), and never abandoned.
   */
  ping?: boolean;
}

/** How a driver's process ended. */
export interface ExitInfo {
  at: number;
  code: number | null;
  signal: string | null;
  reason: string;
}

/** What a session needs of its host. */
export interface SessionHost {
  /** The driver's id now: errors name it. */
  id(): string;
  readonly trace: Trace;
  readonly stderr: StderrTail;
  /** The bound of a call that brings no deadline of its own. */
  callTimeoutMs(): number;
  /** How long a stopping driver gets after its stdin closes, and after SIGTERM. */
  stopGraceMs(): number;
  /** What of a request's params the trace may keep. */
  masked(params: Record<string, unknown>): unknown;
  /** Takes answers to ids never asked while set (the conformance kit's malformed-request check). */
  strays(): ((response: RpcResponse) => void) | undefined;
  /** The process ended. */
  exited(session: Session, exit: ExitInfo): void;
  /** The session is over (crashed, broken or stopped); `message` says why, with the last stderr line. */
  failed(session: Session, message: string): void;
  /** The driver answered a request (a ping included). */
  answered(method: string, at: number): void;
}

interface Pending {
  method: string;
  started: number;
  ping: boolean;
  /** When it times out (`Date.now()` time); Infinity for the ping, which has no deadline. */
  due: number;
  /** Fails it at its deadline. */
  expire: () => void;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  done: () => void;
}

/** A cancel this close to a call's deadline is the deadline's (the kernel's own timer fired first). */
const DEADLINE_SLACK_MS = 50;
/** A message up to this long has its trace summary written only if the trace is read. */
const LAZY_SUMMARY_CHARS = 4096;

/** A driver's JSON-RPC error, kept beside the DriverError made of it (`initialize` reads `supported` in its data). */
const RPC_ERRORS = new WeakMap<Error, RpcErrorObject>();

/** The JSON-RPC error a driver answered, when `error` was made of one (the conformance kit reads its code and data). */
export function rpcErrorOf(error: unknown): RpcErrorObject | undefined {
  return error instanceof Error ? RPC_ERRORS.get(error) : undefined;
}

export class Session {
  readonly child: ChildProcessWithoutNullStreams;
  readonly startedAt = Date.now();
  /** The optional methods the driver's handshake offered. */
  extensions = new Set<string>();
  /** The protocol version this process agreed to in its handshake (unset until it did). */
  protocol: string | undefined;
  dead = false;
  stopping = false;
  /** Settles once the process has closed (or could not be started). */
  readonly closed: Promise<void>;
  readonly #host: SessionHost;
  readonly #pending = new Map<number, Pending>();
  /**
   * One timer for the deadlines of all calls in flight, due at the earliest: a timer set and
   * cleared per call costs a call about as much as the hub's own work for it.
   */
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  /** When the watchdog fires (Infinity: it is not set). */
  #watchAt = Infinity;
  #nextId = 1;

  constructor(command: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }, host: SessionHost) {
    this.#host = host;
    const [file, ...args] = command;
    const child = spawn(file!, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    this.child = child;
    let resolveClosed: () => void = () => undefined;
    this.closed = new Promise((r) => (resolveClosed = r));
    const lines = new LineSplitter();
    child.stdout.on('data', (chunk: Buffer) => {
      if (this.dead) return;
      let got: string[];
      try {
        got = lines.push(chunk);
      } catch (e) {
        this.fail(`wrote ${(e as Error).message}`);
        return;
      }
      for (const line of got) {
        if (this.dead) return;
        this.#onLine(line);
      }
    });
    // stdout closed while the process lives on: give its exit a moment to say more (code, signal).
    child.stdout.on('end', () => setTimeout(() => this.fail('closed its stdout'), 200).unref());
    let partial = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = cut(parts.pop() ?? '', STDERR_LINE_CHARS);
      for (const p of parts) host.stderr.add(p);
    });
    child.stdin.on('error', () => undefined); // EPIPE after a crash: the close below says what happened
    child.on('error', (e) => {
      this.fail(`could not be started (${(e as NodeJS.ErrnoException).code ?? e.message}: ${file})`);
      resolveClosed();
    });
    child.on('close', (code, signal) => {
      if (partial) host.stderr.add(partial);
      partial = '';
      const reason = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      host.exited(this, { at: Date.now(), code, signal, reason });
      this.fail(reason);
      resolveClosed();
    });
  }

  /** Calls in flight. */
  get inFlight(): number {
    return this.dead ? 0 : this.#pending.size;
  }

  /** Calls `method`, bounded by `deadlineMs` (else the host's call timeout) and cancelled by `signal`. */
  call(method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    const { signal } = options;
    const id = this.#host.id();
    if (this.dead) return Promise.reject(new DriverError('Unavailable', `${id} is not running`, { hint: 'retry: it is started again on the next call' }));
    if (signal?.aborted) return Promise.reject(new DriverError('Rejected', `${id}.${method} was cancelled`));
    const rpcId = this.#nextId++;
    const ms = options.deadlineMs ?? this.#host.callTimeoutMs();
    const ping = options.ping === true;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const cancel = (): void => {
        if (!this.#pending.delete(rpcId)) return;
        done();
        this.#left();
        if (!this.dead) this.#write({ jsonrpc: '2.0', method: 'cancel', params: { id: rpcId } });
      };
      const expire = (): void => {
        this.#unanswered(rpcId, method, ms);
        cancel();
        reject(
          new DriverError('Timeout', `${id} did not answer ${method} within ${Math.round(ms / 100) / 10} s`, {
            hint: 'the driver may be stuck; see its stderr in the panel or `uplink doctor`',
          }),
        );
      };
      const onAbort = (): void => {
        // The kernel cancels a call at its deadline, often a moment before the timer here fires.
        const waited = Date.now() - started;
        if (this.#pending.has(rpcId)) this.#unanswered(rpcId, method, waited >= ms - DEADLINE_SLACK_MS ? ms : waited, waited < ms - DEADLINE_SLACK_MS);
        cancel();
        reject(new DriverError('Rejected', `${id}.${method} was cancelled`));
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const due = ping ? Infinity : started + ms;
      this.#pending.set(rpcId, { method, started, ping, due, expire, resolve, reject, done });
      this.#watch(due);
      this.#write({ jsonrpc: '2.0', id: rpcId, method, params }, params, ping);
    });
  }

  /** Makes sure the watchdog fires by `due` (and keeps the process alive while a call waits). */
  #watch(due: number): void {
    if (due === Infinity) return;
    if (this.#watchdog && this.#watchAt <= due) {
      this.#watchdog.ref();
      return;
    }
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchAt = due;
    this.#watchdog = setTimeout(() => this.#look(), Math.max(0, due - Date.now()));
  }

  /** The watchdog's look: fails the calls past their deadline and sets itself for the next one. */
  #look(): void {
    this.#watchdog = undefined;
    this.#watchAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const p of [...this.#pending.values()]) {
      if (p.due <= now) p.expire();
      else if (p.due < next) next = p.due;
    }
    this.#watch(next);
  }

  /** A call left: with none in flight that has a deadline, the watchdog no longer holds the process open. */
  #left(): void {
    if (!this.#watchdog) return;
    for (const p of this.#pending.values()) if (p.due !== Infinity) return;
    this.#watchdog.unref();
  }

  /**
   * Fails every call in flight but the ping with `error` at once, each marked unanswered in the
   * trace, and cancels it in the driver (a stopped process reads the cancel once it runs again).
   */
  abandon(error: () => Error): void {
    for (const [rpcId, p] of [...this.#pending]) {
      if (p.ping) continue;
      this.#pending.delete(rpcId);
      p.done();
      this.#unanswered(rpcId, p.method, Date.now() - p.started);
      if (!this.dead) this.#write({ jsonrpc: '2.0', method: 'cancel', params: { id: rpcId } });
      p.reject(error());
    }
    this.#left();
  }

  /** Marks request `rpcId` in the trace as given up on (at its deadline, or `cancelled` before it). */
  #unanswered(rpcId: number, method: string, ms: number, cancelled = false): void {
    const summary = cancelled ? `cancelled after ${Math.round(ms)} ms with no answer` : `no answer after ${Math.round(ms)} ms`;
    this.#host.trace.record({ dir: 'in', type: 'unanswered', method, id: rpcId, bytes: 0, ms: Math.round(ms), summary });
  }

  /** Writes a line the protocol never sends (the conformance kit), traced as invalid. */
  writeRaw(line: string): void {
    this.#host.trace.record({ dir: 'out', type: 'invalid', bytes: Buffer.byteLength(line) + 1, summary: cut(line, SUMMARY_CHARS) });
    this.child.stdin.write(`${line}\n`);
  }

  /** The process is gone or broken: its calls in flight fail, and it is ended if it still runs. */
  fail(what: string): void {
    if (this.dead) return;
    this.dead = true;
    const last = this.#host.stderr.last();
    const message = `${this.#host.id()} ${what}${last ? `; its last stderr line: ${cut(last, 200)}` : ''}`;
    for (const p of this.#pending.values()) {
      p.done();
      p.reject(new DriverError('Unavailable', message, { hint: 'it is started again on the next call; its stderr is in the panel and `uplink doctor`' }));
    }
    this.#pending.clear();
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    this.#watchAt = Infinity;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin.end();
      void this.#kill();
    }
    this.#host.failed(this, message);
  }

  /**
   * `shutdown` when offered, stdin closed, then SIGTERM and SIGKILL for a process that lingers.
   * An `unresponsive` process (it left the ping unanswered) reads nothing and, when stopped by a
   * signal, holds SIGTERM until it runs again: it gets SIGKILL at once. Resolves with how it ended.
   */
  async stop(unresponsive = false): Promise<string> {
    if (this.stopping) {
      await this.closed;
      return 'it was already stopping';
    }
    this.stopping = true;
    let how: string;
    if (unresponsive && !this.dead) {
      this.child.stdin.end();
      this.child.kill('SIGKILL');
      await this.#exited(this.#host.stopGraceMs());
      how = 'killed (SIGKILL: it was not responding)';
    } else {
      if (!this.dead && this.extensions.has('shutdown')) await this.call('shutdown', {}, { deadlineMs: this.#host.stopGraceMs() }).catch(() => undefined);
      this.child.stdin.end();
      how = await this.#kill();
    }
    this.fail('was stopped');
    return how;
  }

  // The grace timer must not outlive the process it waits for: a CLI command would idle until it fired.
  // Unref'd is enough: a child still running holds the event loop until the timer escalates.
  #exited(ms: number): Promise<boolean> {
    return Promise.race([this.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
  }

  async #kill(): Promise<string> {
    const grace = this.#host.stopGraceMs();
    if (await this.#exited(grace)) return 'it exited';
    this.child.kill('SIGTERM');
    if (await this.#exited(grace)) return 'it exited on SIGTERM';
    this.child.kill('SIGKILL');
    await this.#exited(grace);
    return 'killed (SIGKILL)';
  }

  #onLine(line: string): void {
    const trace = this.#host.trace;
    const message = decodeLine(line);
    if (typeof message === 'string') {
      trace.record({ dir: 'in', type: 'invalid', bytes: Buffer.byteLength(line), summary: cut(line, SUMMARY_CHARS) });
      this.fail(`wrote ${message}`);
      return;
    }
    if ('method' in message) {
      trace.record({
        dir: 'in',
        type: 'id' in message ? 'request' : 'notification',
        method: message.method,
        ...('id' in message ? { id: message.id } : {}),
        bytes: Buffer.byteLength(line),
        summary: cut(line, SUMMARY_CHARS),
      });
      // The protocol has no requests from a driver: answer as JSON-RPC says, and carry on.
      if ('id' in message)
        this.#write({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `the hub serves no method ${cut(message.method, 64)}` } });
      return;
    }
    const response = message as RpcResponse;
    const id = response.id;
    const pending = typeof id === 'number' ? this.#pending.get(id) : undefined;
    if (pending) this.#host.answered(pending.method, Date.now());
    if (!pending?.ping)
      trace.record({
        dir: 'in',
        type: response.error ? 'error' : 'response',
        ...(pending ? { method: pending.method } : {}),
        ...(id !== null ? { id } : {}),
        bytes: Buffer.byteLength(line),
        ...(pending ? { ms: Date.now() - pending.started } : {}),
        summary: cut(line, SUMMARY_CHARS),
      });
    if (!pending) {
      // A cancelled or timed-out call may still be answered (the answer is dropped); an id never asked is a broken peer.
      const asked = typeof id === 'number' && Number.isInteger(id) && id >= 1 && id < this.#nextId;
      const strays = this.#host.strays();
      if (!asked && strays) strays(response);
      else if (!asked) this.fail(`answered id ${cut(JSON.stringify(id), 40)}, which it was never asked`);
      return;
    }
    this.#pending.delete(id as number);
    pending.done();
    this.#left();
    if (response.error) {
      const error = rpcToError(response.error, pending.method);
      RPC_ERRORS.set(error, response.error);
      pending.reject(error);
    } else pending.resolve(response.result);
  }

  #write(message: RpcMessage, params?: Record<string, unknown>, untraced = false): void {
    const line = encodeLine(message);
    const m = message as { id?: RpcId; method?: string; error?: unknown };
    const type = m.method === undefined ? 'error' : m.id === undefined ? 'notification' : 'request';
    if (!untraced) {
      // Masked now, with the secrets known now; written out (JSON, cut) when the trace is read.
      const shown = params ? this.#host.masked(params) : message;
      const summarize = (): string => cut(JSON.stringify(shown), SUMMARY_CHARS);
      this.#host.trace.record({
        dir: 'out',
        type,
        ...(m.method ? { method: m.method } : {}),
        ...(m.id !== undefined ? { id: m.id } : {}),
        bytes: Buffer.byteLength(line),
        // A big message's summary is written now, so the trace never keeps its payload.
        summary: line.length <= LAZY_SUMMARY_CHARS ? summarize : summarize(),
      });
    }
    this.child.stdin.write(line);
  }
}
