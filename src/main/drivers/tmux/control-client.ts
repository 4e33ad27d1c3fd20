/**
 * One long-lived tmux control-mode client (`tmux -C attach -f ignore-size -t <session>`): runs
 * commands (replies matched FIFO) and reports `%output` of the panes in its session. It observes
 * only: it never resizes windows (`ignore-size`) and never types on its own. Reconnection is the
 * transport's job; a dead client just says so.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { DriverError } from '../contract';
import { Emitter } from '../../../shared/emitter';
import { commandLine, ControlFramer, sequenceLine } from './control-protocol';

/** Pane output as control mode reports it. */
export type OutputListener = (pane: string, data: Buffer) => void;

interface Waiter {
  /** Reply blocks the line prints when nothing fails. */
  blocks: number;
  replies: string[][];
  resolve(replies: string[][]): void;
  reject(error: Error): void;
  /** The command, for a timeout's message. */
  what: string;
  settled: boolean;
  /** When its line was handed to the pipe (`Date.now()`): its reply is due within the timeout. */
  sentAt: number;
}

/** How to start a control client. */
export interface ControlClientOptions {
  tmux: string;
  /** tmux's own flags before `-C` (socket, UTF-8). */
  globalArgs: string[];
  session: string;
  env: NodeJS.ProcessEnv;
  /** Per-command reply timeout. */
  commandTimeoutMs?: number;
  /** tmux error text → DriverError (shared with the one-shot path). */
  failure: (text: string) => DriverError;
}

/** A connected control-mode client. */
export class ControlClient {
  readonly session: string;
  #child: ChildProcessWithoutNullStreams;
  #framer = new ControlFramer();
  #waiters: Waiter[] = [];
  #output = new Emitter<{ pane: string; data: Buffer }>();
  #exit = new Emitter<void>();
  #alive = true;
  /** The start of a line whose end has not arrived yet. */
  #partial = '';
  /** Command lines waiting for this tick's write. */
  #queued = '';
  /**
   * One timer for all commands in flight, due when the oldest is (replies come in order): a timer
   * set and cleared per command costs more than the command's own work in tmux.
   */
  #watchdog: ReturnType<typeof setTimeout> | undefined;
  #options: ControlClientOptions;

  private constructor(child: ChildProcessWithoutNullStreams, options: ControlClientOptions) {
    this.#child = child;
    this.#options = options;
    this.session = options.session;
  }

