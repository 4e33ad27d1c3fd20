/**
 * The audit store: an append-only SQLite table (better-sqlite3, WAL) of every kernel event,
 * approval decision and rejected request. Ordinary entries commit with `synchronous=NORMAL`
 * (durable against a process crash: WAL frames are in the OS before the call returns); decisions
 * commit with `synchronous=FULL` (fsynced) before they take effect. A call's entries can instead be
 * journaled before its reply and committed with a later batch (`journal`, journal.ts); opening a
 * store replays the journals of processes that died in between. Nothing secret is stored: the hub
 * redacts sensitive args before they get here. The table's columns and versions come from the
 * audit record (columns.ts, migrations.ts); entries become rows in rows.ts, within bounds (bounded.ts).
 */
import Database from 'better-sqlite3';
import type { Database as Db, Statement, Transaction } from 'better-sqlite3';
import type { Disposer } from '../../../shared/emitter';
import { AuditJournal, journalDir } from './journal';
import { createPrivate, tightenFiles } from '../data-dir';
import type { AuditEntry, AuditPage, AuditQuery } from '../types';
import { cut } from '../bounds';
import { boundedEntry, recorded } from './bounded';
import { at } from './columns';
import { migrate } from './migrations';
import { fromRow, journaledRow, placeholderRow, toRow } from './rows';
import type { Row } from './rows';
import { ChainedInsert } from './chain';
import { Checkpointer } from './checkpoints';
import type { AuditCheckpoint } from './checkpoints';
import { chainProblem, quickCheck } from './verify';
import { FileWatch, GONE_HINT } from './watch';

