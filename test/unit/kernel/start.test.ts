import { describe, expect, it } from 'vitest';
import type { InvocationRequest, RuntimeDiagnostic } from '../../../src/main/kernel';
import { Runtime, SoftwareUseError } from '../../../src/main/kernel';
import { deferred, kinds, provider, rejection, request, settle, spec, untilTerminal } from './helpers';

function setup(invoke?: Parameters<typeof provider>[2]) {
  const diagnostics: RuntimeDiagnostic[] = [];
  const rt = new Runtime({ onDiagnostic: (d) => diagnostics.push(d), now: () => 1_000 });
  const p = provider('uplink/test', undefined, invoke);
  rt.register(p);
  return { rt, p, diagnostics };
}

describe('start: request shape', () => {
  const bad: Array<[string, unknown]> = [
    ['not an object', 'hello'],
    ['null', null],
    ['an array', []],
    ['a missing invocation_id', { capability_id: 'app.read', version_requirement: '^1', input: {}, constraints: {} }],
    ['an invalid invocation_id', request({ invocation_id: 'Bad Id' })],
    ['an invalid capability_id', request({ capability_id: 'app..read' })],
    ['a non-string version_requirement', request({ version_requirement: 1 as never })],
    ['a missing input', { invocation_id: 'x1', capability_id: 'app.read', version_requirement: '^1', constraints: {} }],
    ['a non-JSON input (function)', request({ input: { f: () => 1 } as never })],
    ['a non-JSON input (NaN)', request({ input: Number.NaN })],
    ['a non-JSON input (class instance)', request({ input: new Date() as never })],
    ['an unknown top-level field', { ...request(), extra: true }],
    ['an unknown constraints field', request({ constraints: { provider: 'x' } as never })],
    ['a non-object constraints', request({ constraints: 'typed' as never })],
    ['an invalid constraints.provider_id', request({ constraints: { provider_id: 'UP' } })],
    ['an invalid constraints.interaction', request({ constraints: { interaction: 'mouse' as never } })],
  ];
  for (const [what, value] of bad) {
    it(`a request with ${what} is invalid_request and calls nothing`, async () => {
      const { rt, p } = setup();
      const e = await rejection(rt.start(value as InvocationRequest));
      expect(e).toBeInstanceOf(SoftwareUseError);
      expect(e.code).toBe('invalid_request');
      expect(e.message).toMatch(/ — hint: /);
      expect(p.calls).toHaveLength(0);
    });
  }

  it('constraints may be omitted (the SDK defaults them)', async () => {
    const { rt } = setup();
    const { constraints: _c, ...rest } = request();
    await expect(rt.start(rest as InvocationRequest)).resolves.toMatchObject({ provider_id: 'uplink/test' });
  });

  it('start, get, events and cancel never throw synchronously', async () => {
    const { rt } = setup();
    const calls = [() => rt.start(undefined as never), () => rt.get(42 as never), () => rt.events('x', -1), () => rt.cancel(null as never)];
    for (const call of calls) {
      let result: Promise<unknown> | undefined;
      expect(() => (result = call())).not.toThrow();
      expect((await rejection(result!)).code).toBe('invalid_request');
    }
  });

  it('unknown ids reject with invocation_not_found', async () => {
    const { rt } = setup();
    expect((await rejection(rt.get('nope'))).code).toBe('invocation_not_found');
    expect((await rejection(rt.events('nope'))).code).toBe('invocation_not_found');
    expect((await rejection(rt.cancel('nope'))).code).toBe('invocation_not_found');
  });
});

