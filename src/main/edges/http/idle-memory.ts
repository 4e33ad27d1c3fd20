/**
 * Gives a burst's memory back once the hub goes quiet. Under many agents at once, objects of calls
 * in flight outlive the young generation and are promoted, so V8's old space grows to several
 * times what stays alive, and keeps those pages afterwards (a full GC frees the objects but does
 * not move the survivors off sparse pages). After a busy period, the second quiet one in a row runs
 * a compacting full GC (a pause of tens to a few hundred milliseconds, taken while nothing is asked
 * of the hub), and each quiet period after it another, until V8 has given the young generation
 * back too: then the resident set is near what it was before the burst, 10–15 s after it.
 */
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the event loop's load is looked at. */
const PERIOD_MS = 3000;
/**
 * Quiet periods in a row before the compaction: right after a burst its connections are still
 * open (an HTTP keep-alive socket closes 5 s after its last request) and what they hold is still
 * alive, so a compaction then kept twice the heap. The first compaction comes 6–12 s after a burst
 * ends (the period it ended in may be neither busy nor quiet).
 */
const QUIET_PERIODS = 2;
/** Busier than this share of a period: a burst, whose garbage is worth compacting once it ends. */
const BUSY = 0.2;
/** Quieter than this share of a period: idle. */
const QUIET = 0.02;

export interface IdleMemoryOptions {
  periodMs?: number;
  /** The event loop's busy share since the previous call (the process's own by default). */
  utilization?: () => number;
  /** Runs the compacting GC (V8's own by default); false when the heap is not back yet (tried again next period). */
  compact?: () => boolean;
}

/** Compactions after one burst, at most: one per quiet period until the heap is back. */
const MAX_TRIES = 5;
/** The young generation is back once it is this small (it grows to 32 MiB under load). */
const NEW_SPACE_SETTLED = 8 * 1024 * 1024;

/** Watches the event loop; after a busy period, compacts the heap once it has been quiet twice. Returns the stop. */
export function compactWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const utilization = options.utilization ?? loopUtilization();
  const compact = options.compact ?? compactHeap;
  const period = options.periodMs ?? PERIOD_MS;
  let burst = false;
  let quiet = 0;
  let tries = 0;
  /** How long the last compaction took: its own time is not the hub's load (a retry waits for none). */
  let spent = 0;
  const timer = setInterval(() => {
    const busy = Math.max(0, utilization() - spent / period);
    spent = 0;
    quiet = busy <= QUIET ? quiet + 1 : 0;
    if (busy >= BUSY) {
      burst = true;
      tries = 0;
    } else if (burst && quiet >= QUIET_PERIODS) {
      tries++;
      const start = performance.now();
      const back = compact();
      spent = performance.now() - start;
      if (back || tries >= MAX_TRIES) burst = false;
    }
  }, period);
  timer.unref?.();
  return () => clearInterval(timer);
}

function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

let gc: (() => void) | null | undefined;

/**
 * Two full GCs with compaction on (the second frees what the first emptied), or nothing where V8
 * refuses. Whether the heap is back: V8 gives the young generation's pages back only in a full GC
 * that finds the allocation rate low, which it did not always find until ~10 s after a long burst.
 */
function compactHeap(): boolean {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  if (!gc) return true;
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  return !young || young.space_size <= NEW_SPACE_SETTLED;
}
