/**
 * What the host keeps of a driver's traffic for the panel's debugger and `doctor`: the last
 * protocol messages (payloads masked and cut) and the last lines of its stderr. Both outlive a
 * restart, so what led to a crash is still there after it.
 */
import type { DriverTraceEntry } from '../../../shared/driver-status';
import type { RpcId } from './wire';

/** One protocol message as the trace keeps it: payloads masked and cut. */
export type TraceEntry = DriverTraceEntry;

export interface TraceFilter {
  method?: string;
  id?: RpcId;
  /** Only entries with a larger `seq` (polling). */
  after?: number;
  limit?: number;
}

const TRACE_ENTRIES = 1000;
const STDERR_LINES = 200;
export const STDERR_LINE_CHARS = 500;
/** The longest summary of one message the trace keeps. */
export const SUMMARY_CHARS = 512;

export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Args with the op's sensitive fields (and, under a `sensitive` flag, its text) masked. */
export function maskArgs(args: unknown, sensitive: readonly string[]): unknown {
  if (!isRecord(args)) return args;
  const all = 'sensitive' in args && args.sensitive !== false;
  if (!all && !sensitive.some((k) => k in args)) return args;
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, sensitive.includes(k) || (all && v !== null && typeof v !== 'boolean' && typeof v !== 'number') ? '••••' : v]),
  );
}

/** A trace entry whose summary may still be to write (see `Trace.record`). */
type Kept = Omit<TraceEntry, 'summary'> & { summary: string | (() => string) };

/** The protocol trace of one driver, bounded to its last 1000 messages (a ring: no copying as it turns). */
export class Trace {
  #ring: Kept[] = [];
  /** Where the oldest entry is once the ring is full. */
  #head = 0;
  #seq = 0;

  /**
   * Keeps a message. Its summary may be given as a function, written only when the trace is read
   * (most never are): for a small message only, as the function keeps what it summarizes alive.
   */
  record(entry: Omit<TraceEntry, 'seq' | 'at' | 'summary'> & { summary: string | (() => string) }): void {
    const kept = { seq: ++this.#seq, at: Date.now(), ...entry };
    if (this.#ring.length < TRACE_ENTRIES) this.#ring.push(kept);
    else {
      this.#ring[this.#head] = kept;
      this.#head = (this.#head + 1) % TRACE_ENTRIES;
    }
  }

  /** Oldest first, filtered. */
  list(filter: TraceFilter = {}): TraceEntry[] {
    const ordered = this.#head === 0 ? this.#ring : [...this.#ring.slice(this.#head), ...this.#ring.slice(0, this.#head)];
    const out: TraceEntry[] = [];
    for (const t of ordered) {
      if (filter.method !== undefined && t.method !== filter.method) continue;
      if (filter.id !== undefined && t.id !== filter.id) continue;
      if (filter.after !== undefined && t.seq <= filter.after) continue;
      if (typeof t.summary === 'function') t.summary = t.summary();
      out.push(t as TraceEntry);
    }
    return filter.limit !== undefined ? out.slice(-filter.limit) : out;
  }
}

/** The last 200 lines a driver wrote to stderr, each cut to 500 characters. */
export class StderrTail {
  #lines: string[] = [];

  add(line: string): void {
    this.#lines.push(cut(line.replace(/\r$/, ''), STDERR_LINE_CHARS));
    if (this.#lines.length > STDERR_LINES) this.#lines.splice(0, this.#lines.length - STDERR_LINES);
  }

  lines(): string[] {
    return [...this.#lines];
  }

  last(): string | undefined {
    return this.#lines.at(-1);
  }
}
