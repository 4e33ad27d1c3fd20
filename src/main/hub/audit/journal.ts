/**
 * The audit journal: a call's audit rows are appended to a small per-process file with one
 * `write()` before the reply leaves the hub, and committed to SQLite with the next batch. A
 * process killed in between loses nothing: the next process that opens the store (a restarted hub,
 * `uplink log`, any CLI call) replays the journals of processes that are gone.
 *
 * Durability is the same as the store's `synchronous=NORMAL` WAL commits: the bytes are in the
 * OS when the reply leaves, safe against a process crash, not fsynced against power loss. While
 * the store cannot commit (another process holds its lock, the disk is full) a reply waits for
 * `sync()`, an fdatasync off the event loop: its lines may then be the only copy for a while.
 *
 * Files: `<dir>/<pid>-<random>.jsonl`, mode 0600, one line `{"seq":n,"entries":[{…},…]}` per
 * write: the call's audit entries, already redacted and bounded, which the store turns into rows
 * when it commits them (or replays them). Lines of earlier versions hold `rows` instead, the
 * column values themselves; both replay. The store keeps, in the same transaction as the rows,
 * the highest `seq` of each file it committed (`journal_marks`), so a replay inserts only lines
 * above the mark and never twice.
 */
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pidAlive } from '../data-dir';
import { readSmallFile } from '../files';

/** A row as the store inserts it: its column values in the store's column order. */
export type JournalRow = Array<string | number | null>;

/** One line of a journal: entries as the store records them, or (written by earlier versions) rows. */
export interface JournalRecord {
  seq: number;
  entries?: unknown[];
  rows?: JournalRow[];
}

/** Where the journals of the audit store at `auditPath` live (`audit.sqlite` → `audit.pending/`). */
export function journalDir(auditPath: string): string {
  return `${auditPath.replace(/\.sqlite$/, '')}.pending`;
}

/** A journal this big is emptied after a commit that covers all of it. */
const TRUNCATE_AT_BYTES = 256 * 1024;

/** Journal files open in this process (several stores on one file must not replay each other's). */
const OPEN_HERE = new Set<string>();