describe('start: outcomes', () => {
  it('a successful invocation has exactly accepted, started, succeeded with sequences 1, 2, 3', async () => {
    const { rt } = setup();
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    const receipt = await rt.start(req);
    expect(receipt).toEqual({ invocation_id: req.invocation_id, provider_id: 'uplink/test', capability_version: '1.0.0', interaction: 'typed' });
    const live = await done;
    expect(live.map((e) => [e.sequence, e.kind])).toEqual([
      [1, 'accepted'],
      [2, 'started'],
      [3, 'succeeded'],
    ]);
    const page = await rt.events(req.invocation_id);
    expect(page.events).toEqual(live);
    expect(page.events[0]).toEqual({ invocation_id: req.invocation_id, sequence: 1, kind: 'accepted', provider_id: 'uplink/test', at: 1_000 });
    expect(await rt.get(req.invocation_id)).toEqual({ receipt, state: 'succeeded', result: { output: { text: 'ok' } }, last_event_sequence: 3 });
  });

  it('the provider receives the request, the pinned offer and a live signal', async () => {
    const { rt, p } = setup();
    const req = request();
    await rt.start(req);
    expect(p.calls[0]!.request).toEqual(req);
    expect(p.calls[0]!.offer).toMatchObject({ provider: { id: 'uplink/test' }, capability: spec(), interaction: 'typed' });
    expect(p.signals[0]!.aborted).toBe(false);
  });

  it('a duplicate invocation id is duplicate_invocation and the first one is untouched', async () => {
    const { rt, p } = setup();
    const req = request();
    await rt.start(req);
    expect((await rejection(rt.start({ ...req }))).code).toBe('duplicate_invocation');
    expect(p.calls).toHaveLength(1);
    expect((await rt.get(req.invocation_id)).last_event_sequence).toBe(3);
  });

  it('input that fails input_schema is rejected before any provider call, naming only pointer and keyword', async () => {
    const { rt, p, diagnostics } = setup();
    const req = request({ input: { channel: 'secret-value-123', extra: 'other-secret' } });
    const e = await rejection(rt.start(req));
    expect(e.code).toBe('input_schema_violation');
    expect(e.message).toContain('keyword: additionalProperties');
    expect(e.message).not.toMatch(/secret|extra/);
    const typed = await rejection(rt.start(request({ input: { channel: 42 } })));
    expect(typed.message).toContain('"/channel"');
    expect(typed.message).toContain('keyword: type');
    expect(typed.message).not.toContain('42');
    expect(p.calls).toHaveLength(0);
    expect((await rejection(rt.get(req.invocation_id))).code).toBe('invocation_not_found');
    expect(diagnostics.map((d) => d.kind)).toEqual(['input_schema', 'input_schema']);
  });

  it('a provider that throws gives failed/provider_failed with a fixed message; the detail goes to diagnostics only', async () => {
    const { rt, diagnostics } = setup(async () => {
      throw new Error('password=hunter2 leaked');
    });
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    const events = await done;
    expect(events.map((e) => e.kind)).toEqual(['accepted', 'started', 'failed']);
    const snap = await rt.get(req.invocation_id);
    expect(snap.state).toBe('failed');
    expect(snap.error?.code).toBe('provider_failed');
    expect(snap.result).toBeUndefined();
    expect(JSON.stringify([snap, events])).not.toContain('hunter2');
    expect(events[2]!.error).toEqual(snap.error);
    expect(diagnostics).toEqual([
      {
        invocation_id: req.invocation_id,
        provider_id: 'uplink/test',
        kind: 'provider_error',
        detail: 'Error: password=hunter2 leaked',
        error: expect.any(Error),
      },
    ]);
  });

  it('a provider that throws synchronously also gives provider_failed', async () => {
    const { rt } = setup(() => {
      throw new Error('sync');
    });
    const req = request();
    await rt.start(req);
    await settle();
    expect((await rt.get(req.invocation_id)).error?.code).toBe('provider_failed');
  });

  it('output that fails output_schema gives failed/output_schema_violation and no result', async () => {
    const { rt, diagnostics } = setup(async () => ({ output: { text: 'top-secret-output'.length } as never }));
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    expect((await done).map((e) => e.kind)).toEqual(['accepted', 'started', 'failed']);
    const snap = await rt.get(req.invocation_id);
    expect(snap.error?.code).toBe('output_schema_violation');
    expect(snap.error?.message).toContain('"/text"');
    expect(snap.error?.message).toContain('keyword: type');
    expect(snap.error?.message).not.toContain('17');
    expect(snap.result).toBeUndefined();
    expect(diagnostics[0]!.kind).toBe('output_schema');
  });

  it('a provider resolving without {output} is provider_failed', async () => {
    for (const bad of [undefined, 'text', { result: 1 }, { output: () => 1 }]) {
      const { rt } = setup(async () => bad as never);
      const req = request();
      await rt.start(req);
      await settle();
      expect((await rt.get(req.invocation_id)).error?.code).toBe('provider_failed');
    }
  });

  it('the provider is pinned: a failure never runs another provider', async () => {
    const rt = new Runtime();
    const first = provider('a-first', undefined, async () => {
      throw new Error('down');
    });
    const second = provider('b-second');
    rt.register(second);
    rt.register(first);
    const req = request();
    await rt.start(req);
    await settle();
    expect((await rt.get(req.invocation_id)).state).toBe('failed');
    expect(first.calls).toHaveLength(1);
    expect(second.calls).toHaveLength(0);
  });

  it('progress reports become progress events while running and are ignored after the terminal state', async () => {
    const gate = deferred<void>();
    let report: ((p: { progress: number; total?: number; message?: string }) => void) | undefined;
    const { rt } = setup(async (call) => {
      report = call.report;
      call.report?.({ progress: 1, total: 3, message: 'one' });
      call.report?.({ progress: Number.NaN });
      await gate.promise;
      return { output: { text: 'done' } };
    });
    const req = request();
    await rt.start(req);
    gate.resolve();
    await settle();
    report!({ progress: 3 });
    const page = await rt.events(req.invocation_id);
    expect(page.events.map((e) => e.kind)).toEqual(['accepted', 'started', 'progress', 'succeeded']);
    expect(page.events[2]!.progress).toEqual({ progress: 1, total: 3, message: 'one' });
  });

  it('input is validated against the selected version of the spec', async () => {
    const rt = new Runtime();
    const v2 = spec({ version: '2.0.0', input_schema: { type: 'object', required: ['target'] } });
    const p = provider('uplink/test', [
      { spec: spec(), interactions: ['typed'] },
      { spec: v2, interactions: ['typed'] },
    ]);
    rt.register(p);
    expect((await rejection(rt.start(request({ version_requirement: '*' })))).code).toBe('input_schema_violation');
    await expect(rt.start(request({ version_requirement: '^1' }))).resolves.toMatchObject({ capability_version: '1.0.0' });
    await expect(rt.start(request({ version_requirement: '*', input: { target: 'x' } }))).resolves.toMatchObject({ capability_version: '2.0.0' });
  });

  it('offers handed to callers are frozen, so nobody can alter what the kernel pinned', async () => {
    const { rt } = setup();
    const [offer] = await rt.discover();
    expect(Object.isFrozen(offer)).toBe(true);
    expect(Object.isFrozen(offer!.provider)).toBe(true);
    expect(Object.isFrozen(offer!.capability.output_schema)).toBe(true);
  });

  it('after a rejected start nothing is retained and the id can be used again', async () => {
    const { rt } = setup();
    const req = request({ input: { channel: 1 } });
    await rejection(rt.start(req));
    await expect(rt.start({ ...req, input: { channel: 'ok' } })).resolves.toBeDefined();
  });
});

