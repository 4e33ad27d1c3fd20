import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome, Policy, PolicyDecision, RuntimeDiagnostic, RuntimeEvent } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { deferred, kinds, provider, rejection, request, settle, spec, untilTerminal } from './helpers';

const MUTATING = spec({ id: 'app.write', safety: 'mutating' });

function setup(policy?: Policy) {
  const diagnostics: RuntimeDiagnostic[] = [];
  const rt = new Runtime({ policy, onDiagnostic: (d) => diagnostics.push(d) });
  const p = provider('uplink/test', [
    { spec: spec(), interactions: ['typed'] },
    { spec: MUTATING, interactions: ['typed'] },
  ]);
  rt.register(p);
  return { rt, p, diagnostics };
}

const write = () => request({ capability_id: 'app.write' });

describe('default policy', () => {
  it('permits read_only capabilities', async () => {
    const { rt, p } = setup();
    await rt.start(request());
    expect(p.calls).toHaveLength(1);
  });

  it('denies mutating capabilities before any provider call, retaining nothing', async () => {
    const { rt, p } = setup();
    const req = write();
    const e = await rejection(rt.start(req));
    expect(e.code).toBe('policy_denied');
    expect(e.message).toMatch(/hint:/);
    expect(p.calls).toHaveLength(0);
    expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
  });
});

describe('custom policy', () => {
  it('a permit lets a mutating capability run', async () => {
    const { rt, p } = setup(() => ({ kind: 'permit' }));
    await rt.start(write());
    expect(p.calls).toHaveLength(1);
  });

  it('an async permit works and the policy sees the request and the selected offer', async () => {
    const seen: unknown[] = [];
    const { rt, p } = setup(async (ctx) => {
      seen.push([ctx.request.invocation_id, ctx.offer.provider.id, ctx.offer.capability.id]);
      return { kind: 'permit' };
    });
    const req = write();
    await rt.start(req);
    expect(seen).toEqual([[req.invocation_id, 'uplink/test', 'app.write']]);
    expect(p.calls).toHaveLength(1);
  });

  it('a deny carries the policy reason in the message', async () => {
    const { rt, p } = setup(() => ({ kind: 'deny', reason: 'tmux pane is read-only' }));
    const e = await rejection(rt.start(request()));
    expect(e.code).toBe('policy_denied');
    expect(e.message).toContain('tmux pane is read-only');
    expect(p.calls).toHaveLength(0);
  });

  const broken: Array<[string, Policy]> = [
    [
      'throws',
      () => {
        throw new Error('policy bug with secret');
      },
    ],
    [
      'rejects',
      async () => {
        throw new Error('policy bug with secret');
      },
    ],
    ['returns undefined', () => undefined as unknown as PolicyDecision],
    ['returns an unknown kind', () => ({ kind: 'allow' }) as unknown as PolicyDecision],
    ['returns ask without a promise', () => ({ kind: 'ask', approval: { granted: true } }) as unknown as PolicyDecision],
    ['returns a string', () => 'permit' as unknown as PolicyDecision],
  ];
  for (const [what, policy] of broken) {
    it(`a policy that ${what} fails closed as policy_denied before any provider call`, async () => {
      const { rt, p, diagnostics } = setup(policy);
      const req = request();
      const e = await rejection(rt.start(req));
      expect(e.code).toBe('policy_denied');
      expect(e.message).not.toContain('secret');
      expect(p.calls).toHaveLength(0);
      expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
      expect(diagnostics.map((d) => d.kind)).toEqual(['policy_error']);
    });
  }
});

