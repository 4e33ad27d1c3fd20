/**
 * How the driver talks to a tmux server: control-mode clients (one per session whose panes we
 * watch, the first also runs commands) with a one-shot `tmux …` fallback when control mode is
 * not available. Argv vectors only. A dead connection (server restart, session gone) is dropped
 * and re-attached on the next call; attach failures back off so a down server costs little.
 */
import { execFile } from 'node:child_process';
import { DriverError } from '../contract';
import { ControlClient, type OutputListener } from './control-client';

/** Where the server is and how to run tmux. */
export interface TransportOptions {
  /** The socket path, evaluated on every call (config edits apply); undefined = tmux's default. */
  socket: () => string | undefined;
  /** Environment for spawned tmux processes (TMUX/TMUX_PANE are always removed). */
  env: NodeJS.ProcessEnv;
  tmux?: string;
  /** How long a watch-only client with no watchers stays attached (default 30 s). */
  idleDetachMs?: number;
  /** false: never use control mode (one-shot commands and polling only). */
  controlMode?: boolean;
}

/** Which path commands take right now. */
export type TransportMode = 'control' | 'one-shot';

const RETRY_ATTACH_MS = 2000;
/** Commands safe to run twice. */
const LOOK_ONLY = new Set(['display-message', 'list-panes', 'list-sessions', 'capture-pane', 'show-options']);
const MAX_WATCH_CLIENTS = 16;
/** A watch-only client with no watchers detaches after this long (sessions do not stay "attached"). */
const IDLE_DETACH_MS = 30_000;

/** Maps tmux's error text to an actionable DriverError. */
export function tmuxFailure(text: string, socket: string | undefined): DriverError {
  const where = socket ?? "tmux's default socket";
  const message = text.trim() || 'tmux failed without a message';
  if (/no server running|error connecting to|server exited unexpectedly|lost server|No such file or directory/i.test(message)) {
    return new DriverError('Unavailable', `tmux server not reachable at ${where}`, {
      hint: 'start tmux (e.g. `tmux new -s work`), run Uplink inside tmux, or set tmux.socket in config.json',
      evidence: message,
    });
  }
  if (/can't find (pane|window|session)/i.test(message)) {
    return new DriverError('NotFound', message, { hint: 'list channels to see the panes that exist' });
  }
  return new DriverError('Upstream', `tmux: ${message}`);
}

