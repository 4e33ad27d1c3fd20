/**
 * The host side of the runtime (Uplink extensions): waiting for an invocation's terminal
 * snapshot, releasing a finished invocation so memory follows the host's need, reading a
 * snapshot synchronously from a listener, and the operator-only diagnostic kept per invocation.
 */
import { describe, expect, it } from 'vitest';
import type { InvocationSnapshot, ProviderOutput } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, provider, rejection, request, settle } from './helpers';

function gated(maxRetained?: number) {
  const gates: Array<ReturnType<typeof deferred<ProviderOutput>>> = [];
  const rt = new Runtime({ maxRetained });
  rt.register(
    provider('uplink/test', undefined, () => {
      const gate = deferred<ProviderOutput>();
      gates.push(gate);
      return gate.promise;
    }),
  );
  return { rt, gates };
}

describe('wait', () => {
  it('resolves with the terminal snapshot and its result once the terminal event was delivered', async () => {
    const { rt, gates } = gated();
    const req = request();
    const seen: string[] = [];
    rt.subscribe((e) => seen.push(e.kind));
    await rt.start(req);
    const waiting = rt.wait(req.invocation_id).then((s) => {
      seen.push('waiter');
      return s;
    });
    await settle();
    expect(seen).not.toContain('waiter');
    gates[0]!.resolve({ output: { text: 'done' } });
    const snap = await waiting;
    expect(snap).toMatchObject({ state: 'succeeded', result: { output: { text: 'done' } }, last_event_sequence: 3 });
    expect(seen).toEqual(['accepted', 'started', 'succeeded', 'waiter']);
  });

  it('answers at once for an invocation that already ended, failed and cancelled ones included', async () => {
    const { rt, gates } = gated();
    const ok = request();
    const cancelled = request();
    await rt.start(ok);
    await rt.start(cancelled);
    gates[0]!.resolve({ output: { text: 'x' } });
    await settle();
    await rt.cancel(cancelled.invocation_id);
    expect((await rt.wait(ok.invocation_id)).state).toBe('succeeded');
    const snap = await rt.wait(cancelled.invocation_id);
    expect(snap.state).toBe('cancelled');
    expect(snap.result).toBeUndefined();
  });

  it('an aborted wait rejects with the signal reason and leaves the invocation running', async () => {
    const { rt, gates } = gated();
    const req = request();
    await rt.start(req);
    const controller = new AbortController();
    const waiting = rt.wait(req.invocation_id, controller.signal);
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
    expect((await rt.get(req.invocation_id)).state).toBe('running');
    gates[0]!.resolve({ output: { text: 'x' } });
    expect((await rt.wait(req.invocation_id)).state).toBe('succeeded');
  });

  it('an unknown id is invocation_not_found', async () => {
    const rt = new Runtime();
    expect(await rejection(rt.wait('inv-nobody'))).toMatchObject({ code: 'invocation_not_found' });
  });

  it('dispose answers waiters with the cancelled snapshot', async () => {
    const { rt } = gated();
    const req = request();
    await rt.start(req);
    const waiting = rt.wait(req.invocation_id);
    rt.dispose();
    expect((await waiting).state).toBe('cancelled');
  });
});

