/**
 * Re-entrancy: listeners and abort handlers that call back into the runtime (cancel, dispose)
 * while it is recording an event. Each invocation still ends exactly once, with nothing after its
 * terminal event, and the provider never runs for an invocation that was already cancelled.
 */
import { describe, expect, it } from 'vitest';
import type { ProviderOutput } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, kinds, provider, rejection, request, settle } from './helpers';

describe('cancel from a listener on accepted', () => {
  it('ends the invocation cancelled with nothing after it, and the provider is never called', async () => {
    const rt = new Runtime();
    const p = provider('uplink/test');
    rt.register(p);
    rt.subscribe((e) => {
      if (e.kind === 'accepted') void rt.cancel(e.invocation_id);
    });
    const req = request();
    await rt.start(req);
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'cancellation_requested', 'cancelled']);
    expect((await rt.get(req.invocation_id)).state).toBe('cancelled');
    expect(p.calls).toHaveLength(0);
  });

  it('on an asking policy, no approval is requested and a later grant runs nothing', async () => {
    const approval = deferred<{ granted: boolean }>();
    const rt = new Runtime({ policy: () => ({ kind: 'ask', approval: approval.promise }) });
    const p = provider('uplink/test');
    rt.register(p);
    rt.subscribe((e) => {
      if (e.kind === 'accepted') void rt.cancel(e.invocation_id);
    });
    const req = request();
    await rt.start(req);
    approval.resolve({ granted: true });
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'cancellation_requested', 'cancelled']);
    expect(p.calls).toHaveLength(0);
  });

  it('a dispose from a listener on accepted also stops the invocation before the provider runs', async () => {
    const rt = new Runtime();
    const p = provider('uplink/test');
    rt.register(p);
    rt.subscribe((e) => {
      if (e.kind === 'accepted') rt.dispose();
    });
    const req = request();
    await rt.start(req);
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'cancellation_requested', 'cancelled']);
    expect(p.calls).toHaveLength(0);
  });

  it('such an invocation is queued for eviction once, so the bound still holds', async () => {
    const rt = new Runtime({ maxRetained: 2 });
    rt.register(provider('uplink/test'));
    const stop = rt.subscribe((e) => {
      if (e.kind === 'accepted') void rt.cancel(e.invocation_id);
    });
    await rt.start(request({ invocation_id: 'x1' }));
    stop();
    for (const id of ['x2', 'x3', 'x4']) {
      await rt.start(request({ invocation_id: id }));
      await settle();
    }
    for (const id of ['x1', 'x2']) expect((await rejection(rt.get(id))).code).toBe('invocation_not_found');
    for (const id of ['x3', 'x4']) expect((await rt.get(id)).state).toBe('succeeded');
  });
});

describe('dispose re-entrancy', () => {
  it('an invocation a listener cancels while dispose is cancelling another is cancelled once', async () => {
    const rt = new Runtime();
    rt.register(provider('uplink/test', undefined, () => new Promise<ProviderOutput>(() => {})));
    const a = request();
    const b = request();
    await rt.start(a);
    await rt.start(b);
    rt.subscribe((e) => {
      if (e.invocation_id === a.invocation_id && e.kind === 'cancelled') void rt.cancel(b.invocation_id);
    });
    rt.dispose();
    expect(await kinds(rt, a.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
    expect(await kinds(rt, b.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
  });
});

describe('approvals nobody waits for', () => {
  /** Collects unhandled rejections while `body` runs (and a few ticks after). */
  async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      seen.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      await body();
      // A window: an unhandled rejection is reported a few ticks after the fact.
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    return seen;
  }

  it('an ask whose start is refused because the bound filled meanwhile leaves no unhandled rejection', async () => {
    const seen = await unhandledDuring(async () => {
      const gate = deferred<{ kind: 'ask'; approval: Promise<{ granted: boolean }> }>();
      let first = true;
      const rt = new Runtime({ maxRetained: 1, policy: () => (first ? ((first = false), gate.promise) : { kind: 'permit' }) });
      rt.register(provider('uplink/test', undefined, () => new Promise<ProviderOutput>(() => {})));
      const pending = rt.start(request());
      await rt.start(request());
      const approval = deferred<{ granted: boolean }>();
      gate.resolve({ kind: 'ask', approval: approval.promise });
      expect((await rejection(pending)).code).toBe('resource_exhausted');
      approval.reject(new Error('approval timed out'));
    });
    expect(seen).toEqual([]);
  });

  it('an ask decided after dispose is refused and its later rejection is handled', async () => {
    const seen = await unhandledDuring(async () => {
      const gate = deferred<{ kind: 'ask'; approval: Promise<{ granted: boolean }> }>();
      const rt = new Runtime({ policy: () => gate.promise });
      const p = provider('uplink/test');
      rt.register(p);
      const pending = rt.start(request());
      rt.dispose();
      const approval = deferred<{ granted: boolean }>();
      gate.resolve({ kind: 'ask', approval: approval.promise });
      expect((await rejection(pending)).code).toBe('internal');
      approval.reject(new Error('approval timed out'));
      expect(p.calls).toHaveLength(0);
    });
    expect(seen).toEqual([]);
  });
});

describe('policy re-entrancy', () => {
  it('a synchronous policy that starts the same id itself leaves one invocation under that id', async () => {
    let inner: Promise<unknown> | undefined;
    let nested = false;
    const rt: Runtime = new Runtime({
      policy: (ctx) => {
        if (!nested) {
          nested = true;
          inner = rt.start({ ...ctx.request }).then(
            () => 'ok',
            (e: { code: string }) => e.code,
          );
        }
        return { kind: 'permit' };
      },
    });
    const p = provider('uplink/test');
    rt.register(p);
    const req = request();
    const outer = await rt.start(req).then(
      () => 'ok',
      (e: { code: string }) => e.code,
    );
    await settle();
    expect([outer, await inner].sort()).toEqual(['duplicate_invocation', 'ok']);
    expect(p.calls).toHaveLength(1);
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'succeeded']);
  });
});
