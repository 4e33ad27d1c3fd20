/**
 * The WAL's routine checkpoint, on a thread of its own. Under load the audit's WAL grows by tens
 * of megabytes between two checkpoints (every commit rewrites the index pages it touches), and
 * copying it into the database file with the two fsyncs around it took 60–90 ms: on the event
 * loop, every call in flight waited that long. A PASSIVE checkpoint never blocks the writer, so a
 * second connection on a worker thread does it while the hub keeps committing.
 *
 * Frames committed while it copies are not in that checkpoint (a checkpoint's figures count the
 * WAL as it was when it began), so the thread goes again, each round shorter, until one finds the
 * WAL as the round before left it, every frame copied: the hub's next commit then starts the WAL
 * over (SQLite resets it and cuts it to the journal size limit), so it stays small under a steady
 * load as it did when the hub checkpointed itself.
 *
 * The store keeps its own, synchronous checkpoint for everything past the routine (after a failed
 * write, a WAL that a reader keeps from being reset): this thread only takes load off the loop.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Most rounds of one request (each copies what the round before left). */
const MAX_ROUNDS = 16;
/** Longest `settle()` waits for a checkpoint under way. */
const SETTLE_WAIT_MS = 5000;

/** What the worker does with each request: open, checkpoint until caught up, close. */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const state = new Int32Array(workerData.state);
parentPort.on('message', () => {
  let db;
  let result;
  try {
    db = new Database(workerData.path, { fileMustExist: true });
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 0');
    let rounds = 0;
    let before = -1;
    for (;;) {
      rounds++;
      const [r] = db.pragma('wal_checkpoint(PASSIVE)');
      result = { busy: r.busy, log: r.log, checkpointed: r.checkpointed, rounds };
      // Caught up: every frame copied, and none committed since the round before.
      if (r.busy || (r.log === before && r.checkpointed >= r.log) || rounds >= ${MAX_ROUNDS}) break;
      before = r.log;
    }
  } catch (e) {
    result = { error: String((e && e.message) || e) };
  } finally {
    try { if (db) db.close(); } catch {}
    Atomics.store(state, 0, 0);
    Atomics.notify(state, 0);
  }
  parentPort.postMessage(result);
});
`;

/** What one request did: the last round's figures, or why it failed. */
export type WalThreadResult = { busy: number; log: number; checkpointed: number; rounds: number } | { error: string };

/** The path better-sqlite3 loads from, for a worker to load the same module. */
export function driverPath(): string {
  let from: string | undefined;
  try {
    if (import.meta.url) from = fileURLToPath(import.meta.url);
  } catch {
    // A CommonJS bundle (the Electron main) has no import.meta.url but has __filename.
  }
  from ??= typeof __filename === 'string' ? __filename : `${process.cwd()}/`;
  return createRequire(from).resolve('better-sqlite3');
}

export class WalThread {
  readonly #path: string;
  readonly #onResult: (result: WalThreadResult) => void;
  #worker: Worker | undefined;
  /** Shared with the worker: 1 while a request runs. */
  readonly #state = new Int32Array(new SharedArrayBuffer(4));
  /** The thread failed to start or died: the store checkpoints itself from then on. */
  #broken = false;
  #closed = false;

  constructor(path: string, onResult: (result: WalThreadResult) => void = () => undefined) {
    this.#path = path;
    this.#onResult = onResult;
  }

  /** Whether a checkpoint is under way. */
  get busy(): boolean {
    return Atomics.load(this.#state, 0) === 1;
  }

  /**
   * Starts a checkpoint unless one is under way. False when the thread cannot be used (it failed
   * to start, or died): the caller checkpoints on its own.
   */
  request(): boolean {
    if (this.#broken || this.#closed) return false;
    if (this.busy) return true;
    try {
      this.#worker ??= this.#start();
    } catch {
      this.#broken = true;
      return false;
    }
    Atomics.store(this.#state, 0, 1);
    this.#worker.postMessage(0);
    return true;
  }

  #start(): Worker {
    const worker = new Worker(SOURCE, { eval: true, workerData: { path: this.#path, driver: driverPath(), state: this.#state.buffer } });
    worker.unref();
    worker.on('message', (result: WalThreadResult) => this.#onResult(result));
    const gone = (): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#broken = !this.#closed;
      Atomics.store(this.#state, 0, 0);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    return worker;
  }

  /**
   * Waits (a bounded while) for a checkpoint under way: the store's own checkpoint, run after it,
   * is not refused as busy, and finds only what was committed since.
   */
  settle(): void {
    if (this.busy) Atomics.wait(this.#state, 0, 1, SETTLE_WAIT_MS);
  }

  /** Settles, so the store's own close is the last connection's and takes the WAL in, then ends the thread. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.settle();
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
  }
}
