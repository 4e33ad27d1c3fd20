import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome, InvocationRequest, PolicyDecision, ProviderOutput, RuntimeEvent } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, provider, rejection, request, settle, spec } from './helpers';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Asserts the per-invocation event invariants on the live stream and on replay. */
async function checkSequences(rt: Runtime, live: RuntimeEvent[], ids: string[]): Promise<void> {
  for (const id of ids) {
    const mine = live.filter((e) => e.invocation_id === id);
    expect(mine.map((e) => e.sequence)).toEqual(mine.map((_, i) => i + 1));
    expect(mine[0]?.kind).toBe('accepted');
    const terminals = mine.filter((e) => TERMINAL.has(e.kind));
    expect(terminals.length).toBeLessThanOrEqual(1);
    if (terminals.length === 1) expect(mine.at(-1)).toBe(terminals[0]);
    const page = await rt.events(id);
    expect(page.events).toEqual(mine);
    expect(page.next_cursor).toBe(mine.length);
    expect(page.terminal).toBe(terminals.length === 1);
    expect((await rt.get(id)).last_event_sequence).toBe(mine.length);
  }
}

type Behaviour = 'resolve' | 'reject' | 'bad-output' | 'hang';
type Op =
  | { op: 'start'; behaviour: Behaviour; ask: 'no' | 'grant' | 'deny' | 'reject' }
  | { op: 'cancel'; target: number }
  | { op: 'finish'; target: number }
  | { op: 'decide'; target: number }
  | { op: 'tick' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('start' as const), behaviour: fc.constantFrom<Behaviour>('resolve', 'reject', 'bad-output', 'hang'), ask: fc.constantFrom('no' as const, 'grant' as const, 'deny' as const, 'reject' as const) }),
  fc.record({ op: fc.constant('cancel' as const), target: fc.nat(20) }),
  fc.record({ op: fc.constant('finish' as const), target: fc.nat(20) }),
  fc.record({ op: fc.constant('decide' as const), target: fc.nat(20) }),
  fc.constant({ op: 'tick' as const }),
);