describe('events paging', () => {
  it('the cursor is exclusive and next_cursor is the last returned sequence', async () => {
    const { rt } = setup();
    const req = request();
    await rt.start(req);
    await settle();
    expect(await rt.events(req.invocation_id, 1)).toMatchObject({ next_cursor: 3, terminal: true });
    expect((await rt.events(req.invocation_id, 1)).events.map((e) => e.sequence)).toEqual([2, 3]);
    expect(await rt.events(req.invocation_id, 3)).toEqual({ events: [], next_cursor: 3, terminal: true });
    expect(await rt.events(req.invocation_id, 10)).toEqual({ events: [], next_cursor: 10, terminal: true });
  });

  it('terminal is false while the invocation is active', async () => {
    const gate = deferred<{ output: { text: string } }>();
    const { rt } = setup(() => gate.promise);
    const req = request();
    await rt.start(req);
    expect(await rt.events(req.invocation_id)).toMatchObject({ next_cursor: 2, terminal: false });
    expect((await rt.get(req.invocation_id)).state).toBe('running');
    gate.resolve({ output: { text: 'x' } });
    await settle();
    expect(await rt.events(req.invocation_id, 2)).toMatchObject({ next_cursor: 3, terminal: true });
    expect(await kinds(rt, req.invocation_id)).toEqual(['accepted', 'started', 'succeeded']);
  });

  it('an invalid cursor is invalid_request', async () => {
    const { rt } = setup();
    const req = request();
    await rt.start(req);
    for (const bad of [-1, 1.5, '2', Number.NaN]) expect((await rejection(rt.events(req.invocation_id, bad as never))).code).toBe('invalid_request');
  });
});
