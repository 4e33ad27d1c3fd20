/**
 * The retained invocations and the retention bound (docs/kernel.md, guarantee 9): at the bound the
 * invocation that became terminal longest ago is evicted; active ones never are, and when every
 * retained invocation is active a start fails closed with `resource_exhausted`. A host may also
 * release a terminal invocation it is done with (`Runtime.release`), so memory follows its need
 * rather than the bound.
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
    if (this.#byId.size >= this.#max && this.#oldest() === undefined) throw exhaustedError(this.#max);
  }

  /** Retains a new invocation, evicting the oldest terminal one at the bound (or throwing). */
  add(inv: Invocation): void {
    if (this.#byId.size >= this.#max) {
      const oldest = this.#oldest();
      if (oldest === undefined) throw exhaustedError(this.#max);
      this.#pop();
      this.#byId.delete(oldest.id);
    }
    this.#byId.set(inv.id, inv);
  }

  /**
   * Forgets a terminal invocation (the caller checked it is one). Its queue slot is dropped lazily:
   * at the head at once, elsewhere when released slots outnumber the retained invocations, so the
   * queue stays proportional to what is retained.
   */
  release(inv: Invocation): void {
    this.#byId.delete(inv.id);
    inv.released = true;
    inv.output = undefined;
    this.#oldest();
    if (this.#terminals.length - this.#head > 2 * this.#byId.size + 1024) {
      this.#terminals = this.#terminals.slice(this.#head).filter((t) => t !== undefined && !t.released);
      this.#head = 0;
    }
  }

  /** Records that `inv` just reached its terminal state (it joins the eviction queue). */
  terminated(inv: Invocation): void {
    this.#terminals.push(inv);
  }

  /** The oldest terminal invocation still retained (released ones at the head are dropped). */
  #oldest(): Invocation | undefined {
    let inv = this.#terminals[this.#head];
    while (inv?.released) {
      this.#pop();
      inv = this.#terminals[this.#head];
    }
    return inv;
  }

  #pop(): void {
    this.#terminals[this.#head++] = undefined;
    if (this.#head >= 1024 && this.#head * 2 >= this.#terminals.length) {
      this.#terminals = this.#terminals.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Every retained invocation that is still active. */
  active(): Invocation[] {
    return [...this.#byId.values()].filter((inv) => !inv.terminal);
  }
}
