/**
 * Gives a burst's memory back once the hub goes quiet. Under many agents at once, objects of calls
 * in flight outlive the young generation and are promoted, so V8's old space grows to several
 * times what stays alive, and keeps those pages afterwards (a full GC frees the objects but does
 * not move the survivors off sparse pages). After a busy period, the first quiet one runs one
 * compacting full GC: a pause of tens to a few hundred milliseconds, taken while nothing is asked
 * of the hub, after which the resident set is near what it was before the burst.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often the event loop's load is looked at. */
const PERIOD_MS = 5000;
/** Busier than this share of a period: a burst, whose garbage is worth compacting once it ends. */
const BUSY = 0.2;
/** Quieter than this share of a period: idle. */
const QUIET = 0.02;

export interface IdleMemoryOptions {
  periodMs?: number;
  /** The event loop's busy share since the previous call (the process's own by default). */
  utilization?: () => number;
  /** Runs the compacting GC (V8's own by default). */
  compact?: () => void;
}

/** Watches the event loop; after a busy period, compacts the heap in the first quiet one. Returns the stop. */
export function compactWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const utilization = options.utilization ?? loopUtilization();
  const compact = options.compact ?? compactHeap;
  let burst = false;
  const timer = setInterval(() => {
    const busy = utilization();
    if (busy >= BUSY) burst = true;
    else if (burst && busy <= QUIET) {
      burst = false;
      compact();
    }
  }, options.periodMs ?? PERIOD_MS);
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

/** Two full GCs with compaction on (the second frees what the first emptied), or nothing where V8 refuses. */
function compactHeap(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  if (!gc) return;
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
