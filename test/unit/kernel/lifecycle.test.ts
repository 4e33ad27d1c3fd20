import { describe, expect, it } from 'vitest';
import type { PolicyDecision, ProviderOutput, RuntimeEvent } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, kinds, provider, rejection, request, settle, spec } from './helpers';

/** A runtime whose provider waits on a gate per call (and records its abort). */
function gated(maxRetained?: number) {
  const gates: Array<ReturnType<typeof deferred<ProviderOutput>>> = [];
  const rt = new Runtime({ maxRetained });
  const p = provider('uplink/test', undefined, () => {
    const gate = deferred<ProviderOutput>();
    gates.push(gate);
    return gate.promise;
  });
  rt.register(p);
  return { rt, p, gates };
}

describe('cancel', () => {
  it('aborts the provider signal and records cancellation_requested then cancelled', async () => {
    const { rt, p } = gated();
    const req = request();
    await rt.start(req);
    const snap = await rt.cancel(req.invocation_id);
    expect(p.signals[0]!.aborted).toBe(true);
    expect(snap).toMatchObject({ state: 'cancelled', last_event_sequence: 4 });
    expect(snap.result).toBeUndefined();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
  });

  it("the provider's late result after a cancel is ignored", async () => {
    const { rt, gates } = gated();
    const req = request();
    await rt.start(req);
    await rt.cancel(req.invocation_id);
    gates[0]!.resolve({ output: { text: 'late' } });
    await settle();
    expect((await rt.get(req.invocation_id)).state).toBe('cancelled');
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
  });

  it('a provider that finished first keeps its terminal state; cancel returns the snapshot unchanged', async () => {
    const { rt, p, gates } = gated();
    const req = request();
    await rt.start(req);
    gates[0]!.resolve({ output: { text: 'done' } });
    await settle();
    const before = await rt.get(req.invocation_id);
    const after = await rt.cancel(req.invocation_id);
    expect(after).toEqual(before);
    expect(after.state).toBe('succeeded');
    expect(p.signals[0]!.aborted).toBe(false);
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'succeeded']);
  });

  it('cancelling twice records one cancellation', async () => {
    const { rt } = gated();
    const req = request();
    await rt.start(req);
    await Promise.all([rt.cancel(req.invocation_id), rt.cancel(req.invocation_id)]);
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
  });

  it("a provider's own abort (its deadline) aborts its signal with the reason; the outcome stays the provider's, with no cancellation", async () => {
    const reason = new Error('deadline');
    const rt = new Runtime();
    const p = provider('uplink/test', undefined, async (call) => {
      call.abort!(reason);
      throw new Error('too slow');
    });
    rt.register(p);
    const req = request();
    await rt.start(req);
    const last = await rt.wait(req.invocation_id);
    expect(p.signals[0]!.aborted).toBe(true);
    expect(p.signals[0]!.reason).toBe(reason);
    expect(last).toMatchObject({ state: 'failed', error: { code: 'provider_failed' } });
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'failed']);
  });

  it('a listener that cancels on started stops the invocation before the provider is called', async () => {
    const { rt, p } = gated();
    rt.subscribe((e) => {
      if (e.kind === 'started') void rt.cancel(e.invocation_id);
    });
    const req = request();
    await rt.start(req);
    expect(p.calls).toHaveLength(0);
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
  });
});

