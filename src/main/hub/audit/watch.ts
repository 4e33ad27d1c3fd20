/**
 * Whether the audit file the store has open is still the one at its path: a file deleted (or
 * replaced) under a running hub keeps being written, as "(deleted)" or as a file nobody will read,
 * and everything recorded from then on is lost when the hub stops. One `stat` per look: cheap
 * enough for every tick of the store and every `doctor`.
 */
import { statSync } from 'node:fs';

/** What to do about it: a new file is only opened by a new hub. */
export const GONE_HINT = 'restart the hub to record again (it opens a new audit file), then run `uplink audit verify`';

/** Whether a failure is the watch's finding (it wants GONE_HINT, not a write failure's). */
export const isGone = (why: string): boolean => why.startsWith('the audit file ') && why.includes(' while the hub runs');

export class FileWatch {
  readonly path: string;
  #dev: number;
  #ino: number;
  /** What was found, once found (it stays: the file the hub writes is not the one on disk). */
  #gone: string | undefined;

  /** Right after the database was opened: its path names the file it opened. */
  constructor(path: string) {
    this.path = path;
    const s = statSync(path);
    this.#dev = s.dev;
    this.#ino = s.ino;
  }

  /** Why the path no longer names the open file, or undefined while it does. */
  check(): string | undefined {
    if (this.#gone) return this.#gone;
    try {
      const s = statSync(this.path);
      if (s.dev !== this.#dev || s.ino !== this.#ino)
        this.#gone = `the audit file ${this.path} was replaced while the hub runs: what it records goes to the file it opened, no longer there`;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        this.#gone = `the audit file ${this.path} was deleted while the hub runs: what it records is lost when the hub stops`;
    }
    return this.#gone;
  }
}