/** How often the WAL is checkpointed into the database file. */
const CHECKPOINT_EVERY_MS = 2000;

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
  #insertMany: Transaction<(entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => AuditEntry[]>;
  #journal: AuditJournal;
  /** Why the last write failed (journal or commit); cleared by the next commit that succeeds. */
  #failure: string | undefined;
  /** Told when `failure()` changes (the panel shows it). */
  onFailureChange: ((failure: string | undefined) => void) | undefined;
  #timer: ReturnType<typeof setInterval>;
  #closed = false;
  /** The last integrity check. */
  #checked: { at: number; damage?: string } | undefined;
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
    // Another process (CLI beside a running hub) may hold the write lock briefly.
    this.#db.pragma('busy_timeout = 5000');
    // Checkpoints (which fsync) run on a timer instead of inside a call's commit; see #checkpoint.
    this.#db.pragma('wal_autocheckpoint = 0');
    migrate(this.#db, this.path);
    this.#watch = new FileWatch(path);
    this.#insert = new ChainedInsert(this.#db, { enabled: options.chain !== false });
    if (options.chain !== false) this.#checkpoints = new Checkpointer(this.#db, path);
    this.#setMark = this.#db.prepare('INSERT INTO journal_marks (file, seq) VALUES (?, ?) ON CONFLICT(file) DO UPDATE SET seq = excluded.seq');
    this.#markOf = this.#db.prepare('SELECT seq FROM journal_marks WHERE file = ?');
    this.#allMarks = this.#db.prepare('SELECT file FROM journal_marks');
    this.#dropMark = this.#db.prepare('DELETE FROM journal_marks WHERE file = ?');
    this.#insertMany = this.#db.transaction((entries: Array<Omit<AuditEntry, 'id'>>, mark: string | undefined, seq: number | undefined) => {
      const stored = entries.map((e) => this.#appendContained(e));
      if (mark !== undefined && seq !== undefined) this.#setMark.run(mark, seq);
      return stored;
    });
    this.#journal = new AuditJournal(journalDir(path));
    try {
      this.replayJournals();
    } catch {
      // Busy (another process holds the write lock): the next tick tries again.
    }
    this.#checkpoints?.take();
    this.#timer = setInterval(() => this.#tick(), CHECKPOINT_EVERY_MS);
    this.#timer.unref?.();
  }

  /** Appends one entry (synchronous=NORMAL) and returns it, bounded as stored, with its id. */
  append(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    const bounded = boundedEntry(entry);
    const info = this.#insert.run(toRow(bounded));
    return { ...bounded, id: Number(info.lastInsertRowid) };
  }

  /**
   * Appends one entry; one SQLite refuses is stored as a placeholder saying why, so one bad row
   * never holds back a batch. Throws only when the placeholder fails too (the store is failing).
   */
  #appendContained(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    try {
      return this.append(entry);
    } catch (e) {
      const row = placeholderRow(entry, e);
      const info = this.#insert.run(row);
      const invocation = row[at('invocation_id')];
      return {
        at: row[at('at')] as number,
        type: entry.type,
        kind: entry.kind,
        message: row[at('message')] as string,
        ...(invocation ? { invocation_id: invocation as string } : {}),
        id: Number(info.lastInsertRowid),
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

  #failed(e: unknown): void {
    const err = e as NodeJS.ErrnoException;
    const code = typeof err?.code === 'string' ? `${err.code}: ` : '';
    const message = String(err?.message ?? e).replace(/\s+/g, ' ');
    this.#setFailure(cut(message.startsWith(code) ? message : `${code}${message}`, 300));
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
   * runs); their rows are built when they commit, off the reply's path.
   */
  journal(entries: Array<Omit<AuditEntry, 'id'>>): number {
    try {
      return this.#journal.append(entries.map(recorded));
    } catch (e) {
      this.#failed(e);
      throw e;
    }
  }

  /**
   * Appends many entries in one transaction (one WAL commit). With `durable`, the commit is
   * fsynced (synchronous=FULL): used when a decision is in the batch, before it takes effect.
   * `journaled` is the seq of the last journal line whose entries are all in this batch; the
   * commit records it, so a replay never inserts them twice. If such a commit fails, the
   * journal keeps them for a later replay (they must not be retried by the caller).
   */
  appendMany(entries: Array<Omit<AuditEntry, 'id'>>, durable = false, journaled?: number): AuditEntry[] {
    if (durable) this.#db.pragma('synchronous = FULL');
    try {
      // IMMEDIATE: each row reads the chain's head before it is inserted (chain.ts).
      const stored = this.#insertMany.immediate(entries, journaled === undefined ? undefined : this.#journal.name, journaled);
      this.#setFailure(undefined);
      if (journaled !== undefined) this.#journal.committed(journaled);
      return stored;
    } catch (e) {
      this.#failed(e);
      if (journaled !== undefined) this.#journal.retire();
      throw e;
    } finally {
      if (durable) this.#db.pragma('synchronous = NORMAL');
    }
  }

  /**
   * Inserts what journals of gone processes (and this one's retired files) hold above their
   * marks, then deletes them. The file is read under the write lock and its mark kept until it
   * is deleted, so two processes replaying at once insert each line once. Returns rows inserted.
   */
  replayJournals(): number {
    let inserted = 0;
    for (const name of this.#journal.orphans()) {
      let wrote = false;
      try {
        const done = this.#db
          .transaction(() => {
            const records = this.#journal.read(name);
            if (!records) return false;
            const row = this.#markOf.get(name) as { seq: number } | undefined;
            const mark = row?.seq ?? 0;
            let top = mark;
            for (const rec of records) {
              if (rec.seq <= mark) continue;
              for (const r of rec.entries ?? rec.rows ?? []) {
                try {
                  this.#insert.run(rec.entries ? toRow(boundedEntry(r as Omit<AuditEntry, 'id'>)) : journaledRow(r));
                  inserted++;
                } catch {
                  // A row SQLite refuses (it failed the original commit too) must not hold back the rest.
                }
              }
              top = Math.max(top, rec.seq);
            }
            if (top > mark) {
              this.#setMark.run(name, top);
              wrote = true;
            }
            return true;
          })
          .immediate();
        if (done) this.#journal.remove(name);
        this.#journal.replayed(name);
        // A replay that wrote is a commit that succeeded: the store can be written again.
        if (wrote) this.#setFailure(undefined);
      } catch {
        // Busy or unreadable: the next open or tick tries again.
      }
    }
    // Marks of files that are gone (removed above, or by another process) are no longer needed.
    // Marks are read before the directory: a file exists before its first mark and is deleted
    // before its mark, and names are never reused, so a mark without a file is stale.
    const marks = this.#allMarks.all() as Array<{ file: string }>;
    const present = this.#journal.files();
    for (const { file } of marks) if (!present.has(file)) this.#dropMark.run(file);
    return inserted;
  }

  /** Appends one entry fsynced to disk (synchronous=FULL). */
  appendDurable(entry: Omit<AuditEntry, 'id'>): AuditEntry {
    return this.appendMany([entry], true)[0]!;
  }

  /** Records that a standing rule approved a request. */
  touchRule(ruleId: string, at: number): void {
    this.#db
      .prepare(
        'INSERT INTO rule_usage (rule_id, last_used_at, uses) VALUES (?, ?, 1) ON CONFLICT(rule_id) DO UPDATE SET last_used_at = excluded.last_used_at, uses = uses + 1',
      )
      .run(ruleId, at);
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

  /**
   * Damage in the file (`PRAGMA quick_check`: every page and index, without the slow cross-checks;
   * a fraction of a second for hundreds of MB), or undefined when it is sound. Run at most every
   * INTEGRITY_EVERY_MS; between runs the last answer stands.
   */
  /** Doctor's `audit` line: still the file at its path, readable, writable, undamaged, its chain whole. */
  health(): { ok: boolean; path: string; error?: string } {
    try {
      const gone = this.#look();
      if (gone) return { ok: false, path: this.path, error: `${gone}; new calls are refused — hint: ${GONE_HINT}` };
      this.lastId();
      const failure = this.failure();
      const error = failure
        ? `the audit log cannot be written (${failure}); new calls are refused until it can`
        : (this.damage() ?? this.#chainProblem() ?? this.#checkpoints?.error);
      return error ? { ok: false, path: this.path, error } : { ok: true, path: this.path };
    } catch (e) {
      return { ok: false, path: this.path, error: (e as Error).message };
    }
  }

  damage(): string | undefined {
    const now = Date.now();
    if (this.#checked && now - this.#checked.at < INTEGRITY_EVERY_MS) return this.#checked.damage;
    let damage: string | undefined;
    try {
      // A connection of its own: this store's page cache would answer from what it read before
      // the file was overwritten.
      const fresh = new Database(this.path, { readonly: true, fileMustExist: true });
      try {
        const problems = quickCheck(fresh);
        if (problems) damage = `the integrity check of ${this.path} failed: ${problems}`;
      } finally {
        fresh.close();
      }
    } catch (e) {
      damage = `the integrity check of ${this.path} failed: ${cut(String((e as Error)?.message ?? e), 1000)}`;
    }
    this.#checked = { at: now, ...(damage ? { damage } : {}) };
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
    this.checkpoint();
    if (this.#closed) return;
    this.#look();
    this.#checkpoints?.take();
    try {
      this.replayJournals();
    } catch {
      // Busy: the next tick tries again.
    }
  }

  /** Moves WAL frames into the database without waiting for readers (other processes). */
  checkpoint(): void {
    if (this.#closed) return;
    try {
      this.#db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy (another process checkpointing): the next tick tries again.
    }
  }

  /** Closes the database (checkpointing the WAL) and this process's journal (deleted when all of it was committed). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
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
