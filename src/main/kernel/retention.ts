/**
 * The retained invocations and the retention bound (docs/kernel.md, guarantee 9): at the bound the
 * invocation that became terminal longest ago is evicted; active ones never are, and when every
 * retained invocation is active a start fails closed with `resource_exhausted`.
 */
import type { Invocation } from './invocation';
import { exhaustedError, notFoundError } from './messages';

/** Retained invocations by id, plus the eviction queue. */
export class Retention {
  readonly #max: number;
  readonly #byId = new Map<string, Invocation>();
  /**
   * Terminal invocations, oldest-finished first, as an array queue from `#head`. Not a Set:
   * iterating a Set from the front after many deletes walks the deleted slots (O(bound)).
   */
  #terminals: Array<Invocation | undefined> = [];
  #head = 0;

  constructor(max: number) {
    this.#max = max;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The retained invocation, or `invocation_not_found`. */
  find(id: string): Invocation {
    const inv = this.#byId.get(id);
    if (inv === undefined) throw notFoundError(id);
    return inv;
  }

  /** Throws `resource_exhausted` when a new invocation could not be retained now. */
  check(): void {
    if (this.#byId.size >= this.#max && this.#terminals[this.#head] === undefined) throw exhaustedError(this.#max);
  }

  /** Retains a new invocation, evicting the oldest terminal one at the bound (or throwing). */
  add(inv: Invocation): void {
    if (this.#byId.size >= this.#max) {
      const oldest = this.#terminals[this.#head];
      if (oldest === undefined) throw exhaustedError(this.#max);
      this.#terminals[this.#head++] = undefined;
      if (this.#head >= 1024 && this.#head * 2 >= this.#terminals.length) {
        this.#terminals = this.#terminals.slice(this.#head);
        this.#head = 0;
      }
      this.#byId.delete(oldest.id);
    }
    this.#byId.set(inv.id, inv);
  }

  /** Records that `inv` just reached its terminal state (it joins the eviction queue). */
  terminated(inv: Invocation): void {
    this.#terminals.push(inv);
  }

  /** Every retained invocation that is still active. */
  active(): Invocation[] {
    return [...this.#byId.values()].filter((inv) => !inv.terminal);
  }
}
