/**
 * A provider's abort signal, made only when someone looks at it. On Node 20 creating an
 * `AbortSignal` costs about 2 µs (the runtime sets an EventTarget's prototype), more than the rest
 * of a no-op invocation, and most providers (a screen read, a no-op) never touch theirs. So the
 * provider gets a proxy that stands for the signal: the first time anything reads, writes or
 * inspects it, the real `AbortController` is made (already aborted, with its reason, if the
 * invocation was cancelled meanwhile) and every operation is forwarded to its signal. Node's own
 * APIs accept it (timers, events, child_process, `AbortSignal.any`); `instanceof AbortSignal`
 * holds. One difference remains: an abort event's `target` is the real signal, not the proxy.
 */

/** The abort side of one invocation's signal; `signal` is what the provider receives. */
export class LazyAbort {
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #reason: unknown = undefined;
  readonly signal: AbortSignal;

  constructor() {
    this.signal = new Proxy(this, FORWARD) as unknown as AbortSignal;
  }

  /** The real signal, made on first use. */
  real(): AbortSignal {
    let controller = this.#controller;
    if (controller === undefined) {
      controller = this.#controller = new AbortController();
      if (this.#aborted) controller.abort(this.#reason);
    }
    return controller.signal;
  }

  /** Aborts the signal (the first reason wins, as with `AbortController`). */
  abort(reason?: unknown): void {
    if (this.#controller !== undefined) {
      this.#controller.abort(reason);
      return;
    }
    if (this.#aborted) return;
    this.#aborted = true;
    // What AbortController.abort() would put there: an AbortError.
    this.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
  }
}

/** Every trap forwards to the real signal, so the proxy behaves as the signal itself. */
const FORWARD: ProxyHandler<LazyAbort> = {
  get: (t, key) => Reflect.get(t.real(), key),
  set: (t, key, value) => Reflect.set(t.real(), key, value),
  has: (t, key) => Reflect.has(t.real(), key),
  deleteProperty: (t, key) => Reflect.deleteProperty(t.real(), key),
  defineProperty: (t, key, descriptor) => Reflect.defineProperty(t.real(), key, descriptor),
  getOwnPropertyDescriptor: (t, key) => Reflect.getOwnPropertyDescriptor(t.real(), key),
  ownKeys: (t) => Reflect.ownKeys(t.real()),
  getPrototypeOf: () => AbortSignal.prototype,
  setPrototypeOf: () => false,
  // Freezing or sealing the signal is not supported (a proxy's target would have to follow).
  preventExtensions: () => false,
};
