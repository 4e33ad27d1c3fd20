/**
 * The call context (Uplink extension): what `start` is given travels with the call, frozen, to the
 * policy, the provider and every listener, and the causes of a denial or a provider failure come
 * back as values on the host's snapshot, never as text to parse.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome, PolicyContext, RuntimeEvent } from '../../../src/main/kernel';
import { Runtime, SoftwareUseError } from '../../../src/main/kernel';
import { deferred, provider, request, spec } from './helpers';

interface Ctx {
  agent: { id: string };
  note: string;
}

const mutating = [{ spec: spec({ id: 'app.write', safety: 'mutating' }), interactions: ['typed' as const] }];

describe('call context', () => {
  it('reaches the policy, the provider and every listener as the one frozen value start was given', async () => {
    const seenByPolicy: unknown[] = [];
    const rt = new Runtime<Ctx>({
      policy: (p: PolicyContext<Ctx>) => {
        seenByPolicy.push(p.context);
        return { kind: 'permit' };
      },
    });
    const prov = provider('uplink/test');
    rt.register(prov);
    const heard: Array<[RuntimeEvent['kind'], Ctx]> = [];
    rt.subscribe((e, c) => heard.push([e.kind, c]));
    const ctx: Ctx = { agent: { id: 'claude-build' }, note: 'x' };
    const req = request();
    await rt.start(req, ctx);
    await rt.wait(req.invocation_id);
    expect(seenByPolicy).toEqual([ctx]);
    expect(seenByPolicy[0]).toBe(ctx);
    expect(prov.calls[0]!.context).toBe(ctx);
    expect(heard.map(([k]) => k)).toEqual(['accepted', 'started', 'succeeded']);
    expect(heard.every(([, c]) => c === ctx)).toBe(true);
    expect(Object.isFrozen(ctx)).toBe(true);
    expect(() => {
      (ctx as { note: string }).note = 'changed';
    }).toThrow(TypeError);
  });

  it("a denial's cause is the cause of the error start rejects with", async () => {
    const cause = { kind: 'Rejected', message: 'read the pane first', hint: 'call read' };
    const rt = new Runtime<Ctx>({ policy: () => ({ kind: 'deny', reason: 'read first', cause }) });
    rt.register(provider('uplink/test', mutating));
    const error = await rt.start(request({ capability_id: 'app.write' }), { agent: { id: 'a' }, note: '' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SoftwareUseError);
    expect((error as SoftwareUseError).code).toBe('policy_denied');
    expect((error as SoftwareUseError).cause).toBe(cause);
    // The agent-facing text carries the reason only, never the cause object.
    expect((error as SoftwareUseError).toWire()).not.toHaveProperty('cause');
  });

  it("an approval's denial cause is on the host's terminal snapshot, not on the agent's", async () => {
    const approval = deferred<ApprovalOutcome>();
    const rt = new Runtime<Ctx>({ policy: () => ({ kind: 'ask', approval: approval.promise }) });
    rt.register(provider('uplink/test', mutating));
    const req = request({ capability_id: 'app.write' });
    await rt.start(req, { agent: { id: 'a' }, note: '' });
    const cause = { kind: 'Rejected', message: 'the operator denied it', outcome: 'denied' };
    approval.resolve({ granted: false, reason: 'no', cause });
    const host = await rt.wait(req.invocation_id);
    expect(host.state).toBe('failed');
    expect(host.error?.code).toBe('policy_denied');
    expect(host.cause).toBe(cause);
    expect(await rt.get(req.invocation_id)).not.toHaveProperty('cause');
  });

  it('a start without a context still runs (the context is an extension)', async () => {
    const rt = new Runtime();
    const prov = provider('uplink/test');
    rt.register(prov);
    const req = request();
    await rt.start(req);
    expect((await rt.wait(req.invocation_id)).state).toBe('succeeded');
    expect(prov.calls[0]!.context).toBeUndefined();
  });
});

describe('errors as values', () => {
  it('a kernel error keeps its text and hint apart, and its message reads as before', () => {
    const e = new SoftwareUseError('invalid_request', 'the request must be an object', { hint: 'send an object' });
    expect(e.text).toBe('the request must be an object');
    expect(e.hint).toBe('send an object');
    expect(e.toWire()).toEqual({ code: 'invalid_request', message: 'the request must be an object — hint: send an object', retryable: false });
  });

  it("an output that breaks its schema ends with the kernel's own error as the host's cause", async () => {
    const rt = new Runtime();
    rt.register(provider('uplink/test', undefined, async () => ({ output: { text: 42 } })));
    const req = request();
    await rt.start(req);
    const host = await rt.wait(req.invocation_id);
    expect(host.error?.code).toBe('output_schema_violation');
    expect(host.cause).toBeInstanceOf(SoftwareUseError);
    expect((host.cause as SoftwareUseError).text).not.toContain('hint');
    expect((host.cause as SoftwareUseError).hint).toBeTruthy();
  });
});
