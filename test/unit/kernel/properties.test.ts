import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome, InvocationRequest, Policy, PolicyDecision, ProviderOutput, RuntimeEvent } from '../../../src/main/kernel';
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

/** Every history the runtime may record (no progress reports here), as space-separated kinds. */
const CANCEL = 'cancellation_requested cancelled';
const RUN = `started(?: (?:succeeded|failed|${CANCEL}))?`;
const HISTORY = new RegExp(
  `^accepted(?: (?:${CANCEL}|${RUN}|approval_requested(?: (?:${CANCEL}|approval_granted (?:${CANCEL}|${RUN})|approval_denied failed))?))?$`,
);

/** Kinds on which a listener may cancel an invocation synchronously (re-entrant cancel). */
type CancelOn = 'accepted' | 'approval_requested' | 'approval_granted' | 'started' | undefined;

/**
 * Asserts that one invocation's history is a legal one and agrees with its snapshot, with what
 * the provider and policy were told to do, and with how often the provider was really called.
 */
async function checkHistory(rt: Runtime, id: string, behaviour: Behaviour, ask: string, cancelOn: CancelOn, signals: AbortSignal[]): Promise<void> {
  const history = (await rt.events(id)).events.map((e) => e.kind);
  const text = history.join(' ');
  expect(text).toMatch(HISTORY);
  const snap = await rt.get(id);
  const last = history.at(-1)!;
  const expectedState = TERMINAL.has(last) ? last : last === 'started' ? 'running' : 'accepted';
  expect(snap.state).toBe(expectedState);
  // The provider runs exactly when `started` was recorded, and only once (pinned, no retry).
  // A listener's cancel takes effect at once: the very next events are the cancellation.
  const at = cancelOn === undefined ? -1 : history.indexOf(cancelOn);
  if (at >= 0) expect(history.slice(at + 1)).toEqual(['cancellation_requested', 'cancelled']);
  expect(signals.length).toBe(history.includes('started') && cancelOn !== 'started' ? 1 : 0);
  if (signals.length === 1) expect(signals[0]!.aborted).toBe(history.includes('cancellation_requested'));
  // Approval events appear exactly for asked invocations, and agree with the operator's answer.
  expect(history.includes('approval_requested')).toBe(ask !== 'no' && cancelOn !== 'accepted');
  if (history.includes('approval_granted')) expect(ask).toBe('grant');
  if (history.includes('approval_denied')) {
    expect(['deny', 'reject']).toContain(ask);
    expect(snap.error?.code).toBe('policy_denied');
  }
  // A terminal provider outcome agrees with what the provider did.
  if (last === 'succeeded') {
    expect(['resolve', 'hang']).toContain(behaviour);
    expect(snap.result).toBeDefined();
  } else {
    expect(snap.result).toBeUndefined();
  }
  if (last === 'failed' && history.includes('started')) {
    expect(snap.error?.code).toBe(behaviour === 'reject' ? 'provider_failed' : 'output_schema_violation');
  }
  if (last === 'cancelled') expect(snap.error).toBeUndefined();
}
type Op =
  | { op: 'start'; behaviour: Behaviour; ask: 'no' | 'grant' | 'deny' | 'reject'; cancelOn: CancelOn }
  | { op: 'cancel'; target: number }
  | { op: 'finish'; target: number }
  | { op: 'decide'; target: number }
  | { op: 'tick' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('start' as const),
    behaviour: fc.constantFrom<Behaviour>('resolve', 'reject', 'bad-output', 'hang'),
    ask: fc.constantFrom('no' as const, 'grant' as const, 'deny' as const, 'reject' as const),
    // Mostly no re-entrant cancel, sometimes one on each kind a listener can see before the provider runs.
    cancelOn: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 4 },
      { arbitrary: fc.constantFrom<CancelOn>('accepted', 'approval_requested', 'approval_granted', 'started'), weight: 1 },
    ),
  }),
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
        const calls = new Map<string, AbortSignal[]>();
        rt.register(
          provider('uplink/test', undefined, (call, signal) => {
            const id = call.request.invocation_id;
            calls.set(id, [...(calls.get(id) ?? []), signal]);
            const gate = deferred<ProviderOutput>();
            gates.set(id, gate);
            switch (behaviours.get(id)) {
              case 'resolve':
                return Promise.resolve({ output: { text: 'ok' } });
              case 'reject':
                return Promise.reject(new Error('boom'));
              case 'bad-output':
                return Promise.resolve({ output: { text: 1 } as never });
              default:
                return gate.promise;
            }
          }),
        );
        const live: RuntimeEvent[] = [];
        rt.subscribe((e) => live.push(e));
        const cancelOns = new Map<string, CancelOn>();
        rt.subscribe((e) => {
          if (cancelOns.get(e.invocation_id) === e.kind) void rt.cancel(e.invocation_id);
        });
        const ids: string[] = [];
        const pending: Promise<unknown>[] = [];
        for (const op of ops) {
          switch (op.op) {
            case 'start': {
              const req = request();
              behaviours.set(req.invocation_id, op.behaviour);
              asks.set(req.invocation_id, op.ask);
              cancelOns.set(req.invocation_id, op.cancelOn);
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
        for (const id of ids) await checkHistory(rt, id, behaviours.get(id)!, asks.get(id)!, cancelOns.get(id), calls.get(id) ?? []);
        if (disposeAtEnd) for (const id of ids) expect(TERMINAL.has((await rt.get(id)).state)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('no provider call and nothing retained on any rejected or denied start', async () => {
    type Mode = 'default' | 'permit' | 'deny' | 'throw' | 'ask-grant' | 'ask-deny' | 'ask-reject';
    // Weighted towards valid values, so that a good share of runs reach the policy and beyond.
    const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>): fc.Arbitrary<T> =>
      fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: invalid, weight: 1 });
    const reqArb = fc.record({
      invocation_id: mostly(fc.constant('fresh'), fc.constantFrom('dup-1', 'Bad', '')),
      capability_id: mostly(fc.constantFrom('app.read', 'app.write'), fc.constantFrom('nobody.offers', 'BAD')),
      version_requirement: mostly(fc.constantFrom('^1', '*'), fc.constantFrom('^2', 'garbage', '>=1 <1')),
      input: mostly(fc.constant({ channel: 'x' }), fc.oneof(fc.constant({ channel: 1 }), fc.anything())),
      constraints: mostly(
        fc.constantFrom({}, { interaction: 'typed' }),
        fc.oneof(fc.constant({ provider_id: 'nope' }), fc.constant({ interaction: 'visual_ui' }), fc.anything()),
      ),
    });
    const modeArb = fc.constantFrom<Mode>('default', 'permit', 'deny', 'throw', 'ask-grant', 'ask-deny', 'ask-reject');
    const reached = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(reqArb, modeArb, fc.boolean(), async (raw, mode, full) => {
        // The two set-up invocations are always permitted; the generated request meets `mode`.
        let started = false;
        const policy: Policy = (ctx) => {
          if (!started) return { kind: 'permit' };
          switch (mode) {
            case 'default':
              return ctx.offer.capability.safety === 'read_only' ? { kind: 'permit' } : { kind: 'deny' };
            case 'permit':
              return { kind: 'permit' };
            case 'deny':
              return { kind: 'deny', reason: 'no' };
            case 'throw':
              throw new Error('policy bug');
            case 'ask-grant':
              return { kind: 'ask', approval: Promise.resolve({ granted: true }) };
            case 'ask-deny':
              return { kind: 'ask', approval: Promise.resolve({ granted: false }) };
            default:
              return { kind: 'ask', approval: Promise.reject(new Error('timeout')) };
          }
        };
        const rt = new Runtime({ maxRetained: full ? 2 : 50, policy });
        const p = provider(
          'uplink/test',
          [
            { spec: spec(), interactions: ['typed'] },
            { spec: spec({ id: 'app.write', safety: 'mutating' }), interactions: ['typed'] },
          ],
          () => new Promise(() => {}),
        );
        rt.register(p);
        await rt.start(request({ invocation_id: 'dup-1' }));
        await rt.start(request({ invocation_id: 'active-2' }));
        started = true;
        const calls = p.calls.length;
        const outcome = await rt.start(raw as InvocationRequest).then(
          () => 'ok',
          (e: { code: string }) => e.code,
        );
        await settle();
        const extra = p.calls.length - calls;
        reached.set(outcome, (reached.get(outcome) ?? 0) + 1);
        if (full) expect(outcome).not.toBe('ok'); // the bound is full of active work, or the request is bad
        if (outcome !== 'ok') {
          expect(extra).toBe(0);
          if (raw.invocation_id === 'fresh') expect((await rejection(rt.get('fresh'))).code).toBe('invocation_not_found');
        } else {
          const permitted = mode === 'permit' || mode === 'ask-grant' || (mode === 'default' && raw.capability_id === 'app.read');
          expect(['deny', 'throw']).not.toContain(mode);
          expect(extra).toBe(permitted ? 1 : 0);
          const snap = await rt.get(raw.invocation_id);
          if (!permitted) expect(snap).toMatchObject({ state: 'failed', error: { code: 'policy_denied' } });
        }
        // The earlier invocation with the same id is untouched by a rejected duplicate.
        expect((await rt.get('dup-1')).last_event_sequence).toBe(2);
      }),
      { numRuns: 400 },
    );
    // The property is only as strong as the paths it reaches: admitted starts and policy denials.
    expect(reached.get('ok') ?? 0).toBeGreaterThan(10);
    expect(reached.get('policy_denied') ?? 0).toBeGreaterThan(10);
    expect(reached.get('resource_exhausted') ?? 0).toBeGreaterThan(10);
  });

  it('a policy fails closed as policy_denied for any thrown, rejected or returned value', async () => {
    const isValid = (d: unknown): boolean => {
      if (d === null || typeof d !== 'object') return false;
      const kind = (d as { kind?: unknown }).kind;
      return kind === 'permit' || kind === 'deny' || (kind === 'ask' && typeof (d as { approval?: { then?: unknown } }).approval?.then === 'function');
    };
    await fc.assert(
      fc.asyncProperty(
        fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withNullPrototype: true }),
        fc.constantFrom('throw', 'reject', 'return', 'resolve'),
        async (value, how) => {
          fc.pre(!((how === 'return' || how === 'resolve') && isValid(value)));
          const rt = new Runtime({
            policy: () => {
              switch (how) {
                case 'throw':
                  throw value;
                case 'reject':
                  return Promise.reject(value);
                case 'return':
                  return value as PolicyDecision;
                default:
                  return Promise.resolve(value as PolicyDecision);
              }
            },
          });
          const p = provider('uplink/test');
          rt.register(p);
          const req = request();
          const code = await rt.start(req).then(
            () => 'ok',
            (e: { code: string }) => e.code,
          );
          expect(code).toBe('policy_denied');
          expect(p.calls).toHaveLength(0);
          expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a thrown value with hostile getters or toString still fails closed', async () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        getPrototypeOf: () => {
          throw new Error('trap');
        },
      },
    );
    for (const value of [
      hostile,
      {
        toString: () => {
          throw new Error('x');
        },
      },
      Symbol('s'),
    ]) {
      const rt = new Runtime({
        policy: () => {
          throw value;
        },
      });
      rt.register(provider('uplink/test'));
      expect(
        await rt.start(request()).then(
          () => 'ok',
          (e: { code: string }) => e.code,
        ),
      ).toBe('policy_denied');
      const rt2 = new Runtime({ policy: () => value as unknown as PolicyDecision });
      rt2.register(provider('uplink/test'));
      expect(
        await rt2.start(request()).then(
          () => 'ok',
          (e: { code: string }) => e.code,
        ),
      ).toBe('policy_denied');
    }
  });
});
