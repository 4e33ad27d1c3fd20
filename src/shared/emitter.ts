/**
 * The one way Uplink tells listeners of something (config reloaded, a prompt added, an audit
 * entry, a driver's state, a panel event). It lives in src/shared, the only folder every layer
 * may import (the drivers, the hub, the edges, the preload and the renderer); the kernel keeps its
 * own bus, since it imports nothing of ours.
 */

/** Stops a listener from hearing; calling it again does nothing. */
export type Disposer = () => void;

/**
 * Listeners of one kind of value. A listener that throws keeps no other from hearing and never
 * reaches the emitter's caller (a config reload, a driver's read loop); `onError` sees what it
 * threw. Each `on` is its own subscription, even of a function already listening.
 */
export class Emitter<T> {
  readonly #listeners = new Set<{ listener: (value: T) => void }>();
  readonly #onError: ((error: unknown) => void) | undefined;

  constructor(options: { onError?: (error: unknown) => void } = {}) {
    this.#onError = options.onError;
  }

  /** Calls `listener` with every value emitted from now until the returned disposer is called. */
  on(listener: (value: T) => void): Disposer {
    const entry = { listener };
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Tells every listener, in the order they subscribed; one disposed meanwhile is not told. */
  emit(value: T): void {
    if (this.#listeners.size === 0) return;
    for (const entry of [...this.#listeners]) {
      if (!this.#listeners.has(entry)) continue;
      try {
        entry.listener(value);
      } catch (error) {
        try {
          this.#onError?.(error);
        } catch {
          // A failing error report is no reason to stop telling the others.
        }
      }
    }
  }

  /** How many subscriptions are live. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Drops every subscription. */
  clear(): void {
    this.#listeners.clear();
  }
}
