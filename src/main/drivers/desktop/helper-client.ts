/**
 * The hub's end of the desktop helper: spawns the helper lazily, writes one JSON line per request,
 * matches replies by id and bounds every call with a deadline. The helper serves one call at a
 * time, so calls queue here and go out one by one: a call's deadline starts when the helper starts
 * it, and a slow call cannot time out the ones behind it. A helper that exits or hangs fails the
 * call it was running (`Unavailable`, or `Timeout` when it overran) and is replaced for the calls
 * still queued, so native trouble never takes the hub down.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { HelperReply, HelperRequest } from './protocol';

/** How to start the helper and how long one call may take. */
export interface HelperClientOptions {
  /** argv of the helper, e.g. `['/usr/bin/python3', '.../uplink_desktop_helper.py']`. */
  command: string[];
  env: NodeJS.ProcessEnv;
  callTimeoutMs: number;
  /** What to install when the command cannot run (default: the Python helper's packages). */
  installHint?: string;
}

interface Call {
  id: number;
  op: string;
  line: string;
  timeoutMs: number;
  resolve: (value: JsonValue) => void;
  reject: (error: DriverError) => void;
  /** The caller has its answer (it may have cancelled while the helper still runs the call). */
  settled: boolean;
  detach: () => void;
}

interface Running {
  call: Call;
  child: ChildProcessWithoutNullStreams;
  timer: ReturnType<typeof setTimeout>;
}

const STDERR_LINES = 20;
const RESTART_HINT = 'retry; the helper restarts on the next call';

/** One helper process at a time, restarted on demand. */
export class HelperClient {
  #options: HelperClientOptions;
  #child: ChildProcessWithoutNullStreams | undefined;
  #queue: Call[] = [];
  #running: Running | undefined;
  #nextId = 1;
  #stdout = '';
  #stderr: string[] = [];
  #disposed = false;

  constructor(options: HelperClientOptions) {
    this.#options = options;
  }

  /** The running helper's pid, if one is running (tests kill it to prove recovery). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Sends one request; resolves with its result or rejects with a DriverError. */
  call(request: Omit<HelperRequest, 'id'>, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<JsonValue> {
    if (this.#disposed) return Promise.reject(new DriverError('Unavailable', 'desktop driver is shut down'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new DriverError('Unavailable', 'cancelled before the helper was asked'));
    const id = this.#nextId++;
    return new Promise<JsonValue>((resolve, reject) => {
      const onAbort = (): void => this.#cancel(call);
      const call: Call = {
        id,
        op: request.op,
        line: `${JSON.stringify({ id, ...request })}\n`,
        timeoutMs: options.timeoutMs ?? this.#options.callTimeoutMs,
        resolve,
        reject,
        settled: false,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(call);
      this.#next();
    });
  }

  /** Stops the helper and fails whatever is running or queued. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    for (const call of this.#queue.splice(0)) this.#settle(call, new DriverError('Unavailable', `desktop driver shut down before running ${call.op}`));
    const child = this.#running?.child ?? this.#child;
    if (child) this.#fail(child, (op) => new DriverError('Unavailable', `desktop driver shut down while running ${op}`));
  }

  /** Hands the next queued call to the helper when it is idle; its deadline starts now. */
  #next(): void {
    while (!this.#running && !this.#disposed) {
      const call = this.#queue.shift();
      if (!call) return;
      let child: ChildProcessWithoutNullStreams;
      try {
        child = this.#ensure();
      } catch (error) {
        this.#settle(call, error as DriverError);
        continue;
      }
      const timer = setTimeout(() => {
        // A hung helper may be stuck in a D-Bus or X call: only a fresh process is trustworthy.
        this.#fail(
          child,
          (op) =>
            new DriverError('Timeout', `desktop helper did not answer ${op} within ${call.timeoutMs} ms`, {
              hint: `the target application may be hung; ${RESTART_HINT} (a mutating op may or may not have taken effect)`,
            }),
        );
      }, call.timeoutMs);
      this.#running = { call, child, timer };
      child.stdin.write(call.line);
    }
  }

  #cancel(call: Call): void {
    const queued = this.#queue.indexOf(call);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      this.#settle(call, new DriverError('Unavailable', `${call.op} was cancelled before the helper started it`));
      return;
    }
    // The helper keeps running it: the slot stays taken until it answers or overruns.
    this.#settle(call, new DriverError('Unavailable', `${call.op} was cancelled`, { hint: 'a mutating op may or may not have taken effect' }));
  }

  #settle(call: Call, outcome: DriverError | { result: JsonValue }): void {
    if (call.settled) return;
    call.settled = true;
    call.detach();
    if (outcome instanceof DriverError) call.reject(outcome);
    else call.resolve(outcome.result);
  }

  #ensure(): ChildProcessWithoutNullStreams {
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) return this.#child;
    const [file, ...args] = this.#options.command;
    if (!file) throw new DriverError('Invalid', 'empty desktop helper command');
    const child = spawn(file, args, { env: this.#options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child = child;
    this.#stdout = '';
    this.#stderr = [];
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.#onStdout(child, chunk));
    child.stderr.on('data', (chunk: string) => {
      if (child !== this.#child) return;
      this.#stderr.push(...chunk.split('\n').filter((l) => l.trim() !== ''));
      this.#stderr.splice(0, Math.max(0, this.#stderr.length - STDERR_LINES));
    });
    // A write to a helper that just died must not become an unhandled 'error' in the hub.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      this.#fail(
        child,
        () =>
          new DriverError('Unavailable', `cannot run the desktop helper (${file}): ${error.message}`, {
            hint: this.#options.installHint ?? 'install python3 with python3-gi, python3-xlib and gir1.2-atspi-2.0 (`uplink doctor` shows what is missing)',
          }),
      );
    });
    child.on('exit', (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const evidence = this.#stderr.slice(-5).join('\n') || undefined;
      this.#fail(child, (op) => new DriverError('Unavailable', `desktop helper stopped (${how}) while running ${op}`, { hint: RESTART_HINT, evidence }));
    });
    return child;
  }

  #onStdout(child: ChildProcessWithoutNullStreams, chunk: string): void {
    if (child !== this.#child) return;
    this.#stdout += chunk;
    let nl: number;
    while ((nl = this.#stdout.indexOf('\n')) >= 0) {
      const line = this.#stdout.slice(0, nl);
      this.#stdout = this.#stdout.slice(nl + 1);
      if (line.trim() === '') continue;
      let reply: HelperReply;
      try {
        reply = JSON.parse(line) as HelperReply;
      } catch {
        this.#fail(
          child,
          (op) =>
            new DriverError('Upstream', `desktop helper wrote a line that is not JSON while running ${op}`, {
              hint: RESTART_HINT,
              evidence: line.slice(0, 200),
            }),
        );
        return;
      }
      const running = this.#running;
      if (!running || running.child !== child || reply.id !== running.call.id) continue;
      clearTimeout(running.timer);
      this.#running = undefined;
      this.#settle(running.call, reply.ok ? { result: reply.result } : DriverError.fromWire(reply.error));
      this.#next();
    }
  }

  /**
   * Fails the call `child` is running (if any), makes sure that process is gone and lets the
   * queued calls go to a fresh helper.
   */
  #fail(child: ChildProcessWithoutNullStreams, errorFor: (op: string) => DriverError): void {
    const running = this.#running;
    if (running?.child === child) {
      clearTimeout(running.timer);
      this.#running = undefined;
      this.#settle(running.call, errorFor(running.call.op));
    }
    if (this.#child === child) this.#child = undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.#next();
  }
}
