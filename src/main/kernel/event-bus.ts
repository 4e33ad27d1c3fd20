/**
 * Delivers runtime events to listeners through one queue: an event caused by a listener (say, a
 * cancel on `started`) is delivered after the current one, so every listener sees each
 * invocation's events in sequence order, each with the invocation's context. A throwing listener
 * is isolated from the rest.
 */
import type { Invocation } from './invocation';
import type { RuntimeEvent, RuntimeListener } from './types';

/** The runtime's listener list and delivery queue. */
export class EventBus {
  #listeners: RuntimeListener[] = [];
  readonly #queue: RuntimeEvent[] = [];
  /** The context of each queued event's invocation, at the same index. */
  readonly #contexts: unknown[] = [];
  #dispatching = false;

  /** Adds a listener; returns its idempotent remover. */
  subscribe(listener: RuntimeListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('subscribe needs a listener function');
    this.#listeners = [...this.#listeners, listener]; // copy-on-write: delivery iterates a stable array
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  /** Queues the invocation's latest event (built only when someone listens). */
  enqueue(inv: Invocation, hasExtra: boolean): void {
    if (this.#listeners.length === 0) return;
    this.#queue.push(inv.lastEvent(hasExtra));
    this.#contexts.push(inv.context);
  }

  /** Delivers everything queued, unless a delivery is already under way further up the stack. */
  flush(): void {
    if (this.#dispatching) return;
    this.#dispatching = true;
    try {
      for (let i = 0; i < this.#queue.length; i++) {
        const event = this.#queue[i]!;
        const context = this.#contexts[i];
        for (const listener of this.#listeners) {
          try {
            listener(event, context);
          } catch {
            // A broken listener must not break the runtime or starve the other listeners.
          }
        }
      }
    } finally {
      this.#queue.length = 0;
      this.#contexts.length = 0;
      this.#dispatching = false;
    }
  }
}
