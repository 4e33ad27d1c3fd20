/** Helpers shared by the action modules. */
import { useStore } from '../store';
import type { Loadable } from '../store';

export const set = useStore.setState;
export const get = useStore.getState;
export const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Shows a short message; errors stay longer. */
export function toast(kind: 'info' | 'error', text: string): void {
  const id = Date.now() + Math.random();
  set((s) => ({ toasts: [...s.toasts.slice(-4), { id, kind, text }] }));
  setTimeout(() => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })), kind === 'error' ? 8000 : 3000);
}

/** Runs a call into a Loadable in the store. */
export async function load<T>(write: (l: Loadable<T>) => void, read: () => Loadable<T> | undefined, call: () => Promise<T>): Promise<T | undefined> {
  write({ ...(read() ?? {}), loading: true, error: undefined });
  try {
    const data = await call();
    write({ data, loading: false });
    return data;
  } catch (error) {
    write({ ...(read() ?? {}), loading: false, error: message(error) });
    return undefined;
  }
}

/** Live items applied together about once a frame, so a burst costs one store update. */
export interface FrameBatch<T> {
  push(item: T): void;
  /** Applies what is buffered now. */
  flush(): void;
  /** Drops what is buffered (on dispose). */
  discard(): void;
}

export function frameBatch<T>(apply: (batch: T[]) => void): FrameBatch<T> {
  let buffer: T[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  const flush = (): void => {
    stop();
    const batch = buffer;
    buffer = [];
    if (batch.length) apply(batch);
  };
  return {
    push(item) {
      buffer.push(item);
      timer ??= setTimeout(flush, 16);
    },
    flush,
    discard() {
      stop();
      buffer = [];
    },
  };
}
