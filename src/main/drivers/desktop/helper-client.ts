/**
 * The hub's end of the desktop helper: spawns the helper lazily, writes one JSON line per request,
 * correlates replies by id and bounds every call with a deadline. A helper that exits or hangs
 * fails the calls in flight (`Unavailable`, or `Timeout` for the one that overran) and is
 * replaced on the next call, so native trouble never takes the hub down.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { JsonValue } from '../../kernel/types';
import { DriverError } from '../contract';
import type { HelperReply, HelperRequest } from './protocol';

/** How to start the helper and how long one call may take. */
export interface HelperClientOptions {
  /** argv of the helper, e.g. `['/usr/bin/python3', '.../uplink_desktop_helper.py']`. */
  command: string[];
  env: NodeJS.ProcessEnv;
  callTimeoutMs: number;
}

interface Pending {
  op: string;
  resolve: (value: JsonValue) => void;
  reject: (error: DriverError) => void;
  timer: ReturnType<typeof setTimeout>;
  child: ChildProcessWithoutNullStreams;
}

const STDERR_LINES = 20;
const RESTART_HINT = 'retry; the helper restarts on the next call';

/** One helper process at a time, restarted on demand. */
export class HelperClient {
  #options: HelperClientOptions;
  #child: ChildProcessWithoutNullStreams | undefined;
  #pending = new Map<number, Pending>();
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
    if (options.signal?.aborted) return Promise.reject(new DriverError('Unavailable', 'cancelled before the helper was asked'));
    let child: ChildProcessWithoutNullStreams;
    try {
      child = this.#ensure();
    } catch (error) {
      return Promise.reject(error);
    }
    const id = this.#nextId++;
    const timeoutMs = options.timeoutMs ?? this.#options.callTimeoutMs;
    return new Promise<JsonValue>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A hung helper may be stuck in a D-Bus or X call: only a fresh process is trustworthy.
        this.#fail(child, (p, pid) =>
          pid === id
            ? new DriverError('Timeout', `desktop helper did not answer ${p.op} within ${timeoutMs} ms`, {
                hint: `the target application may be hung; ${RESTART_HINT} (a mutating op may or may not have taken effect)`,
              })
            : new DriverError('Unavailable', `desktop helper was restarted while running ${p.op}`, { hint: RESTART_HINT }),
        );
      }, timeoutMs);
      this.#pending.set(id, { op: request.op, resolve, reject, timer, child });
      options.signal?.addEventListener(
        'abort',
        () => {
          const pending = this.#pending.get(id);
          if (!pending) return;
          this.#pending.delete(id);
          clearTimeout(pending.timer);
          reject(new DriverError('Unavailable', `${request.op} was cancelled`, { hint: 'a mutating op may or may not have taken effect' }));
        },
        { once: true },
      );
      child.stdin.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  /** Stops the helper and fails whatever is still in flight. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    const child = this.#child;
    if (!child) return;
    this.#fail(child, (p) => new DriverError('Unavailable', `desktop driver shut down while running ${p.op}`));
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
      this.#stderr.push(...chunk.split('\n').filter((l) => l.trim() !== ''));
      this.#stderr.splice(0, Math.max(0, this.#stderr.length - STDERR_LINES));
    });
    // A write to a helper that just died must not become an unhandled 'error' in the hub.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      this.#fail(child, () =>
        new DriverError('Unavailable', `cannot run the desktop helper (${file}): ${error.message}`, {
          hint: 'install python3 with python3-gi, python3-xlib and gir1.2-atspi-2.0 (`uplink doctor` shows what is missing)',
        }),
      );
    });
    child.on('exit', (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const evidence = this.#stderr.slice(-5).join('\n') || undefined;
      this.#fail(child, (p) => new DriverError('Unavailable', `desktop helper stopped (${how}) while running ${p.op}`, { hint: RESTART_HINT, evidence }));
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
        this.#fail(child, (p) => new DriverError('Upstream', `desktop helper wrote a line that is not JSON while running ${p.op}`, { hint: RESTART_HINT, evidence: line.slice(0, 200) }));
        return;
      }
      const pending = reply.id === null ? undefined : this.#pending.get(reply.id);
      if (!pending) continue; // a reply to a call that already timed out or was cancelled
      this.#pending.delete(reply.id as number);
      clearTimeout(pending.timer);
      if (reply.ok) pending.resolve(reply.result);
      else pending.reject(DriverError.fromWire(reply.error));
    }
  }

  /** Fails every call in flight on `child` and makes sure that process is gone. */
  #fail(child: ChildProcessWithoutNullStreams, errorFor: (p: Pending, id: number) => DriverError): void {
    for (const [id, p] of [...this.#pending]) {
      if (p.child !== child) continue;
      this.#pending.delete(id);
      clearTimeout(p.timer);
      p.reject(errorFor(p, id));
    }
    if (this.#child === child) this.#child = undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