describe('release', () => {
  it('a released invocation is gone: get, events and wait answer invocation_not_found', async () => {
    const { rt, gates } = gated();
    const req = request();
    await rt.start(req);
    gates[0]!.resolve({ output: { text: 'big' } });
    await rt.wait(req.invocation_id);
    rt.release(req.invocation_id);
    for (const p of [rt.get(req.invocation_id), rt.events(req.invocation_id), rt.wait(req.invocation_id), rt.cancel(req.invocation_id)]) {
      expect(await rejection(p)).toMatchObject({ code: 'invocation_not_found' });
    }
    expect(() => rt.release(req.invocation_id)).toThrow(expect.objectContaining({ code: 'invocation_not_found' }));
  });

  it('an active invocation cannot be released (invalid_request) and keeps running', async () => {
    const { rt, gates } = gated();
    const req = request();
    await rt.start(req);
    expect(() => rt.release(req.invocation_id)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    gates[0]!.resolve({ output: { text: 'x' } });
    expect(await rt.wait(req.invocation_id)).toMatchObject({ state: 'succeeded', result: { output: { text: 'x' } } });
  });

  it('a listener releasing on the terminal event does not take the result from a waiter', async () => {
    const { rt, gates } = gated();
    const req = request();
    rt.subscribe((e) => {
      if (e.kind === 'succeeded') rt.release(e.invocation_id);
    });
    await rt.start(req);
    const waiting = rt.wait(req.invocation_id);
    gates[0]!.resolve({ output: { text: 'kept' } });
    expect((await waiting).result).toEqual({ output: { text: 'kept' } });
    expect(await rejection(rt.get(req.invocation_id))).toMatchObject({ code: 'invocation_not_found' });
  });

  it('released slots do not count against the bound, and eviction still takes the oldest retained terminal one', async () => {
    const rt = new Runtime({ maxRetained: 2 });
    rt.register(provider('uplink/test'));
    const [a, b, c, d] = [request(), request(), request(), request()];
    for (const r of [a, b]) {
      await rt.start(r);
      await rt.wait(r.invocation_id);
    }
    rt.release(a.invocation_id);
    await rt.start(c); // fits in a's slot: b is not evicted
    await rt.wait(c.invocation_id);
    expect((await rt.get(b.invocation_id)).state).toBe('succeeded');
    await rt.start(d); // at the bound: b, the oldest retained terminal one, goes
    expect(await rejection(rt.get(b.invocation_id))).toMatchObject({ code: 'invocation_not_found' });
    expect((await rt.get(c.invocation_id)).state).toBe('succeeded');
  });

  it('with every retained invocation active, start is still resource_exhausted after releases', async () => {
    const { rt, gates } = gated(2);
    const [a, b, c] = [request(), request(), request()];
    await rt.start(a);
    gates[0]!.resolve({ output: { text: 'x' } });
    await rt.wait(a.invocation_id);
    rt.release(a.invocation_id);
    await rt.start(b);
    await rt.start(c);
    expect(await rejection(rt.start(request()))).toMatchObject({ code: 'resource_exhausted' });
  });

  it('releasing many invocations out of order keeps the runtime working at its bound', async () => {
    const rt = new Runtime({ maxRetained: 50 });
    rt.register(provider('uplink/test'));
    const kept: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const r = request();
      await rt.start(r);
      await rt.wait(r.invocation_id);
      // Keep every 7th: they hold the queue's head while the rest are released behind them.
      if (i % 7 === 0) kept.push(r.invocation_id);
      else rt.release(r.invocation_id);
    }
    const retained = (
      await Promise.all(
        kept.map((id) =>
          rt.get(id).then(
            () => id,
            () => undefined,
          ),
        ),
      )
    ).filter(Boolean);
    // Each start at the bound evicted the oldest kept one to make room for a call released after it.
    expect(retained).toEqual(kept.slice(-49));
  });

  it('releases behind a terminal invocation that is kept do not disturb the eviction order', async () => {
    const rt = new Runtime({ maxRetained: 5 });
    rt.register(provider('uplink/test'));
    const run = async (): Promise<string> => {
      const r = request();
      await rt.start(r);
      await rt.wait(r.invocation_id);
      return r.invocation_id;
    };
    const first = await run();
    for (let i = 0; i < 3000; i++) rt.release(await run());
    const later = [];
    for (let i = 0; i < 5; i++) later.push(await run());
    expect(await rejection(rt.get(first))).toMatchObject({ code: 'invocation_not_found' });
    for (const id of later) expect((await rt.get(id)).state).toBe('succeeded');
  });
});

describe('peek and diagnostic', () => {
  it('peek is get, synchronously, as a listener sees the state on each event', async () => {
    const { rt, gates } = gated();
    const req = request();
    const states: Array<InvocationSnapshot['state']> = [];
    rt.subscribe((e) => states.push(rt.peek(e.invocation_id).state));
    await rt.start(req);
    gates[0]!.resolve({ output: { text: 'x' } });
    await rt.wait(req.invocation_id);
    expect(states).toEqual(['accepted', 'running', 'succeeded']);
    expect(rt.peek(req.invocation_id)).toEqual(await rt.get(req.invocation_id));
  });

  it('keeps what the provider threw and the first diagnostic on the host snapshot only', async () => {
    const thrown = new Error('secret provider text');
    const rt = new Runtime();
    rt.register(provider('uplink/test', undefined, () => Promise.reject(thrown)));
    const req = request();
    await rt.start(req);
    const host = await rt.wait(req.invocation_id);
    expect(host.cause).toBe(thrown);
    expect(host.diagnostic).toMatchObject({ kind: 'provider_error', detail: 'Error: secret provider text', error: thrown });
    expect(rt.peek(req.invocation_id).cause).toBe(thrown);
    // The agent port never carries it.
    expect(JSON.stringify(await rt.get(req.invocation_id))).not.toContain('secret');
    expect(await rt.get(req.invocation_id)).not.toHaveProperty('cause');
    rt.release(req.invocation_id);
    expect(() => rt.peek(req.invocation_id)).toThrow(expect.objectContaining({ code: 'invocation_not_found' }));
  });

  it('a successful invocation has no diagnostic', async () => {
    const rt = new Runtime();
    rt.register(provider('uplink/test'));
    const req = request();
    await rt.start(req);
    const host = await rt.wait(req.invocation_id);
    expect(host.diagnostic).toBeUndefined();
    expect(host.cause).toBeUndefined();
  });
});