describe('invariants (property-based)', () => {
  it('sequences are gap-free and increasing per invocation under concurrent starts and cancels', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.boolean(), async (ops, disposeAtEnd) => {
        const gates = new Map<string, ReturnType<typeof deferred<ProviderOutput>>>();
        const approvals = new Map<string, { gate: ReturnType<typeof deferred<ApprovalOutcome>>; ask: string }>();
        const behaviours = new Map<string, Behaviour>();
        const asks = new Map<string, string>();
        const rt = new Runtime({
          policy: (ctx) => {
            const ask = asks.get(ctx.request.invocation_id)!;
            if (ask === 'no') return { kind: 'permit' };
            const gate = deferred<ApprovalOutcome>();
            approvals.set(ctx.request.invocation_id, { gate, ask });
            return { kind: 'ask', approval: gate.promise };
          },
        });
        rt.register(provider('uplink/test', undefined, (call) => {
          const id = call.request.invocation_id;
          const gate = deferred<ProviderOutput>();
          gates.set(id, gate);
          switch (behaviours.get(id)) {
            case 'resolve': return Promise.resolve({ output: { text: 'ok' } });
            case 'reject': return Promise.reject(new Error('boom'));
            case 'bad-output': return Promise.resolve({ output: { text: 1 } as never });
            default: return gate.promise;
          }
        }));
        const live: RuntimeEvent[] = [];
        rt.subscribe((e) => live.push(e));
        const ids: string[] = [];
        const pending: Promise<unknown>[] = [];
        for (const op of ops) {
          switch (op.op) {
            case 'start': {
              const req = request();
              behaviours.set(req.invocation_id, op.behaviour);
              asks.set(req.invocation_id, op.ask);
              ids.push(req.invocation_id);
              pending.push(rt.start(req));
              break;
            }
            case 'cancel':
              if (ids.length) pending.push(rt.cancel(ids[op.target % ids.length]!));
              break;
            case 'finish':
              if (ids.length) gates.get(ids[op.target % ids.length]!)?.resolve({ output: { text: 'late' } });
              break;
            case 'decide': {
              const a = ids.length ? approvals.get(ids[op.target % ids.length]!) : undefined;
              if (a?.ask === 'grant') a.gate.resolve({ granted: true });
              else if (a?.ask === 'deny') a.gate.resolve({ granted: false, reason: 'no' });
              else a?.gate.reject(new Error('timeout'));
              break;
            }
            case 'tick':
              await Promise.resolve();
              break;
          }
        }
        await Promise.allSettled(pending);
        if (disposeAtEnd) rt.dispose();
        await settle();
        await checkSequences(rt, live, ids);
        if (disposeAtEnd) for (const id of ids) expect(TERMINAL.has((await rt.get(id)).state)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('no provider call and nothing retained on any rejected start', async () => {
    const reqArb = fc.record({
      invocation_id: fc.constantFrom('dup-1', 'fresh', 'Bad', ''),
      capability_id: fc.constantFrom('app.read', 'app.write', 'nobody.offers', 'BAD'),
      version_requirement: fc.constantFrom('^1', '^2', '*', 'garbage', '>=1 <1'),
      input: fc.oneof(fc.constant({ channel: 'x' }), fc.constant({ channel: 1 }), fc.anything()),
      constraints: fc.oneof(fc.constant({}), fc.constant({ provider_id: 'nope' }), fc.constant({ interaction: 'visual_ui' }), fc.constant({ interaction: 'typed' }), fc.anything()),
    });
    await fc.assert(
      fc.asyncProperty(reqArb, async (raw) => {
        const rt = new Runtime({ maxRetained: 2 });
        const p = provider('uplink/test', [{ spec: spec(), interactions: ['typed'] }, { spec: spec({ id: 'app.write', safety: 'mutating' }), interactions: ['typed'] }], () => new Promise(() => {}));
        rt.register(p);
        await rt.start(request({ invocation_id: 'dup-1' }));
        await rt.start(request({ invocation_id: 'active-2' }));
        const calls = p.calls.length;
        const outcome = await rt.start(raw as InvocationRequest).then(() => 'ok', (e: { code: string }) => e.code);
        expect(outcome).not.toBe('ok'); // mutating is denied, the bound is full of active work, or the request is bad
        expect(p.calls.length).toBe(calls);
        if (raw.invocation_id === 'fresh') expect((await rejection(rt.get('fresh'))).code).toBe('invocation_not_found');
      }),
      { numRuns: 300 },
    );
  });

  it('a policy fails closed as policy_denied for any thrown, rejected or returned value', async () => {
    const isValid = (d: unknown): boolean => {
      if (d === null || typeof d !== 'object') return false;
      const kind = (d as { kind?: unknown }).kind;
      return kind === 'permit' || kind === 'deny' || (kind === 'ask' && typeof (d as { approval?: { then?: unknown } }).approval?.then === 'function');
    };
    await fc.assert(
      fc.asyncProperty(fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withNullPrototype: true }), fc.constantFrom('throw', 'reject', 'return', 'resolve'), async (value, how) => {
        fc.pre(!((how === 'return' || how === 'resolve') && isValid(value)));
        const rt = new Runtime({
          policy: () => {
            switch (how) {
              case 'throw': throw value;
              case 'reject': return Promise.reject(value);
              case 'return': return value as PolicyDecision;
              default: return Promise.resolve(value as PolicyDecision);
            }
          },
        });
        const p = provider('uplink/test');
        rt.register(p);
        const req = request();
        const code = await rt.start(req).then(() => 'ok', (e: { code: string }) => e.code);
        expect(code).toBe('policy_denied');
        expect(p.calls).toHaveLength(0);
        expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
      }),
      { numRuns: 300 },
    );
  });

  it('a thrown value with hostile getters or toString still fails closed', async () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('trap'); }, getPrototypeOf: () => { throw new Error('trap'); } });
    for (const value of [hostile, { toString: () => { throw new Error('x'); } }, Symbol('s')]) {
      const rt = new Runtime({ policy: () => { throw value; } });
      rt.register(provider('uplink/test'));
      expect(await rt.start(request()).then(() => 'ok', (e: { code: string }) => e.code)).toBe('policy_denied');
      const rt2 = new Runtime({ policy: () => value as unknown as PolicyDecision });
      rt2.register(provider('uplink/test'));
      expect(await rt2.start(request()).then(() => 'ok', (e: { code: string }) => e.code)).toBe('policy_denied');
    }
  });
});
