/**
 * Waiting on a pane: for an injected token to appear (send's delivery check) and for the pane to
 * go quiet (await-idle). `%output` events from control mode wake the waits at once; periodic
 * captures are the ground truth and the fallback when there are no events (one-shot mode).
 * A redraw in place (a spinner) changes the screen hash or produces `%output`: both are activity.
 */
import { createHash } from 'node:crypto';
import { DriverError } from '../contract';

/** What the waits need from the driver. */
export interface PaneProbe {
  /** The pane's visible screen plus `lines` of history, wrapped lines joined. */
  capture(lines: number): Promise<string[]>;
  /**
   * `capture(5)` and, in the same instant, Enter pressed by tmux itself if `token` is on a row of
   * the visible screen; undefined when it cannot be done in one step (the caller captures, then
   * presses Enter itself).
   */
  captureAndSubmit?(token: string): Promise<{ lines: string[]; submitted: boolean } | undefined>;
  /** A cheap state string (history size, cursor) that changes with any scroll. */
  state(): Promise<string>;
  /** Subscribes to the pane's `%output`; undefined when control mode is unavailable. */
  watch(listener: () => void): Promise<(() => void) | undefined>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A wake-up signal fed by `%output`: `next(ms)` resolves on the next event or after `ms`. Plain
 * callbacks, no AbortController: aborting builds an exception with a stack trace, which cost more
 * than the rest of the wake-up.
 */
class Waker {
  #wake: (() => void) | undefined;
  #fired = false;
  fire = (): void => {
    this.#fired = true;
    this.#wake?.();
  };
  /** Forgets an event that came before now. */
  clear = (): void => {
    this.#fired = false;
  };
  next(ms: number): Promise<void> {
    if (this.#fired) {
      this.#fired = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = undefined;
        this.#fired = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

/** The outcome of waiting for a token; `submitted`: tmux pressed Enter as it saw the token. */
export type TokenResult = { found: true; line: string; submitted: boolean } | { found: false; tail: string };

/**
 * Runs `inject` (typing the token), then waits until a captured line contains `token`, or the
 * deadline passes (then: the last tail). The pane's `%output` is watched from before the typing,
 * so its echo cannot slip past: with events, the first capture waits for one (a capture taken
 * before the echo is a wasted round trip); without, captures poll. `inject` calls `replied` as
 * the typing's reply is read: output before it (the tail of what the pane printed earlier)
 * cannot be the echo, which tmux reads from the pane only after the command ran. Each capture
 * goes with `captureAndSubmit` when the probe has it, so a token on screen is submitted then.
 */
export async function waitForToken(
  probe: PaneProbe,
  token: string,
  timeoutMs: number,
  pollMs: number,
  inject: (replied: () => void) => Promise<unknown>,
): Promise<TokenResult> {
  const waker = new Waker();
  const unwatch = await probe.watch(waker.fire);
  let lines: string[] = [];
  try {
    await inject(waker.clear);
    const deadline = Date.now() + timeoutMs;
    if (unwatch) await waker.next(Math.min(pollMs * 4, timeoutMs));
    for (;;) {
      const step = await probe.captureAndSubmit?.(token);
      lines = step ? step.lines : await probe.capture(5);
      const hit = lines.find((l) => l.includes(token));
      // tmux finds the token only on a row of what the capture holds, so a submit comes with a hit.
      if (hit !== undefined || step?.submitted) return { found: true, line: hit?.trim() ?? '', submitted: step?.submitted ?? false };
      if (Date.now() >= deadline) break;
      await waker.next(Math.min(unwatch ? pollMs * 4 : pollMs, Math.max(1, deadline - Date.now())));
    }
  } finally {
    unwatch?.();
  }
  return { found: false, tail: lastLines(lines, 5) };
}

/** The last `n` non-empty lines, trimmed at the end, at most 400 characters. */
export function lastLines(lines: readonly string[], n: number): string {
  const kept = [...lines];
  while (kept.length && kept[kept.length - 1]!.trim() === '') kept.pop();
  const text = kept
    .slice(-n)
    .map((l) => l.trimEnd())
    .join('\n');
  return text.length > 400 ? text.slice(-400) : text;
}

/**
 * Resolves true once the pane has been unchanged for `quietMs` (no `%output`, same screen hash,
 * same history size and cursor), false when `timeoutMs` passes first. Rejects on abort.
 */
export async function awaitIdle(probe: PaneProbe, quietMs: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  let lastActivity = Date.now();
  const unwatch = await probe.watch(() => {
    lastActivity = Date.now();
  });
  const start = Date.now();
  // Without events, sample faster and with jitter, so a spinner cannot alias to one frame.
  const basePollMs = Math.max(25, Math.min(unwatch ? 250 : 100, Math.floor(quietMs / 4)));
  let lastHash = '';
  try {
    for (;;) {
      if (signal?.aborted) throw new DriverError('Timeout', 'cancelled while waiting for the pane to go quiet');
      const hash = createHash('sha1')
        .update(await probe.state())
        .update('\u0000')
        .update((await probe.capture(0)).join('\n'))
        .digest('hex');
      const now = Date.now();
      if (hash !== lastHash) {
        if (lastHash !== '') lastActivity = now;
        lastHash = hash;
      }
      if (now - lastActivity >= quietMs) return true;
      if (now - start >= timeoutMs) return false;
      const untilQuiet = quietMs - (now - lastActivity);
      const pollMs = unwatch ? basePollMs : basePollMs * (0.7 + Math.random() * 0.6);
      await sleep(Math.max(1, Math.min(pollMs, untilQuiet, timeoutMs - (now - start))), signal);
    }
  } finally {
    unwatch?.();
  }
}