describe('retention', () => {
  it('maxRetained must be a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '10' as never]) expect(() => new Runtime({ maxRetained: bad })).toThrow(/maxRetained/);
    expect(() => new Runtime({ maxRetained: 1 })).not.toThrow();
  });

  it('at the bound the oldest terminal invocation is evicted', async () => {
    const rt = new Runtime({ maxRetained: 3 });
    rt.register(provider('uplink/test'));
    const ids = ['a1', 'a2', 'a3', 'a4'];
    for (const id of ids.slice(0, 3)) await rt.start(request({ invocation_id: id }));
    await settle();
    await rt.start(request({ invocation_id: 'a4' }));
    await settle();
    expect((await rejection(rt.get('a1'))).code).toBe('invocation_not_found');
    for (const id of ['a2', 'a3', 'a4']) expect((await rt.get(id)).state).toBe('succeeded');
  });

  it('active invocations are never evicted: the oldest terminal one goes instead', async () => {
    const { rt, gates } = gated(3);
    await rt.start(request({ invocation_id: 'active-1' }));
    await rt.start(request({ invocation_id: 'done-2' }));
    await rt.start(request({ invocation_id: 'done-3' }));
    gates[1]!.resolve({ output: { text: 'x' } });
    gates[2]!.resolve({ output: { text: 'x' } });
    await settle();
    await rt.start(request({ invocation_id: 'new-4' }));
    expect((await rt.get('active-1')).state).toBe('running');
    expect((await rejection(rt.get('done-2'))).code).toBe('invocation_not_found');
    expect((await rt.get('done-3')).state).toBe('succeeded');
  });

  it('when every retained invocation is active, start fails closed with retryable resource_exhausted', async () => {
    const { rt, p, gates } = gated(2);
    await rt.start(request());
    await rt.start(request());
    const req = request();
    const e = await rejection(rt.start(req));
    expect(e).toMatchObject({ code: 'resource_exhausted', retryable: true });
    expect(p.calls).toHaveLength(2);
    expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
    gates[0]!.resolve({ output: { text: 'x' } });
    await settle();
    await expect(rt.start(req)).resolves.toBeDefined();
  });

  it('the default bound is 10,000 retained invocations', async () => {
    const rt = new Runtime({ policy: () => ({ kind: 'ask', approval: new Promise(() => {}) }) });
    const p = provider('uplink/test');
    rt.register(p);
    for (let i = 0; i < 10_000; i++) await rt.start(request());
    const req = request();
    expect((await rejection(rt.start(req))).code).toBe('resource_exhausted');
    expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
    expect(p.calls).toHaveLength(0);
  });

  it('a start whose async policy permits after the bound filled up meanwhile is resource_exhausted and calls nothing', async () => {
    const gate = deferred<PolicyDecision>();
    let first = true;
    const rt = new Runtime({ maxRetained: 1, policy: () => (first ? ((first = false), gate.promise) : { kind: 'permit' }) });
    const p = provider('uplink/test', undefined, () => new Promise(() => {}));
    rt.register(p);
    const slow = request();
    const pending = rt.start(slow);
    await rt.start(request()); // takes the only slot and stays active
    gate.resolve({ kind: 'permit' });
    const e = await rejection(pending);
    expect(e).toMatchObject({ code: 'resource_exhausted', retryable: true });
    expect(p.calls).toHaveLength(1);
    expect((await rejection(rt.get(slow.invocation_id))).code).toBe('invocation_not_found');
  });

  it('invocations waiting for approval count as active', async () => {
    const rt = new Runtime({ maxRetained: 1, policy: () => ({ kind: 'ask', approval: new Promise(() => {}) }) });
    rt.register(provider('uplink/test'));
    await rt.start(request());
    expect((await rejection(rt.start(request()))).code).toBe('resource_exhausted');
  });
});

