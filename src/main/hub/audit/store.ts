/**
 * The audit store: an append-only SQLite table (better-sqlite3, WAL) of every kernel event,
 * approval decision and rejected request. Ordinary entries commit with `synchronous=NORMAL`
 * (durable against a process crash: WAL frames are in the OS before the call returns); decisions
 * commit with `synchronous=FULL` (fsynced) before they take effect. A call's entries can instead be
 * journaled before its reply and committed with a later batch (`journal`, journal.ts); journals of
 * processes that died in between, and files this process retired, are replayed — in the order
 * they were written, before any newer batch of this process — until every line is in the table.
 * Nothing secret is stored: the hub redacts sensitive args before they get here. The table's
 * columns and versions come from the audit record (columns.ts, migrations.ts); entries become rows
 * in rows.ts, within bounds (bounded.ts).
 *
 * Locks and full disks. SQLite runs on the event loop, so no statement may wait long for another
 * process's lock: the busy timeout is BUSY_WAIT_MS, and a commit that finds the file locked fails
 * at once. The journal holds what the agent was answered about (a reply waits for its fsync, off the
 * event loop, while the store cannot commit) and the timeline retries; only a lock held past MAX_BUSY_MS, or a failure of another
 * kind (disk full, I/O error), refuses new calls. This is simpler than a writer thread, which would
 * make every commit and every decision asynchronous, and it keeps the rule that an answer leaves
 * only once its entries are in the table or the journal. The WAL is checkpointed on a timer,
 * truncated after a failure and whenever it passed WAL_TRUNCATE_BYTES, so after a full disk the
 * space it took is given back; one that a reader in another process keeps from being reset past
 * MAX_WAL_BYTES stops commits (a failure) rather than growing without bound.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Database as Db, Statement, Transaction } from 'better-sqlite3';
import type { Disposer } from '../../../shared/emitter';
import { AuditJournal, journalDir } from './journal';
import { createPrivate, tightenFiles } from '../data-dir';
import type { AuditEntry, AuditPage, AuditQuery } from '../types';
import { cut } from '../bounds';
import { boundedEntry, journaledEntry, recorded } from './bounded';
import { at } from './columns';
import { migrate } from './migrations';
import { fromRow, journaledRow, placeholderRow, toRow } from './rows';
import type { Row } from './rows';
import { ChainedInsert } from './chain';
import { Checkpointer } from './checkpoints';
import type { AuditCheckpoint } from './checkpoints';
import { chainProblem, quickCheckProblems } from './verify';
import { quickCheckOffThread } from './integrity-thread';
import { FileWatch, GONE_HINT } from './watch';
import type { JournalRow } from './journal';
import { WalThread } from './wal-thread';
import type { WalThreadResult } from './wal-thread';

/** How often the WAL is checkpointed into the database file (and journals are replayed). */
const CHECKPOINT_EVERY_MS = 2000;

/** Longest one statement waits for another process's lock: it runs on the event loop. */
const BUSY_WAIT_MS = 2;
/** Longest the opening of a store waits (nothing is served yet; a CLI beside a hub waits rather than fails). */
const OPEN_BUSY_WAIT_MS = 5000;
/** After a commit found the file locked, others fail without trying until this much later. */
const BUSY_RETRY_MS = 100;
/** A lock held longer than this is a failure: new calls are refused until it is released. */
const MAX_BUSY_MS = 30_000;
/**
 * A WAL bigger than this is copied into the database file after the commit that grew it (on the
 * WAL thread) and truncated by the store's own checkpoint; SQLite keeps it this small after a reset.
 */
const WAL_TRUNCATE_BYTES = 4 * 1024 * 1024;
/** How often commits look at the WAL's size (the thread checkpoints it past WAL_TRUNCATE_BYTES). */
const WAL_LOOK_MS = 100;
/** A WAL that cannot be reset (a reader holds it) stops commits at this size. */
const MAX_WAL_BYTES = 64 * 1024 * 1024;

