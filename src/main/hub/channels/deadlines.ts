/**
 * Many deadlines on one timer. Every driver call has a deadline, and nearly every call finishes
 * long before it; arming and clearing a `setTimeout` per call cost more than a no-op call itself
 * (a fresh timer list each time). One timer armed for the earliest deadline serves them all; it
 * keeps the process alive only while a deadline is pending.
 */
interface Entry {
  at: number;
  fire: () => void;
}

/** A set of deadlines sharing one timer. */
export class Deadlines {
  #entries = new Set<Entry>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #armedAt = Infinity;
  #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Calls `fire` once `ms` have passed, unless the returned function is called first. */
  add(ms: number, fire: () => void): () => void {
    const entry: Entry = { at: this.#now() + ms, fire };
    this.#entries.add(entry);
    if (entry.at < this.#armedAt) this.#arm(entry.at);
    else this.#timer?.ref();
    return () => {
      this.#entries.delete(entry);
      if (this.#entries.size === 0) this.#timer?.unref();
    };
  }

  /** How many deadlines are pending. */
  get size(): number {
    return this.#entries.size;
  }

  #arm(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, at - this.#now()));
  }

  #expire(): void {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = this.#now();
    let next = Infinity;
    for (const entry of [...this.#entries]) {
      if (entry.at <= now) {
        this.#entries.delete(entry);
        try {
          entry.fire();
        } catch {
          // One deadline's handler must not keep the others from firing.
        }
      } else if (entry.at < next) {
        next = entry.at;
      }
    }
    if (next < Infinity) this.#arm(next);
  }
}