  /** Attaches and waits for the greeting; rejects `Unavailable` when control mode cannot start. */
  static attach(options: ControlClientOptions): Promise<ControlClient> {
    const args = [...options.globalArgs, '-C', 'attach-session', '-f', 'ignore-size', '-t', options.session];
    const child = spawn(options.tmux, args, { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const client = new ControlClient(child, options);
    return client.#start();
  }

  #start(): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      let stderr = '';
      let greeted = false;
      const fail = (why: string): void => {
        if (greeted) return;
        greeted = true;
        clearTimeout(timer);
        void this.close();
        reject(new DriverError('Unavailable', `tmux control mode did not start: ${why}`));
      };
      const timer = setTimeout(() => fail('no greeting within 5 s'), 5000);
      // The greeting is the attach command's own block (flags 0): the first `%end` means ready.
      const onGreeting = (chunk: Buffer): void => {
        if (!greeted && chunk.includes('%end ')) {
          greeted = true;
          clearTimeout(timer);
          resolve(this);
        }
      };
      this.#child.stdout.on('data', (chunk: Buffer) => {
        onGreeting(chunk);
        this.#onData(chunk);
      });
      this.#child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      this.#child.stdin.on('error', () => this.#onExit());
      this.#child.on('error', (error) => {
        this.#onExit();
        fail(error.message);
      });
      this.#child.on('close', () => {
        this.#onExit();
        fail(stderr.trim() || 'tmux exited');
      });
    });
  }

  get alive(): boolean {
    return this.#alive;
  }

  /**
   * Runs one command (an argv vector, quoted for tmux's parser); resolves with its output lines.
   * `replied` is called as its reply is read, before any line that followed it: what tmux printed
   * after (a pane's `%output`) came after the command ran.
   */
  run(args: readonly string[], replied?: () => void): Promise<string[]> {
    if (!this.#alive) return Promise.reject(new DriverError('Unavailable', 'tmux control connection is closed'));
    return new Promise((resolve, reject) =>
      this.#enqueue(
        commandLine(args),
        1,
        args[0] ?? '',
        (replies) => {
          replied?.();
          resolve(replies[0]!);
        },
        reject,
      ),
    );
  }

  /**
   * Runs `commands` as one tmux command sequence (see `sequenceLine`); resolves with the output of
   * each reply block, rejects with the first that failed (tmux skips the rest); `replied` as for
   * `run`, once the last block is read. `blocks` is how
   * many blocks the sequence prints when nothing fails: one per command, plus one for the command
   * an `if-shell -F` runs, which tmux (3.2 on, as control mode here needs: `attach -f`) answers in a
   * block of its own right after the if-shell's.
   */
  runSequence(commands: ReadonlyArray<readonly string[]>, blocks = commands.length, replied?: () => void): Promise<string[][]> {
    if (!this.#alive) return Promise.reject(new DriverError('Unavailable', 'tmux control connection is closed'));
    return new Promise((resolve, reject) =>
      this.#enqueue(
        sequenceLine(commands),
        blocks,
        commands.map((c) => c[0] ?? '').join(' ; '),
        (replies) => {
          replied?.();
          resolve(replies);
        },
        reject,
      ),
    );
  }

  #enqueue(line: string, blocks: number, what: string, resolve: (replies: string[][]) => void, reject: (error: Error) => void): void {
    this.#waiters.push({ blocks, replies: [], resolve, reject, what, settled: false, sentAt: Date.now() });
    this.#write(line);
    if (this.#watchdog) this.#watchdog.ref();
    else this.#watch(this.#timeoutMs());
  }

  #timeoutMs(): number {
    return this.#options.commandTimeoutMs ?? 10000;
  }

  /** Sets the watchdog to look again in `ms`. */
  #watch(ms: number): void {
    this.#watchdog = setTimeout(() => this.#look(), ms);
  }

  /**
   * The watchdog's look at the oldest command in flight: overdue, it fails and the client is
   * considered wedged and closed (the transport reconnects or falls back); otherwise the watchdog
   * waits for when it will be due. With none in flight it stops.
   */
  #look(): void {
    this.#watchdog = undefined;
    const oldest = this.#waiters[0];
    if (!oldest || !this.#alive) return;
    const timeoutMs = this.#timeoutMs();
    const late = Date.now() - oldest.sentAt;
    if (late < timeoutMs) return this.#watch(timeoutMs - late);
    oldest.settled = true;
    oldest.reject(
      new DriverError('Timeout', `tmux did not answer "${oldest.what}" within ${timeoutMs} ms`, { hint: 'the tmux server may be overloaded; try again' }),
    );
    void this.close();
  }

  /**
   * Commands issued in the same tick (a lookup and a capture sent together) go out in one write:
   * a write to the pipe is a system call, which costs more than the command's own work.
   */
  #write(line: string): void {
    if (this.#queued !== '') {
      this.#queued += line;
      return;
    }
    this.#queued = line;
    queueMicrotask(() => {
      const lines = this.#queued;
      this.#queued = '';
      if (this.#alive) this.#child.stdin.write(lines);
    });
  }

  /** Subscribes to `%output` of every pane in this client's session. */
  onOutput(listener: OutputListener): () => void {
    return this.#output.on(({ pane, data }) => listener(pane, data));
  }

  /** Called once when the connection ends (server gone, session killed, closed). */
  onExit(listener: () => void): () => void {
    if (!this.#alive) {
      queueMicrotask(listener);
      return () => undefined;
    }
    return this.#exit.on(listener);
  }

  /**
   * Detaches (closing stdin makes tmux send `%exit`) and resolves once the process is gone,
   * killing it if it lingers. Callers that stop the server next must await this: a tmux 3.3
   * server killed while a control client is still detaching can hang with that client forever.
   */
  close(): Promise<void> {
    const child = this.#child;
    const exited = child.exitCode !== null || child.signalCode !== null;
    const gone = exited
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), 1000);
          child.once('close', () => {
            clearTimeout(kill);
            resolve();
          });
          child.stdin.end();
        });
    this.#onExit();
    return gone;
  }

  /**
   * Lines out of a chunk: the chunk as latin1 (one char per byte, so a line cut between chunks
   * joins back byte for byte) split at once, which costs less than a conversion per line.
   */
  #onData(chunk: Buffer): void {
    const lines = (this.#partial + chunk.toString('latin1')).split('\n');
    this.#partial = lines.pop()!;
    for (const line of lines) this.#onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  #onLine(line: string): void {
    for (const event of this.#framer.feed(line)) {
      switch (event.type) {
        case 'reply': {
          const waiter = this.#waiters[0];
          if (!waiter) break;
          // A sequence's waiter takes its blocks until the last, or until one failed (tmux runs
          // nothing after it, so prints no more blocks for it).
          if (event.ok && waiter.replies.push(event.lines) < waiter.blocks) break;
          this.#waiters.shift();
          // Nothing in flight: the watchdog no longer keeps the process alive (it stops at its next look).
          if (this.#waiters.length === 0) this.#watchdog?.unref();
          if (waiter.settled) break;
          waiter.settled = true;
          if (event.ok) waiter.resolve(waiter.replies);
          else waiter.reject(this.#options.failure(event.lines.join('\n')));
          break;
        }
        case 'output':
          this.#output.emit({ pane: event.pane, data: event.data });
          break;
        case 'pause':
          // Only happens with pause-after; resume so a paused pane never looks idle.
          if (this.#alive) this.#write(commandLine(['refresh-client', '-A', `${event.pane}:continue`]));
          break;
        case 'exit':
          this.#onExit();
          break;
        default: {
          const never: never = event;
          throw new Error(`unhandled control event ${String(never)}`);
        }
      }
    }
  }

  #onExit(): void {
    if (!this.#alive) return;
    this.#alive = false;
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
    for (const waiter of this.#waiters.splice(0)) {
      if (waiter.settled) continue;
      waiter.settled = true;
      waiter.reject(
        new DriverError('Unavailable', 'tmux control connection closed (server restarted or session ended)', {
          hint: 'try again: the driver reconnects on demand',
        }),
      );
    }
    this.#exit.emit();
    this.#exit.clear();
    this.#output.clear();
  }
}