describe('ask (operator approval)', () => {
  function asking() {
    const approval = deferred<ApprovalOutcome>();
    const ctx = setup(() => ({ kind: 'ask', approval: approval.promise }));
    return { ...ctx, approval };
  }

  it('start resolves with the receipt while the invocation waits in accepted', async () => {
    const { rt, p } = asking();
    const req = write();
    const receipt = await rt.start(req);
    expect(receipt.invocation_id).toBe(req.invocation_id);
    expect((await rt.get(req.invocation_id)).state).toBe('accepted');
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'approval_requested']);
    expect(p.calls).toHaveLength(0);
  });

  it('a grant runs the provider: accepted, approval_requested, approval_granted, started, succeeded', async () => {
    const { rt, p, approval } = asking();
    const req = write();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    approval.resolve({ granted: true, by: 'operator' });
    const events = await done;
    expect(events.map((e) => [e.sequence, e.kind])).toEqual([
      [1, 'accepted'],
      [2, 'approval_requested'],
      [3, 'approval_granted'],
      [4, 'started'],
      [5, 'succeeded'],
    ]);
    expect(events[2]!.approval).toEqual({ by: 'operator' });
    expect(p.calls).toHaveLength(1);
  });

  it('a denial fails with policy_denied carrying the operator reason, without a provider call', async () => {
    const { rt, p, approval } = asking();
    const req = write();
    await rt.start(req);
    approval.resolve({ granted: false, by: 'ann', reason: 'not on prod' });
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'approval_requested', 'approval_denied', 'failed']);
    const snap = await rt.get(req.invocation_id);
    expect(snap.state).toBe('failed');
    expect(snap.error?.code).toBe('policy_denied');
    expect(snap.error?.message).toContain('not on prod');
    expect((await rt.events(req.invocation_id)).events[2]!.approval).toEqual({ by: 'ann', reason: 'not on prod' });
    expect(p.calls).toHaveLength(0);
  });

  it('a caller mutating a returned approval detail does not rewrite the recorded history', async () => {
    const { rt, approval } = asking();
    const req = write();
    const live: RuntimeEvent[] = [];
    rt.subscribe((e) => live.push(e));
    await rt.start(req);
    approval.resolve({ granted: false, by: 'ann', reason: 'not on prod' });
    await settle();
    const denied = live.find((e) => e.kind === 'approval_denied')!;
    expect(() => ((denied.approval as { reason?: string }).reason = 'rewritten')).toThrow(TypeError);
    expect((await rt.events(req.invocation_id)).events[2]!.approval).toEqual({ by: 'ann', reason: 'not on prod' });
  });

  it('an approval that rejects (timeout, operator absent) is a denial', async () => {
    const { rt, p, approval, diagnostics } = asking();
    const req = write();
    await rt.start(req);
    approval.reject(new Error('timeout after 120000 ms'));
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'approval_requested', 'approval_denied', 'failed']);
    expect((await rt.get(req.invocation_id)).error?.code).toBe('policy_denied');
    expect(diagnostics.map((d) => d.kind)).toEqual(['policy_error']);
    expect(p.calls).toHaveLength(0);
  });

  it('a malformed approval outcome is a denial', async () => {
    const { rt, p, approval } = asking();
    const req = write();
    await rt.start(req);
    approval.resolve({ granted: 'yes' } as unknown as ApprovalOutcome);
    await settle();
    expect((await rt.get(req.invocation_id)).error?.code).toBe('policy_denied');
    expect(p.calls).toHaveLength(0);
  });

  it('a cancel while waiting ends it cancelled and the provider is never called, even if granted later', async () => {
    const { rt, p, approval } = asking();
    const req = write();
    await rt.start(req);
    const snap = await rt.cancel(req.invocation_id);
    expect(snap.state).toBe('cancelled');
    expect(snap.error).toBeUndefined();
    approval.resolve({ granted: true });
    await settle();
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'approval_requested', 'cancellation_requested', 'cancelled']);
    expect(p.calls).toHaveLength(0);
  });
});

describe('policy ordering', () => {
  it('the policy is not consulted for requests that fail shape, selection or input validation', async () => {
    let consulted = 0;
    const { rt } = setup(() => {
      consulted++;
      return { kind: 'permit' };
    });
    await rejection(rt.start(request({ invocation_id: 'BAD' })));
    await rejection(rt.start(request({ capability_id: 'nobody.offers' })));
    await rejection(rt.start(request({ input: { channel: 7 } })));
    expect(consulted).toBe(0);
  });
});

describe('policy and concurrency', () => {
  it('a second start with the same id while the policy is deciding is duplicate_invocation', async () => {
    const gate = deferred<PolicyDecision>();
    const { rt, p } = setup(() => gate.promise);
    const req = request();
    const first = rt.start(req);
    expect((await rejection(rt.start({ ...req }))).code).toBe('duplicate_invocation');
    gate.resolve({ kind: 'permit' });
    await first;
    expect(p.calls).toHaveLength(1);
  });

  it('an id whose start was denied after an async policy can be reused', async () => {
    let deny = true;
    const { rt } = setup(async () => (deny ? { kind: 'deny' } : { kind: 'permit' }));
    const req = request();
    await rejection(rt.start(req));
    deny = false;
    await expect(rt.start({ ...req })).resolves.toBeDefined();
  });
});
