/**
 * Which pane a process lives in: the pane whose process (`#{pane_pid}`) is the process itself or
 * its nearest ancestor, walking the parent chain in `/proc/<pid>/stat`. Linux only: without
 * `/proc` nothing is proved, and the answer is none.
 */
import { readFile } from 'node:fs/promises';

/** Deeper than any real shell → agent → `uplink mcp` chain; a longer one proves nothing. */
const MAX_DEPTH = 64;

/** The parent pid (field 4) of a `/proc/<pid>/stat` line. */
export function parseParentPid(stat: string): number | undefined {
  // Field 2 is the command name in parentheses and may itself contain ") (": split after the last ')'.
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const ppid = Number(
    stat
      .slice(close + 2)
      .trim()
      .split(/\s+/)[1],
  );
  return Number.isSafeInteger(ppid) && ppid >= 0 ? ppid : undefined;
}

async function parentOf(pid: number): Promise<number | undefined> {
  try {
    return parseParentPid(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The first of `candidates` met walking up from `pid` (itself included) through its parents, or
 * undefined when the chain reaches init first. `parent` reads a process's parent pid.
 */
export async function nearestAncestor(
  pid: number,
  candidates: ReadonlyMap<number, unknown> | ReadonlySet<number>,
  parent: (pid: number) => Promise<number | undefined> = parentOf,
): Promise<number | undefined> {
  if (!Number.isSafeInteger(pid) || pid <= 1 || candidates.size === 0) return undefined;
  let at: number | undefined = pid;
  for (let depth = 0; at !== undefined && at > 1 && depth < MAX_DEPTH; depth++) {
    if (candidates.has(at)) return at;
    at = await parent(at);
  }
  return undefined;
}
