/**
 * Facts about local processes from `/proc`, behind a small interface so tests can simulate what
 * a live system cannot produce on demand (a pid reused by a process with a new start time).
 */
import { readFile } from 'node:fs/promises';

/** Reads a process's start time and name; `undefined` when the process does not exist. */
export interface ProcReader {
  startTime(pid: number): Promise<number | undefined>;
  processName(pid: number): Promise<string | undefined>;
}

/** Field 22 (starttime, clock ticks since boot) of a `/proc/<pid>/stat` line. */
export function parseStartTime(stat: string): number | undefined {
  // Field 2 is the command name in parentheses and may itself contain ") (": split after the last ')'.
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const rest = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const value = Number(rest[19]);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The real `/proc`. */
export const linuxProc: ProcReader = {
  async startTime(pid) {
    try {
      return parseStartTime(await readFile(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return undefined;
    }
  },
  async processName(pid) {
    try {
      return (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
    } catch {
      return undefined;
    }
  },
};