/** Control mode first, one-shot commands otherwise. */
export class TmuxTransport {
  #options: TransportOptions;
  #env: NodeJS.ProcessEnv;
  #socket: string | undefined;
  #clients = new Map<string, ControlClient>();
  #attaching = new Map<string, Promise<ControlClient | undefined>>();
  #commandClient: ControlClient | undefined;
  #watchers = new Map<ControlClient, number>();
  #idleTimers = new Map<ControlClient, ReturnType<typeof setTimeout>>();
  #nextAttachAt = 0;
  #lastAttachError: string | undefined;
  #disposed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
    const env = { ...options.env };
    delete env.TMUX;
    delete env.TMUX_PANE;
    this.#env = env;
    this.#socket = options.socket();
  }

  get tmux(): string {
    return this.#options.tmux ?? 'tmux';
  }

  /** The socket in use (undefined = tmux's default). */
  get socket(): string | undefined {
    return this.#socket;
  }

  get mode(): TransportMode {
    return this.#commandClient?.alive ? 'control' : 'one-shot';
  }

  /** Why control mode is not in use. */
  get controlError(): string | undefined {
    return this.#options.controlMode === false ? 'disabled' : this.#lastAttachError;
  }

  /**
   * Runs a tmux command; resolves with its output lines (`replied`: see `ControlClient.run`). A
   * live command client, the usual case, takes the command at once, without the attach path's
   * awaits: a read or a send is a few of these, and each await is a turn of the microtask queue.
   */
  run(args: readonly string[], replied?: () => void): Promise<string[]> {
    this.#checkSocket();
    const client = this.#commandClient;
    if (client?.alive) return this.#runOn(client, args, replied);
    return this.#ensureCommandClient().then((attached) => (attached ? this.#runOn(attached, args, replied) : this.#runOneShot(args, replied)));
  }

  #runOn(client: ControlClient, args: readonly string[], replied: (() => void) | undefined): Promise<string[]> {
    return client.run(args, replied).catch((error: unknown) => {
      // A connection that died mid-command (server restart) gets one one-shot retry, but only
      // for commands that only look: an injection is never repeated. tmux's own errors are final.
      if (!(error instanceof DriverError) || error.kind !== 'Unavailable' || client.alive || !LOOK_ONLY.has(args[0] ?? '')) throw error;
      return this.#runOneShot(args, replied);
    });
  }

  async #runOneShot(args: readonly string[], replied: (() => void) | undefined): Promise<string[]> {
    const lines = await this.oneShot(args);
    replied?.();
    return lines;
  }

  /**
   * Runs a command sequence over the control connection (`ControlClient.runSequence`): one line,
   * one reply per block. Undefined when commands go one-shot (no control mode), where one
   * process's output cannot be told apart by command: the caller then runs them one by one.
   */
  runSequence(commands: ReadonlyArray<readonly string[]>, blocks = commands.length, replied?: () => void): Promise<string[][] | undefined> {
    this.#checkSocket();
    const client = this.#commandClient;
    if (client?.alive) return client.runSequence(commands, blocks, replied);
    return this.#ensureCommandClient().then((attached) => attached?.runSequence(commands, blocks, replied));
  }

  /** Runs `tmux [-S socket] <args>` as a one-shot process. */
  oneShot(args: readonly string[], timeoutMs = 10_000): Promise<string[]> {
    const argv = [...this.#globalArgs(), ...args];
    return new Promise((resolve, reject) => {
      execFile(this.tmux, argv, { env: this.#env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') {
            reject(
              new DriverError('Unavailable', 'tmux is not installed (not found on PATH)', {
                hint: 'install tmux (e.g. `apt-get install tmux` or `brew install tmux`)',
              }),
            );
          } else if ((error as { killed?: boolean }).killed) {
            reject(
              new DriverError('Timeout', `tmux ${args[0] ?? ''} did not finish within ${timeoutMs} ms`, {
                hint: 'the tmux server may be overloaded; try again',
              }),
            );
          } else reject(tmuxFailure(stderr || error.message, this.#socket));
          return;
        }
        const lines = stdout.split('\n');
        if (lines[lines.length - 1] === '') lines.pop();
        resolve(lines);
      });
    });
  }

  /**
   * Watches a pane's output through a control client attached to its session (attaching one on
   * demand). Resolves undefined when control mode is unavailable; callers then poll.
   */
  watch(sessionId: string, pane: string, listener: (data: Buffer) => void): Promise<(() => void) | undefined> {
    this.#checkSocket();
    const attached = this.#clients.get(sessionId);
    if (attached?.alive) return Promise.resolve(this.#subscribe(attached, pane, listener));
    return this.#clientFor(sessionId).then((client) => client && this.#subscribe(client, pane, listener));
  }

  #subscribe(client: ControlClient, pane: string, listener: (data: Buffer) => void): () => void {
    const forward: OutputListener = (p, data) => {
      if (p === pane) listener(data);
    };
    const unsubscribe = client.onOutput(forward);
    this.#watchers.set(client, (this.#watchers.get(client) ?? 0) + 1);
    clearTimeout(this.#idleTimers.get(client));
    this.#idleTimers.delete(client);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unsubscribe();
      const left = (this.#watchers.get(client) ?? 1) - 1;
      this.#watchers.set(client, left);
      if (left === 0) this.#detachLater(client);
    };
  }

  #detachLater(client: ControlClient): void {
    const timer = setTimeout(() => {
      this.#idleTimers.delete(client);
      if (client !== this.#commandClient && (this.#watchers.get(client) ?? 0) === 0) void client.close();
    }, this.#options.idleDetachMs ?? IDLE_DETACH_MS);
    timer.unref();
    this.#idleTimers.set(client, timer);
  }

  /** Closes every control client and waits until their processes are gone. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    const pending = [...this.#attaching.values()];
    await this.#closeAll();
    // An attach still in flight closes its client itself (disposed); wait for that too.
    await Promise.all(pending);
  }

  /**
   * `-u` makes tmux print UTF-8 to us whatever our locale: a client started without one (`env -i`,
   * an MCP client's minimal environment) otherwise gets every byte outside printable ASCII as `_`,
   * the field separator of the pane format included. It is a client flag, so it holds whatever
   * environment the server was started in.
   */
  #globalArgs(): string[] {
    return ['-u', ...(this.#socket ? ['-S', this.#socket] : [])];
  }

  /** A changed socket (config edit) drops every connection to the old server. */
  #checkSocket(): void {
    const socket = this.#options.socket();
    if (socket === this.#socket) return;
    void this.#closeAll();
    this.#socket = socket;
    this.#nextAttachAt = 0;
  }

  #closeAll(): Promise<void> {
    for (const timer of this.#idleTimers.values()) clearTimeout(timer);
    this.#idleTimers.clear();
    this.#watchers.clear();
    const closing = [...this.#clients.values()].map((client) => client.close());
    this.#clients.clear();
    this.#commandClient = undefined;
    return Promise.all(closing).then(() => undefined);
  }

  async #ensureCommandClient(): Promise<ControlClient | undefined> {
    if (this.#commandClient?.alive) return this.#commandClient;
    this.#commandClient = undefined;
    for (const client of this.#clients.values()) {
      if (client.alive) return (this.#commandClient = client);
    }
    if (this.#disposed || this.#options.controlMode === false || Date.now() < this.#nextAttachAt) return undefined;
    let session: string | undefined;
    try {
      session = (await this.oneShot(['list-sessions', '-F', '#{session_id}']))[0];
    } catch (error) {
      this.#attachFailed(error);
      return undefined;
    }
    if (!session) return undefined;
    const client = await this.#clientFor(session);
    if (client) this.#commandClient = client;
    return client;
  }

  async #clientFor(sessionId: string): Promise<ControlClient | undefined> {
    const existing = this.#clients.get(sessionId);
    if (existing?.alive) return existing;
    if (this.#disposed || this.#options.controlMode === false || Date.now() < this.#nextAttachAt || this.#clients.size >= MAX_WATCH_CLIENTS) return undefined;
    const pending = this.#attaching.get(sessionId);
    if (pending) return pending;
    const socket = this.#socket;
    const attempt = ControlClient.attach({
      tmux: this.tmux,
      globalArgs: this.#globalArgs(),
      session: sessionId,
      env: this.#env,
      failure: (text) => tmuxFailure(text, socket),
    }).then(
      (client) => {
        if (this.#disposed || socket !== this.#socket) {
          return client.close().then(() => undefined);
        }
        this.#lastAttachError = undefined;
        this.#clients.set(sessionId, client);
        client.onExit(() => {
          if (this.#clients.get(sessionId) === client) this.#clients.delete(sessionId);
          if (this.#commandClient === client) this.#commandClient = undefined;
          clearTimeout(this.#idleTimers.get(client));
          this.#idleTimers.delete(client);
          this.#watchers.delete(client);
        });
        return client;
      },
      (error: unknown) => {
        this.#attachFailed(error);
        return undefined;
      },
    );
    this.#attaching.set(sessionId, attempt);
    try {
      return await attempt;
    } finally {
      this.#attaching.delete(sessionId);
    }
  }

  #attachFailed(error: unknown): void {
    this.#lastAttachError = error instanceof Error ? error.message : String(error);
    this.#nextAttachAt = Date.now() + RETRY_ATTACH_MS;
  }
}
