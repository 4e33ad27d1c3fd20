import { once, EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ProviderOutput } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, provider, request } from './helpers';

/** A runtime whose provider hands its signal to `use` and then waits on a gate. */
function withSignal(use: (signal: AbortSignal) => void = () => undefined) {
  const gate = deferred<ProviderOutput>();
  const rt = new Runtime();
  const p = provider('uplink/test', undefined, (_call, signal) => {
    use(signal);
    return gate.promise;
  });
  rt.register(p);
  return { rt, p, gate };
}

describe("the provider's signal (made on first use)", () => {
  it('is an AbortSignal that Node APIs take, and a cancel reaches them', async () => {
    const seen: unknown[] = [];
    const { rt } = withSignal((signal) => {
      seen.push(signal instanceof AbortSignal, signal.aborted);
      seen.push(sleep(60_000, 'late', { signal }).catch((e: Error) => e.name));
      seen.push(once(new EventEmitter(), 'never', { signal }).catch((e: Error) => e.name));
      seen.push(AbortSignal.any([signal]));
      signal.addEventListener('abort', () => seen.push('listener'), { once: true });
    });
    const req = request();
    await rt.start(req);
    await rt.cancel(req.invocation_id);
    const [isSignal, abortedBefore, timer, emitter, any] = seen as [boolean, boolean, Promise<string>, Promise<string>, AbortSignal];
    expect([isSignal, abortedBefore]).toEqual([true, false]);
    expect([await timer, await emitter, any.aborted]).toEqual(['AbortError', 'AbortError', true]);
    expect(seen).toContain('listener');
  });

  it('first looked at after a cancel, it is already aborted with an AbortError', async () => {
    const { rt, p } = withSignal();
    const req = request();
    await rt.start(req);
    await rt.cancel(req.invocation_id);
    const signal = p.signals[0]!;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('AbortError');
    expect(() => signal.throwIfAborted()).toThrow();
  });

  it("first looked at after the provider's own abort, it carries that reason", async () => {
    const reason = new Error('deadline');
    const rt = new Runtime();
    const p = provider('uplink/test', undefined, async (call) => {
      call.abort!(reason);
      call.abort!(new Error('second'));
      return { output: { text: 'x' } };
    });
    rt.register(p);
    const req = request();
    await rt.start(req);
    await rt.wait(req.invocation_id);
    expect(p.signals[0]!.reason).toBe(reason);
  });

  it('a signal nobody looked at stays unaborted after success', async () => {
    const { rt, p, gate } = withSignal();
    const req = request();
    await rt.start(req);
    gate.resolve({ output: { text: 'done' } });
    await rt.wait(req.invocation_id);
    await rt.cancel(req.invocation_id);
    expect(p.signals[0]!.aborted).toBe(false);
  });
});