/** Another connection holds the lock: the write may succeed later, it was not refused. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * SQLite refused this row (a value it cannot bind, a constraint, a trigger): a placeholder can
 * stand in for it. Any other error is the store's (locked, full, I/O, damaged) and must fail the
 * whole commit, so the row is tried again rather than replaced.
 */
function rowFault(e: unknown): boolean {
  if (!(e instanceof Database.SqliteError)) return true;
  return /^SQLITE_(TOOBIG|CONSTRAINT|MISMATCH|RANGE)/.test(e.code);
}

/** Least time between two integrity checks (`doctor` can be asked for often). */
const INTEGRITY_EVERY_MS = 10_000;

/** The SQLite-backed audit store. */
export class AuditStore {
  readonly path: string;
  #db: Db;
  /** Every row goes in through it: linked to the row before (chain.ts). */
  #insert: ChainedInsert;
  #setMark: Statement;
  #markOf: Statement;
  #allMarks: Statement;
  #dropMark: Statement;
  #insertMany: Transaction<(entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => AppendResult>;
  #replay: Transaction<(names: string[]) => ReplayResult>;
  /** A write that stores nothing: whether a failing store can write again. */
  #probe: Transaction<() => void>;
  #journal: AuditJournal;
  /** Why the last write failed (journal or commit); cleared by the next commit that succeeds. */
  #failure: string | undefined;
  /** Since when commits have found the file locked by another process (undefined: they do not). */
  #busySince: number | undefined;
  /** The last commit attempt that found the file locked. */
  #busyAt = 0;
  /** Journals may wait to be replayed (set at open and by a retire, cleared by a replay that found none). */
  #replayDue = true;
  /** The next checkpoint truncates the WAL (after a failure, or a WAL that grew past WAL_TRUNCATE_BYTES). */
  #truncateWal = false;
  /**
   * A write failed (disk full, I/O): no commit until a checkpoint took the whole WAL into the
   * database file. Commits would otherwise grow the WAL into space just freed, which the database
   * file needs to take the WAL in: the disk would stay full.
   */
  #walBehind = false;
  /** When a commit last ran a checkpoint to catch up (`#walBehind`). */
  #caughtUpAt = 0;
  /** The WAL passed MAX_WAL_BYTES and a checkpoint could not reset it: commits stop. */
  #walStuck: string | undefined;
  /** Told when `failure()` changes (the panel shows it). */
  onFailureChange: ((failure: string | undefined) => void) | undefined;
  #timer: ReturnType<typeof setInterval>;
  /** Where the routine checkpoint runs (off the event loop). */
  #walThread: WalThread;
  /** The thread's last checkpoint failed: the next tick checkpoints here, and finds out why. */
  #checkpointHere = false;
  /** Something was committed since the last tick (a tick without is idle: it checkpoints here). */
  #committed = false;
  /** When a commit last looked at the WAL's size. */
  #walLookedAt = 0;
  #closed = false;
  /** The last integrity check. */
  #checked: { at: number; damage?: string } | undefined;
  /** The integrity check under way. */
  #checking: Promise<string | undefined> | undefined;
  /** The last check of the chain from its newest checkpoint. */
  #chainChecked: { at: number; problem?: string } | undefined;
  /** Whether the path still names the file this store has open. */
  #watch: FileWatch;
  /** What the watch found (refuses calls like a failed write: nothing recorded now would last). */
  #gone: string | undefined;
  /** Signed checkpoints of the chain; none when the chain is off (the benchmark's baseline). */
  #checkpoints: Checkpointer | undefined;