/** This process's journal file, opened on first use. */
export class AuditJournal {
  readonly dir: string;
  #name: string | undefined;
  #fd: number | undefined;
  #seq = 0;
  #committed = 0;
  #bytes = 0;
  /** Files of this process the store no longer commits from: replayed like a dead process's. */
  #retired: string[] = [];
  /** A write failed and its partial line could not be cut off: the next line starts on a new one. */
  #torn = false;
  /** The highest seq of this file known to be on disk. */
  #synced = 0;
  /** The fdatasync running or queued (`sync`). */
  #syncing: Promise<void> | undefined;
  /** Whether this file's directory entry is on disk. */
  #dirSynced = false;

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Appends entries as one line (one write); returns the line's seq. With `sync` the line is
   * fsynced (and a new file's directory entry with it) before this returns. Throws when the disk
   * refuses; the line is then not in the file (or is a damaged line that replay skips).
   */
  append(entries: readonly object[], sync = false): number {
    if (this.#fd === undefined) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.#name = `${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
      this.#fd = openSync(join(this.dir, this.#name), 'a', 0o600);
      this.#bytes = 0;
      this.#torn = false;
      this.#dirSynced = false;
      OPEN_HERE.add(join(this.dir, this.#name));
    }
    const seq = this.#seq + 1;
    const line = `${this.#torn ? '\n' : ''}${JSON.stringify({ seq, entries })}\n`;
    const size = Buffer.byteLength(line);
    try {
      let written = writeSync(this.#fd, line);
      if (written < size) {
        // A short write (the disk filling up): write the rest of the bytes, or throw trying.
        const bytes = Buffer.from(line);
        while (written < size) written += writeSync(this.#fd, bytes, written);
      }
      if (sync) {
        fdatasyncSync(this.#fd);
        if (!this.#dirSynced) syncDir(this.dir);
        this.#dirSynced = true;
        this.#synced = seq;
      }
    } catch (e) {
      // Part of the line may be in the file: cut it off, or the next line would be glued to it
      // and lost on replay. If even that fails, the next line starts with a newline, so the torn
      // one stays a damaged line of its own (skipped) and the file stays in use.
      try {
        ftruncateSync(this.#fd, this.#bytes);
        this.#torn = false;
      } catch {
        this.#torn = true;
      }
      throw e;
    }
    this.#seq = seq;
    this.#bytes += size;
    this.#torn = false;
    return seq;
  }

  /**
   * Resolves once every line written so far is on disk: an fdatasync on libuv's thread pool (the
   * event loop goes on), shared by whoever asks while one runs. Undefined when they already are.
   * A file retired meanwhile counts: retiring fsyncs it.
   */
  sync(): Promise<void> | undefined {
    if (this.#fd === undefined || this.#synced >= this.#seq) return undefined;
    const name = this.#name;
    const target = this.#seq;
    const run = (this.#syncing ?? Promise.resolve()).then(() => {
      if (this.#name !== name || this.#fd === undefined || this.#synced >= target) return undefined;
      const fd = this.#fd;
      const upTo = this.#seq;
      return new Promise<void>((resolve, reject) =>
        fdatasync(fd, (err) => {
          if (this.#name !== name) resolve();
          else if (err) reject(err);
          else {
            try {
              // The file's name too, once per file (rare: a new file, the first time it is needed).
              if (!this.#dirSynced) syncDir(this.dir);
              this.#dirSynced = true;
            } catch (e) {
              reject(e as Error);
              return;
            }
            this.#synced = Math.max(this.#synced, upTo);
            resolve();
          }
        }),
      );
    });
    this.#syncing = run.catch(() => undefined);
    return run;
  }

  /** The current file's name (the key of its mark), if one is open. */
  get name(): string | undefined {
    return this.#name;
  }

  /** After the store committed every line up to `seq` (and its mark): empties a big file. */
  committed(seq: number): void {
    this.#committed = seq;
    if (this.#fd !== undefined && seq === this.#seq && this.#bytes >= TRUNCATE_AT_BYTES) {
      ftruncateSync(this.#fd, 0);
      this.#bytes = 0;
    }
  }

  /**
   * The store stops committing from this file (its caller no longer holds what is above the
   * mark): it is fsynced, closed and replayed like a dead process's; further lines go to a new file.
   */
  retire(): void {
    if (this.#fd === undefined) return;
    try {
      fdatasyncSync(this.#fd);
    } catch {
      // What is in the OS still replays after a process crash.
    }
    closeSync(this.#fd);
    OPEN_HERE.delete(join(this.dir, this.#name!));
    this.#retired.push(this.#name!);
    this.#fd = undefined;
    this.#name = undefined;
    this.#seq = 0;
    this.#committed = 0;
    this.#synced = 0;
  }

  /** Whether this process retired files that are not replayed yet. */
  get retiring(): boolean {
    return this.#retired.length > 0;
  }

  /** A retired file was replayed. */
  replayed(name: string): void {
    this.#retired = this.#retired.filter((n) => n !== name);
  }

  /** Closes the file; returns its name when everything in it was committed (it can go). */
  close(): string | undefined {
    if (this.#fd === undefined) return undefined;
    closeSync(this.#fd);
    OPEN_HERE.delete(join(this.dir, this.#name!));
    this.#fd = undefined;
    const clean = this.#committed === this.#seq;
    return clean ? this.#name : undefined;
  }

  /**
   * Journals to replay, oldest first (by when each was last written, then name): of processes
   * that are gone, and this process's retired ones.
   */
  orphans(): string[] {
    const names = [...this.files()].filter((name) => {
      if (!name.endsWith('.jsonl') || OPEN_HERE.has(join(this.dir, name))) return false;
      if (this.#retired.includes(name)) return true;
      const pid = Number(name.slice(0, name.indexOf('-')));
      // Our own pid on another file: an earlier process with this pid (a container's pid 1).
      return pid === process.pid || !pidAlive(pid);
    });
    const written = new Map(names.map((n) => [n, mtimeOf(join(this.dir, n))]));
    return names.sort((a, b) => written.get(a)! - written.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Every file name in the journal directory (none when it does not exist yet). */
  files(): Set<string> {
    try {
      return new Set(readdirSync(this.dir));
    } catch {
      return new Set();
    }
  }

  /** The complete lines of a journal (a torn last line, from a crash mid-write, is skipped); undefined when it is gone. */
  read(name: string): JournalRecord[] | undefined {
    let text: string;
    try {
      // Whatever else was put there (a FIFO would block the hub's start) is not a journal.
      text = readSmallFile(join(this.dir, name), Number.MAX_SAFE_INTEGER);
    } catch {
      return undefined;
    }
    const records: JournalRecord[] = [];
    const lines = text.split('\n');
    lines.pop(); // '' after the last newline, or a torn line
    for (const line of lines) {
      try {
        const rec = JSON.parse(line) as JournalRecord;
        if (Number.isInteger(rec.seq) && (Array.isArray(rec.entries) || Array.isArray(rec.rows))) records.push(rec);
      } catch {
        // A damaged line: the others still count.
      }
    }
    return records;
  }

  /** Deletes a journal file. */
  remove(name: string): void {
    rmSync(join(this.dir, name), { force: true });
  }
}

/** When a file was last written (0 when it cannot be read: it sorts first and is read as gone). */
function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Makes a new file's name in `dir` survive power loss. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