describe('subscribe', () => {
  it('listeners see every event of every invocation live and in order', async () => {
    const { rt, gates } = gated();
    const seen: RuntimeEvent[] = [];
    rt.subscribe((e) => seen.push(e));
    const a = request();
    const b = request();
    await rt.start(a);
    await rt.start(b);
    gates[1]!.resolve({ output: { text: 'b' } });
    await settle();
    await rt.cancel(a.invocation_id);
    expect(seen.map((e) => `${e.invocation_id === a.invocation_id ? 'a' : 'b'}${e.sequence}:${e.kind}`)).toEqual([
      'a1:accepted',
      'a2:started',
      'b1:accepted',
      'b2:started',
      'b3:succeeded',
      'a3:cancellation_requested',
      'a4:cancelled',
    ]);
    const replay = [...(await rt.events(a.invocation_id)).events, ...(await rt.events(b.invocation_id)).events];
    for (const e of seen) expect(replay.find((r) => r.invocation_id === e.invocation_id && r.sequence === e.sequence)).toEqual(e);
  });

  it('a throwing listener does not break the runtime or starve other listeners', async () => {
    const rt = new Runtime();
    rt.register(provider('uplink/test'));
    const seen: string[] = [];
    rt.subscribe(() => {
      throw new Error('listener bug');
    });
    rt.subscribe((e) => seen.push(e.kind));
    const req = request();
    await rt.start(req);
    await settle();
    expect(seen).toEqual(['accepted', 'started', 'succeeded']);
    expect((await rt.get(req.invocation_id)).state).toBe('succeeded');
  });

  it('unsubscribe stops delivery and is idempotent', async () => {
    const rt = new Runtime();
    rt.register(provider('uplink/test'));
    const seen: string[] = [];
    const stop = rt.subscribe((e) => seen.push(e.kind));
    stop();
    stop();
    await rt.start(request());
    await settle();
    expect(seen).toEqual([]);
  });

  it('events caused by a listener are delivered after the current one, keeping per-invocation order', async () => {
    const { rt } = gated();
    const order: string[] = [];
    rt.subscribe((e) => {
      order.push(`first ${e.sequence}:${e.kind}`);
      if (e.kind === 'started') void rt.cancel(e.invocation_id);
    });
    rt.subscribe((e) => order.push(`second ${e.sequence}:${e.kind}`));
    await rt.start(request());
    expect(order).toEqual([
      'first 1:accepted',
      'second 1:accepted',
      'first 2:started',
      'second 2:started',
      'first 3:cancellation_requested',
      'second 3:cancellation_requested',
      'first 4:cancelled',
      'second 4:cancelled',
    ]);
  });
});

describe('dispose', () => {
  it('aborts every active provider, ends them cancelled and refuses new work', async () => {
    const { rt, p } = gated();
    const a = request();
    const b = request();
    await rt.start(a);
    await rt.start(b);
    rt.dispose();
    expect(p.signals.map((s) => s.aborted)).toEqual([true, true]);
    expect((await rt.get(a.invocation_id)).state).toBe('cancelled');
    expect(await kinds(rt, b.invocation_id)).toEqual(['accepted', 'started', 'cancellation_requested', 'cancelled']);
    const e = await rejection(rt.start(request()));
    expect(e).toMatchObject({ code: 'internal', retryable: false });
    expect(() => rt.register(provider('other', [{ spec: spec({ id: 'x.y' }), interactions: ['typed'] }]))).toThrow(/shut down/);
    expect(() => rt.dispose()).not.toThrow();
  });

  it('a start whose policy was still deciding at dispose is refused, and nothing is retained', async () => {
    const gate = deferred<{ kind: 'permit' }>();
    const rt = new Runtime({ policy: () => gate.promise });
    const p = provider('uplink/test');
    rt.register(p);
    const req = request();
    const pending = rt.start(req);
    rt.dispose();
    gate.resolve({ kind: 'permit' });
    expect((await rejection(pending)).code).toBe('internal');
    expect(p.calls).toHaveLength(0);
    expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
  });

  it('invocations waiting for approval are cancelled by dispose', async () => {
    const rt = new Runtime({ policy: () => ({ kind: 'ask', approval: new Promise(() => {}) }) });
    rt.register(provider('uplink/test'));
    const req = request();
    await rt.start(req);
    rt.dispose();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'approval_requested', 'cancellation_requested', 'cancelled']);
  });
});

describe('options', () => {
  it('rejects malformed options synchronously', () => {
    expect(() => new Runtime({ policy: 'permit' as never })).toThrow(/policy/);
    expect(() => new Runtime({ now: 5 as never })).toThrow(/now/);
    expect(() => new Runtime({ onDiagnostic: {} as never })).toThrow(/onDiagnostic/);
  });

  it('a throwing onDiagnostic does not change the outcome', async () => {
    const rt = new Runtime({
      onDiagnostic: () => {
        throw new Error('log down');
      },
    });
    rt.register(
      provider('uplink/test', undefined, async () => {
        throw new Error('x');
      }),
    );
    const req = request();
    await rt.start(req);
    await settle();
    expect((await rt.get(req.invocation_id)).error?.code).toBe('provider_failed');
  });
});