  /** `chain: false` is for the benchmark's baseline only: rows without links, no checkpoints. */
  constructor(path: string, options: { chain?: boolean } = {}) {
    this.path = path;
    // The audit holds read output: private from birth, and tightened when an older run left it open.
    createPrivate(path);
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    tightenFiles([path, `${path}-wal`, `${path}-shm`]);
    this.#db.pragma('synchronous = NORMAL');
    // Opening waits for another process (a CLI beside a running hub) to finish its write; after
    // that no statement waits more than BUSY_WAIT_MS (see the header).
    this.#db.pragma(`busy_timeout = ${OPEN_BUSY_WAIT_MS}`);
    // Checkpoints (which fsync) run on a timer instead of inside a call's commit; see #checkpoint.
    this.#db.pragma('wal_autocheckpoint = 0');
    // A WAL that grew (a burst, a reader holding it, a full disk) shrinks back at its next reset.
    this.#db.pragma(`journal_size_limit = ${WAL_TRUNCATE_BYTES}`);
    migrate(this.#db, this.path);
    this.#watch = new FileWatch(path);
    this.#insert = new ChainedInsert(this.#db, { enabled: options.chain !== false });
    if (options.chain !== false) this.#checkpoints = new Checkpointer(this.#db, path);
    this.#setMark = this.#db.prepare('INSERT INTO journal_marks (file, seq) VALUES (?, ?) ON CONFLICT(file) DO UPDATE SET seq = excluded.seq');
    this.#markOf = this.#db.prepare('SELECT seq FROM journal_marks WHERE file = ?');
    this.#allMarks = this.#db.prepare('SELECT file FROM journal_marks');
    this.#dropMark = this.#db.prepare('DELETE FROM journal_marks WHERE file = ?');
    // Both take the write lock first (BEGIN IMMEDIATE): a lock is met before any row is inserted.
    this.#insertMany = this.#insert.transaction((entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => {
      // Older lines first (a dead process's, this one's retired files): the table keeps the order they were written in.
      const replayed = this.#replayDue ? this.#replayLines(this.#journal.orphans()) : undefined;
      const stored: AuditEntry[] = [];
      for (const e of entries) {
        const one = this.#appendContained(e);
        if (one) stored.push(one);
      }
      if (mark !== undefined && seq !== undefined) this.#setMark.run(mark, seq);
      return { stored, replayed };
    });
    this.#replay = this.#insert.transaction((names: string[]) => this.#replayLines(names));
    this.#probe = this.#db.transaction(() => {
      this.#setMark.run('', 0);
      this.#dropMark.run('');
    });
    this.#journal = new AuditJournal(journalDir(path));
    try {
      this.replayJournals();
    } finally {
      this.#db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
    }
    this.#checkpoints?.take();
    this.#walThread = new WalThread(path, (r) => this.#walThreadDone(r));
    this.#timer = setInterval(() => this.#tick(), CHECKPOINT_EVERY_MS);
    this.#timer.unref?.();
  }

  /** Appends one entry (synchronous=NORMAL) and returns it, bounded as stored, with its id. */
  append(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    const bounded = boundedEntry(entry);
    return { ...bounded, id: this.#insertRow(toRow(bounded)) };
  }

  /**
   * The one place a row enters the table: live batches, replayed journal lines and placeholders,
   * always inside a transaction holding the write lock, in the table's order. A per-row step that
   * depends on the row before it belongs here.
   */
  #insertRow(row: JournalRow): number {
    return Number(this.#insert.run(row).lastInsertRowid);
  }

  /**
   * Appends one entry; one SQLite refuses is stored as a placeholder saying why, so one bad row
   * never holds back a batch, and one refused even as a placeholder is left out (undefined). An
   * error of the store itself (locked, full, I/O) is thrown: the commit fails and is tried again.
   */
  #appendContained(entry: Omit<AuditEntry, 'id'>): AuditEntry | undefined {
    try {
      return this.append(entry);
    } catch (e) {
      if (!rowFault(e)) throw e;
      const row = placeholderRow(entry, e);
      let id: number;
      try {
        id = this.#insertRow(row);
      } catch (again) {
        if (!rowFault(again)) throw again;
        return undefined;
      }
      const invocation = row[at('invocation_id')];
      return {
        at: row[at('at')] as number,
        type: entry.type,
        kind: entry.kind,
        message: row[at('message')] as string,
        ...(invocation ? { invocation_id: invocation as string } : {}),
        id,
      };
    }
  }

  /** Why the audit cannot be written right now (the last write failed, or the file is gone), or undefined. */
  failure(): string | undefined {
    return this.#gone ?? this.#failure;
  }

  /** Hears every checkpoint of the chain this store signs (the fleet publishes them to other hubs). */
  onCheckpoint(listener: (checkpoint: AuditCheckpoint) => void): Disposer {
    return this.#checkpoints ? this.#checkpoints.onCheckpoint(listener) : () => {};
  }

  /** Signs a checkpoint now if the chain moved since the newest (the store does so every few seconds). */
  takeCheckpoint(): AuditCheckpoint | undefined {
    return this.#closed ? undefined : this.#checkpoints?.take();
  }

  /** Looks whether the path still names the open file; tells `onFailureChange` when it stopped doing so. */
  #look(): string | undefined {
    const gone = this.#watch.check();
    if (gone && !this.#gone) {
      this.#gone = gone;
      try {
        this.onFailureChange?.(this.failure());
      } catch {
        // A listener's failure must not break the store.
      }
    }
    return gone;
  }

  /**
   * Whether the store is not committing now (locked by another process, or failing): what is
   * journaled may wait there a while, so it is fsynced.
   */
  deferred(): boolean {
    return this.#busySince !== undefined || this.#failure !== undefined;
  }

  #failed(e: unknown): void {
    if (isBusy(e)) {
      // Another process's lock: the journal holds what was answered; a lock held too long is a failure.
      const now = Date.now();
      this.#busySince ??= now;
      this.#busyAt = now;
      if (now - this.#busySince < MAX_BUSY_MS) return;
      const secs = Math.round((now - this.#busySince) / 1000);
      this.#setFailure(`SQLITE_BUSY: another process has held the audit's write lock for ${secs} s`);
      return;
    }
    this.#truncateWal = true;
    this.#walBehind = true;
    const err = e as NodeJS.ErrnoException;
    const code = typeof err?.code === 'string' ? `${err.code}: ` : '';
    const message = String(err?.message ?? e).replace(/\s+/g, ' ');
    this.#setFailure(cut(message.startsWith(code) ? message : `${code}${message}`, 300));
  }

  /** A commit succeeded: the store is writable again (and a WAL a failure grew is truncated). */
  #succeeded(): void {
    if (this.#failure !== undefined) this.#truncateWal = true;
    this.#busySince = undefined;
    this.#setFailure(undefined);
  }

  #setFailure(failure: string | undefined): void {
    if (failure === this.#failure) return;
    this.#failure = failure;
    try {
      this.onFailureChange?.(this.failure());
    } catch {
      // A listener's failure must not break a write.
    }
  }

  /**
   * Writes entries to this process's journal (one write, no SQLite) and returns the line's seq;
   * they must then be committed with `appendMany(…, seq)`. Throws when the journal cannot be
   * written (the caller commits at once instead). The entries go as they are stored: bounded, and
   * with only the agent's recorded fields (a live agent also carries its session and where it
   * runs); their rows are built when they commit, off the reply's path. The line is fsynced with
   * `sync` (on the event loop); a reply waits for `journalSynced()` instead.
   */
  journal(entries: Array<Omit<AuditEntry, 'id'>>, sync = false): number {
    try {
      return this.#journal.append(entries.map(recorded), sync);
    } catch (e) {
      this.#failed(e);
      throw e;
    }
  }

  /**
   * While the store is not committing (`deferred`): resolves once every journal line is on disk
   * (an fdatasync off the event loop), for a reply to wait on; undefined when there is nothing to wait for.
   */
  journalSynced(): Promise<void> | undefined {
    return this.deferred() ? this.#journal.sync() : undefined;
  }

  /**
   * The caller gives up holding what it journaled and did not commit (too much has queued while
   * the store fails): the current file is fsynced, closed and replayed like a dead process's,
   * before any later batch commits. Lines go to a new file from now on.
   */
  retireJournal(): void {
    this.#journal.retire();
    this.#replayDue = true;
  }

  /**
   * Appends many entries in one transaction (one WAL commit). With `durable`, the commit is
   * fsynced (synchronous=FULL): used when a decision is in the batch, before it takes effect.
   * `journaled` is the seq of the last journal line whose entries are all in this batch; the
   * commit records it, so a replay never inserts them twice. When the commit fails nothing of it
   * is stored: the caller keeps the entries and tries again with the same seq (or retires the
   * journal). Journals waiting to be replayed are inserted first, in the same transaction.
   */
  appendMany(entries: Array<Omit<AuditEntry, 'id'>>, durable = false, journaled?: number): AuditEntry[] {
    this.#canCommit();
    if (durable) this.#db.pragma('synchronous = FULL');
    try {
      // IMMEDIATE: each row reads the chain's head before it is inserted (chain.ts).
      const { stored, replayed } = this.#insertMany.immediate(entries, journaled === undefined ? undefined : this.#journal.name, journaled);
      if (replayed) this.#replayed(replayed);
      this.#succeeded();
      if (journaled !== undefined) this.#journal.committed(journaled);
      this.#committed = true;
      // A steady load grows the WAL by tens of MB a second: the thread copies it as it goes (its
      // size looked at, a system call, at most every WAL_LOOK_MS).
      const now = Date.now();
      if (!this.#walThread.busy && now - this.#walLookedAt >= WAL_LOOK_MS) {
        this.#walLookedAt = now;
        const wal = walBytes(this.path);
        if (wal > WAL_TRUNCATE_BYTES) this.#routineCheckpoint(wal);
      }
      return stored;
    } catch (e) {
      this.#failed(e);
      // What was journaled and answered now waits there: on to the disk with it, off the event loop.
      this.#journal.sync()?.catch(() => undefined);
      throw e;
    } finally {
      if (durable) this.#db.pragma('synchronous = NORMAL');
    }
  }

  /**
   * Throws, without a commit, while one cannot succeed: just found locked, the WAL stuck, or
   * behind after a failed write (a checkpoint, at most every BUSY_RETRY_MS, tries to catch up).
   */
  #canCommit(): void {
    if (this.#walStuck !== undefined) {
      const err = new Error(this.#walStuck);
      this.#failed(err);
      throw err;
    }
    // Not a new attempt: the window counts from the last real one.
    if (this.#busySince !== undefined && Date.now() - this.#busyAt < BUSY_RETRY_MS)
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    if (this.#walBehind) {
      const now = Date.now();
      if (now - this.#caughtUpAt >= BUSY_RETRY_MS) {
        this.#caughtUpAt = now;
        this.#walCheckpoint(true);
      }
      if (this.#walBehind) throw new Error(this.#failure ?? 'the WAL could not be checkpointed into the database file');
    }
  }

  /**
   * Inserts what journals of gone processes (and this one's retired files) hold above their
   * marks, then deletes them. Files are read under the write lock and a file's mark is kept until
   * it is deleted, so two processes replaying at once (or a replay cut short and run again)
   * insert each line once. Returns rows inserted; a locked or failing store inserts none (the
   * next commit or tick tries again).
   */
  replayJournals(): number {
    const names = this.#journal.orphans();
    let inserted = 0;
    if (names.length > 0) {
      try {
        const result = this.#replay.immediate(names);
        this.#replayed(result);
        inserted = result.inserted;
        // A replay that wrote is a commit that succeeded: the store can be written again.
        if (result.wrote) this.#succeeded();
      } catch {
        // Locked or failing: the lines stay, and the next commit replays them first.
        return 0;
      }
    } else this.#replayDue = this.#journal.retiring;
    try {
      // Marks of files that are gone (removed above, or by another process) are no longer needed.
      // Marks are read before the directory: a file exists before its first mark and is deleted
      // before its mark, and names are never reused, so a mark without a file is stale.
      const marks = this.#allMarks.all() as Array<{ file: string }>;
      const present = this.#journal.files();
      for (const { file } of marks) if (!present.has(file)) this.#dropMark.run(file);
    } catch {
      // Locked: the next replay drops them.
    }
    return inserted;
  }

  /**
   * Inside a transaction: every line of `names` above its file's mark, in file order, and the new
   * marks. A row SQLite refuses becomes a placeholder; an error of the store aborts the replay.
   */
  #replayLines(names: string[]): ReplayResult {
    const result: ReplayResult = { done: [], inserted: 0, wrote: false };
    for (const name of names) {
      const records = this.#journal.read(name);
      if (!records) continue;
      const row = this.#markOf.get(name) as { seq: number } | undefined;
      const mark = row?.seq ?? 0;
      let top = mark;
      for (const rec of records) {
        if (rec.seq <= mark) continue;
        if (rec.entries) {
          for (const e of rec.entries) if (this.#appendContained(journaledEntry(e as Omit<AuditEntry, 'id'>))) result.inserted++;
        } else {
          for (const r of rec.rows ?? []) {
            try {
              this.#insertRow(journaledRow(r));
              result.inserted++;
            } catch (e) {
              // A row of an earlier version's line that SQLite refuses must not hold back the rest.
              if (!rowFault(e)) throw e;
            }
          }
        }
        top = Math.max(top, rec.seq);
      }
      if (top > mark) {
        this.#setMark.run(name, top);
        result.wrote = true;
      }
      result.done.push(name);
    }
    return result;
  }

  /** After the replay's transaction committed: its files go (their marks keep a rerun from inserting twice). */
  #replayed(result: ReplayResult): void {
    for (const name of result.done) {
      this.#journal.remove(name);
      this.#journal.replayed(name);
    }
    this.#replayDue = this.#journal.retiring;
  }

  /** Appends one entry fsynced to disk (synchronous=FULL). */
  appendDurable(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    return this.appendMany([entry], true)[0]!;
  }

  /** Records that a standing rule approved a request (usage statistics: skipped while the file is locked or failing). */
  touchRule(ruleId: string, at: number): void {
    try {
      this.#db
        .prepare(
          'INSERT INTO rule_usage (rule_id, last_used_at, uses) VALUES (?, ?, 1) ON CONFLICT(rule_id) DO UPDATE SET last_used_at = excluded.last_used_at, uses = uses + 1',
        )
        .run(ruleId, at);
    } catch {
      // The decision itself is recorded through the timeline; a missed use only dates the rule.
    }
  }

  /** Usage of every rule that was ever used. */
  ruleUsage(): Map<string, { last_used_at: number; uses: number }> {
    const rows = this.#db.prepare('SELECT rule_id, last_used_at, uses FROM rule_usage').all() as Array<{ rule_id: string; last_used_at: number; uses: number }>;
    return new Map(rows.map((r) => [r.rule_id, { last_used_at: r.last_used_at, uses: r.uses }]));
  }

  /** Reads entries with filters; `after` pages forwards (oldest first), otherwise backwards from `before`. */
  query(q: AuditQuery = {}): AuditPage {
    const where: string[] = [];
    const params: Record<string, string | number> = {};
    const eq = (col: string, key: string, value: string | undefined): void => {
      if (value === undefined) return;
      where.push(`${col} = @${key}`);
      params[key] = value;
    };
    eq('channel', 'channel', q.channel);
    eq('op', 'op', q.op);
    eq('agent_id', 'agent', q.agent);
    eq('state', 'state', q.state);
    eq('outcome', 'outcome', q.outcome);
    eq('type', 'type', q.type);
    eq('invocation_id', 'invocation_id', q.invocation_id);
    if (q.text) {
      // What was sent (args), what came back (output, message, hint, detail) and why (reason).
      const searched = ['channel', 'op', 'agent_id', 'agent_name', 'message', 'hint', 'detail', 'reason', 'args', 'output', 'invocation_id'];
      where.push(`(${searched.map((c) => `${c} LIKE @text ESCAPE '\\'`).join(' OR ')})`);
      params.text = `%${q.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    }
    const forward = q.after !== undefined;
    if (forward) {
      where.push('id > @after');
      params.after = q.after!;
    } else if (q.before !== undefined) {
      where.push('id < @before');
      params.before = q.before;
    }
    const limit = Math.max(1, Math.min(1000, Math.floor(q.limit ?? 200)));
    const sql = `SELECT * FROM entries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${forward ? 'ASC' : 'DESC'} LIMIT ${limit + 1}`;
    const rows = this.#db.prepare(sql).all(params) as Row[];
    const more = rows.length > limit;
    const entries = rows.slice(0, limit).map(fromRow);
    const page: AuditPage = { entries };
    const last = entries[entries.length - 1];
    if (forward) page.next_cursor = last ? last.id : q.after;
    else if (more && last) page.next_cursor = last.id;
    return page;
  }

  /** Doctor's `audit` line: still the file at its path, readable, writable, undamaged, its chain whole. */
  async health(): Promise<{ ok: boolean; path: string; error?: string }> {
    try {
      const gone = this.#look();
      if (gone) return { ok: false, path: this.path, error: `${gone}; new calls are refused — hint: ${GONE_HINT}` };
      this.lastId();
      const failure = this.failure();
      if (failure) return { ok: false, path: this.path, error: `the audit log cannot be written (${failure}); new calls are refused until it can` };
      const damage = await this.damage();
      if (this.#closed) return { ok: false, path: this.path, error: 'the audit store was closed while it was checked' };
      const error = damage ?? this.#chainProblem() ?? this.#checkpoints?.error;
      return error ? { ok: false, path: this.path, error } : { ok: true, path: this.path };
    } catch (e) {
      return { ok: false, path: this.path, error: (e as Error).message };
    }
  }

  /**
   * Damage in the file (`PRAGMA quick_check`: every page and index, without the slow cross-checks),
   * or undefined when it is sound; checked off the event loop (integrity-thread.ts), at most every
   * INTEGRITY_EVERY_MS, between which the last answer stands. Callers at once share one check.
   */
  damage(): Promise<string | undefined> {
    if (this.#checked && Date.now() - this.#checked.at < INTEGRITY_EVERY_MS) return Promise.resolve(this.#checked.damage);
    return (this.#checking ??= this.#checkIntegrity().finally(() => (this.#checking = undefined)));
  }

  async #checkIntegrity(): Promise<string | undefined> {
    const at = Date.now();
    const result = await quickCheckOffThread(this.path);
    const problems = 'error' in result ? cut(result.error, 1000) : quickCheckProblems(result.lines);
    const damage = problems === undefined ? undefined : `the integrity check of ${this.path} failed: ${problems}`;
    this.#checked = { at, ...(damage ? { damage } : {}) };
    return damage;
  }

  /** The chain checked from its newest checkpoint (verify.ts), at most every INTEGRITY_EVERY_MS. */
  #chainProblem(): string | undefined {
    if (!this.#checkpoints) return undefined;
    const now = Date.now();
    if (this.#chainChecked && now - this.#chainChecked.at < INTEGRITY_EVERY_MS) return this.#chainChecked.problem;
    let problem: string | undefined;
    try {
      problem = chainProblem(this.#db, this.path);
    } catch (e) {
      problem = `the audit's chain cannot be checked: ${cut(String((e as Error)?.message ?? e), 300)}`;
    }
    this.#chainChecked = { at: now, ...(problem ? { problem } : {}) };
    return problem;
  }

  /** The id of the newest entry (0 when empty). */
  lastId(): number {
    const row = this.#db.prepare('SELECT MAX(id) AS id FROM entries').get() as { id: number | null };
    return row.id ?? 0;
  }

  #tick(): void {
    this.#tickCheckpoint();
    if (this.#closed) return;
    this.#look();
    this.#checkpoints?.take();
    this.replayJournals();
    // Failing with nothing queued to retry: a write of its own finds out whether it can write again.
    if (this.#failure !== undefined && this.#walStuck === undefined && !this.#walBehind) {
      try {
        this.#probe.immediate();
        this.#succeeded();
      } catch (e) {
        this.#failed(e);
      }
    }
  }

  /**
   * The tick's checkpoint: on the WAL thread while the hub is committing and all is well; here
   * when it is idle (nothing waits on the loop, and a WAL left big is truncated) or anything is
   * not well (a failed write, a WAL too big, the thread's own failure), where `checkpoint` decides.
   */
  #tickCheckpoint(): void {
    const busy = this.#committed;
    this.#committed = false;
    if (!busy || !this.#routineCheckpoint(walBytes(this.path))) this.checkpoint();
  }

  /** Hands the checkpoint of a WAL of `wal` bytes to the thread when nothing is wrong; false when it must run here. */
  #routineCheckpoint(wal: number): boolean {
    if (this.#checkpointHere || this.#truncateWal || this.#walBehind || this.#walStuck !== undefined) return false;
    if (this.#walThread.busy) return true;
    return wal <= MAX_WAL_BYTES && this.#walThread.request();
  }

  #walThreadDone(result: WalThreadResult): void {
    if ('error' in result) this.#checkpointHere = true;
  }

  /**
   * Moves WAL frames into the database without waiting for readers (other processes). After a
   * failure, or once the WAL passed WAL_TRUNCATE_BYTES, the checkpoint also truncates it (giving a
   * full disk its space back); a WAL past MAX_WAL_BYTES that cannot be reset stops commits.
   */
  checkpoint(): void {
    if (this.#closed) return;
    this.#checkpointHere = false;
    this.#walThread.settle();
    const wal = walBytes(this.path);
    const reset = this.#walCheckpoint(this.#truncateWal || wal > WAL_TRUNCATE_BYTES);
    if (reset || walBytes(this.path) <= MAX_WAL_BYTES) this.#walStuck = undefined;
    else
      this.#walStuck = `its WAL is ${Math.round(wal / 1024 / 1024)} MB and cannot be reset while another program keeps a read transaction open on audit.sqlite: close that program`;
  }

  /**
   * One checkpoint, PASSIVE or TRUNCATE; returns whether the WAL was reset (truncated). One that
   * took every frame into the database file ends `#walBehind`; one that failed (the file cannot
   * grow yet) or was kept from the end by another process leaves it.
   */
  #walCheckpoint(truncate: boolean): boolean {
    try {
      const [r] = this.#db.pragma(`wal_checkpoint(${truncate ? 'TRUNCATE' : 'PASSIVE'})`) as Array<{ busy: number; log: number; checkpointed: number }>;
      if (!r) return false;
      if (r.checkpointed >= r.log) this.#walBehind = false;
      const reset = truncate && r.busy === 0;
      if (reset) this.#truncateWal = false;
      return reset;
    } catch {
      // Busy (another process checkpointing) or failing (the disk still full): tried again later.
      return false;
    }
  }

  /** Closes the database (checkpointing the WAL) and this process's journal (deleted when all of it was committed). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#walThread.close();
    this.#checkpoints?.take();
    const done = this.#journal.close();
    if (done) {
      this.#journal.remove(done);
      try {
        this.#dropMark.run(done);
      } catch {
        // A stale mark is dropped by the next replay.
      }
    }
    this.#db.close();
  }
}

/** What one commit returns: the stored entries, and the replay that went first (if one was due). */
interface AppendResult {
  stored: AuditEntry[];
  replayed: ReplayResult | undefined;
}

/** What a replay did: the files it read whole (deleted after it commits), rows inserted, and whether it set a mark. */
interface ReplayResult {
  done: string[];
  inserted: number;
  wrote: boolean;
}

/** The size of the WAL beside the database at `path` (0 when there is none). */
function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}
