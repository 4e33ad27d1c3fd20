/**
 * Adversarial inputs: hostile request objects (proxies, throwing or shifting getters, huge
 * strings), callers and providers that mutate objects after handing them over, and secrets in
 * instance values or provider errors that must never reach an agent-facing error or event.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalOutcome, InvocationRequest, JsonValue, ProviderOutput, RuntimeEvent } from '../../../src/main/kernel';
import { Runtime, SoftwareUseError } from '../../../src/main/kernel';
import { deferred, provider, rejection, request, settle, spec, untilTerminal } from './helpers';

const trap = (): never => {
  throw new Error('trap SECRET-TRAP');
};

/** Request-shaped values that throw, lie or flood when read. */
function hostileRequests(): Array<[string, unknown]> {
  const base = (): Record<string, unknown> => ({ ...request() });
  return [
    ['a proxy whose getPrototypeOf trap throws', new Proxy(base(), { getPrototypeOf: trap })],
    ['a proxy whose get trap throws', new Proxy(base(), { get: trap })],
    ['a proxy whose ownKeys trap throws', new Proxy(base(), { ownKeys: trap })],
    ['a throwing invocation_id getter', Object.defineProperty(base(), 'invocation_id', { get: trap, enumerable: true })],
    ['a throwing getter deep inside input', { ...base(), input: { channel: 'x', deep: Object.defineProperty({}, 'k', { get: trap, enumerable: true }) } }],
    ['a proxy as input', { ...base(), input: new Proxy({ channel: 'x' }, { get: trap }) }],
    ['a throwing constraints getter', Object.defineProperty(base(), 'constraints', { get: trap, enumerable: true })],
    ['a 10 MB invocation_id', { ...base(), invocation_id: 'a'.repeat(10_000_000) }],
    ['a 10 MB capability_id', { ...base(), capability_id: 'a'.repeat(10_000_000) }],
    ['a 1 MB version_requirement', { ...base(), version_requirement: '^1 '.repeat(350_000) }],
    ['a symbol', Symbol('request')],
    ['a bigint input', { ...base(), input: 10n }],
    ['a function', () => request()],
  ];
}

/** Arguments for get/events/cancel that are not invocation ids. */
const hostileIds: unknown[] = [
  null,
  undefined,
  42,
  Symbol('id'),
  { toString: trap },
  new Proxy({}, { get: trap, getPrototypeOf: trap }),
  'a'.repeat(10_000_000),
  'Upper',
];

function setup(invoke?: Parameters<typeof provider>[2]) {
  const rt = new Runtime({ policy: () => ({ kind: 'permit' }) });
  const p = provider('uplink/test', undefined, invoke);
  rt.register(p);
  return { rt, p };
}

describe('hostile requests', () => {
  for (const [what, value] of hostileRequests()) {
    it(`start with ${what} rejects with invalid_request without a synchronous throw or a provider call`, async () => {
      const { rt, p } = setup();
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = rt.start(value as InvocationRequest))).not.toThrow();
      const e = await rejection(pending!);
      expect(e).toBeInstanceOf(SoftwareUseError);
      expect(e.code).toBe('invalid_request');
      expect(e.message).toMatch(/ — hint: /);
      expect(e.message).not.toContain('SECRET');
      expect(e.message.length).toBeLessThan(400);
      expect(p.calls).toHaveLength(0);
    });
  }

  it('get, events and cancel reject hostile ids and cursors with invalid_request, never synchronously', async () => {
    const { rt } = setup();
    await rt.start(request({ invocation_id: 'real-1' }));
    const calls: Array<() => Promise<unknown>> = [];
    for (const id of hostileIds)
      calls.push(
        () => rt.get(id as string),
        () => rt.events(id as string),
        () => rt.cancel(id as string),
      );
    for (const after of [null, '1', -1, 0.5, Number.MAX_SAFE_INTEGER + 2, { valueOf: trap }, new Proxy({}, { get: trap })])
      calls.push(() => rt.events('real-1', after as number));
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = call())).not.toThrow();
      const e = await rejection(pending!);
      expect(e).toBeInstanceOf(SoftwareUseError);
      expect(e.code).toBe('invalid_request');
    }
  });

  it('discover and explainSelection treat a hostile query as invalid_request', async () => {
    const { rt } = setup();
    for (const query of [
      new Proxy({}, { getPrototypeOf: trap }),
      new Proxy({}, { ownKeys: trap }),
      Object.defineProperty({}, 'capability_id', { get: trap, enumerable: true }),
    ]) {
      let pending: Promise<unknown> | undefined;
      expect(() => (pending = rt.discover(query as never))).not.toThrow();
      expect((await rejection(pending!)).code).toBe('invalid_request');
      expect((await rt.explainSelection(query as never)).error?.code).toBe('invalid_request');
    }
  });
});

describe('what was validated is what runs', () => {
  it('input the caller mutates while approval is pending reaches the provider as validated', async () => {
    const approval = deferred<ApprovalOutcome>();
    const rt = new Runtime({ policy: () => ({ kind: 'ask', approval: approval.promise }) });
    const p = provider('uplink/test');
    rt.register(p);
    const req = request({ input: { channel: 'tmux:%1' } });
    await rt.start(req);
    (req.input as { channel: unknown }).channel = 42; // would fail input_schema
    req.capability_id = 'other.cap';
    approval.resolve({ granted: true });
    await settle();
    expect(p.calls).toHaveLength(1);
    expect(p.calls[0]!.request.input).toEqual({ channel: 'tmux:%1' });
    expect(p.calls[0]!.request.capability_id).toBe('app.read');
  });

  it('an input getter that answers differently on a second read cannot slip past the schema', async () => {
    const { rt, p } = setup();
    let reads = 0;
    const input = Object.defineProperty({}, 'channel', { enumerable: true, get: () => (++reads === 1 ? 'tmux:%1' : 42) });
    const receipt = await rt.start(request({ input: input as JsonValue }));
    await settle();
    expect(reads).toBe(1);
    expect(p.calls[0]!.request.input).toEqual({ channel: 'tmux:%1' });
    expect((await rt.get(receipt.invocation_id)).state).toBe('succeeded');
  });

  it('an own "__proto__" key of input stays data and never becomes a prototype', async () => {
    const s = spec({ input_schema: { type: 'object' } });
    const rt2 = new Runtime();
    const p2 = provider('uplink/test', [{ spec: s, interactions: ['typed'] }]);
    rt2.register(p2);
    const input = JSON.parse('{"channel":"x","__proto__":{"polluted":true}}') as JsonValue;
    await rt2.start(request({ input }));
    await settle();
    const got = p2.calls[0]!.request.input as Record<string, unknown>;
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(got.polluted).toBeUndefined();
    expect(Object.keys(got)).toEqual(['channel', '__proto__']);
  });

  it('an output proxy that throws on a second read is judged on one read and never leaves the invocation running', async () => {
    let reads = 0;
    const { rt } = setup(async () => ({
      output: new Proxy({ text: 'a' }, { get: (t, k, r) => (k === 'text' && ++reads > 1 ? trap() : Reflect.get(t, k, r)) }) as never,
    }));
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    const events = await done;
    expect(events.map((e) => e.kind)).toEqual(['accepted', 'started', 'succeeded']);
    expect((await rt.get(req.invocation_id)).result).toEqual({ output: { text: 'a' } });
  });

  it('an output whose getter throws on the first read is provider_failed', async () => {
    const { rt } = setup(async () => ({ output: Object.defineProperty({}, 'text', { get: trap, enumerable: true }) as never }));
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    expect((await done).map((e) => e.kind)).toEqual(['accepted', 'started', 'failed']);
    const snap = await rt.get(req.invocation_id);
    expect(snap.error?.code).toBe('provider_failed');
    expect(JSON.stringify(snap)).not.toContain('SECRET');
  });

  it('a provider that mutates its output after resolving does not change the reported result', async () => {
    const out = { text: 'validated' };
    const { rt } = setup(async () => ({ output: out }));
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    await done;
    (out as { text: unknown }).text = 42;
    expect((await rt.get(req.invocation_id)).result).toEqual({ output: { text: 'validated' } });
  });
});

describe('secrets never reach agent-facing diagnostics', () => {
  const SECRET = 'sk-live-SECRET-0123456789';
  const strict = spec({
    input_schema: {
      type: 'object',
      properties: { channel: { type: 'string', pattern: '^tmux:' }, mode: { enum: ['read'] }, fixed: { const: 'v1' } },
      required: ['channel'],
    },
    output_schema: {
      type: 'object',
      properties: { text: { type: 'string', pattern: '^ok' }, mode: { enum: ['read'] }, fixed: { const: 'v1' } },
      required: ['text'],
    },
  });

  function watched(invoke?: Parameters<typeof provider>[2]) {
    const rt = new Runtime();
    rt.register(provider('uplink/test', [{ spec: strict, interactions: ['typed'] }], invoke));
    const live: RuntimeEvent[] = [];
    rt.subscribe((e) => live.push(e));
    return { rt, live };
  }

  for (const [keyword, input] of [
    ['pattern', { channel: SECRET }],
    ['enum', { channel: 'tmux:%1', mode: SECRET }],
    ['const', { channel: 'tmux:%1', fixed: SECRET }],
  ] as const) {
    it(`an input whose secret value fails ${keyword} is named by pointer and keyword only`, async () => {
      const { rt, live } = watched();
      const e = await rejection(rt.start(request({ input })));
      expect(e.code).toBe('input_schema_violation');
      expect(e.message).toContain(`keyword: ${keyword}`);
      expect(e.message).not.toContain(SECRET);
      expect(e.message).not.toContain('SECRET');
      expect(live).toEqual([]);
    });

    it(`an output whose secret value fails ${keyword} is named by pointer and keyword only`, async () => {
      const output = { text: 'ok', ...input, ...(keyword === 'pattern' ? { text: SECRET } : {}) } as Record<string, string>;
      delete output.channel;
      const { rt, live } = watched(async () => ({ output }) as ProviderOutput);
      const req = request({ input: { channel: 'tmux:%1' } });
      const done = untilTerminal(rt, req.invocation_id);
      await rt.start(req);
      await done;
      const snap = await rt.get(req.invocation_id);
      expect(snap.error?.code).toBe('output_schema_violation');
      expect(snap.error?.message).toContain(`keyword: ${keyword}`);
      expect(snap.result).toBeUndefined();
      const page = await rt.events(req.invocation_id);
      expect(JSON.stringify([snap, page, live])).not.toContain('SECRET');
    });
  }

  it('output keys the provider made up are masked in the output_schema_violation pointer; declared names and indices stay', async () => {
    const s = spec({
      output_schema: {
        type: 'object',
        properties: { files: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } },
        required: ['files'],
      },
    });
    const diagnostics: string[] = [];
    const rt = new Runtime({ onDiagnostic: (d) => diagnostics.push(d.detail) });
    rt.register(provider('uplink/test', [{ spec: s, interactions: ['typed'] }], async () => ({ output: { files: { [`/home/${SECRET}/key`]: ['ok', 7] } } })));
    const live: RuntimeEvent[] = [];
    rt.subscribe((e) => live.push(e));
    const req = request();
    const done = untilTerminal(rt, req.invocation_id);
    await rt.start(req);
    await done;
    const snap = await rt.get(req.invocation_id);
    expect(snap.error?.code).toBe('output_schema_violation');
    expect(snap.error?.message).toContain('JSON pointer "/files/*/1" (keyword: type)');
    expect(JSON.stringify([snap, await rt.events(req.invocation_id), live])).not.toContain('SECRET');
    expect(diagnostics.join('\n')).toContain(SECRET); // the operator sees the real pointer
  });

  const thrown: Array<[string, () => unknown]> = [
    ['an Error', () => new Error(`connect failed: token=${SECRET}`)],
    ['a string', () => `token=${SECRET}`],
    ['a SoftwareUseError it made up', () => new SoftwareUseError('invalid_request', `bad ${SECRET}`, true)],
    ['an object with a secret toString', () => ({ toString: () => SECRET, message: SECRET, code: 'cancelled' })],
  ];
  for (const [what, make] of thrown) {
    it(`a provider that rejects with ${what} carrying a secret yields the fixed provider_failed error everywhere`, async () => {
      const diagnostics: string[] = [];
      const rt = new Runtime({ onDiagnostic: (d) => diagnostics.push(d.detail) });
      rt.register(provider('uplink/test', undefined, () => Promise.reject(make())));
      const live: RuntimeEvent[] = [];
      rt.subscribe((e) => live.push(e));
      const req = request();
      const done = untilTerminal(rt, req.invocation_id);
      await rt.start(req);
      await done;
      const snap = await rt.get(req.invocation_id);
      expect(snap.error).toMatchObject({ code: 'provider_failed', retryable: false });
      expect(JSON.stringify([snap, await rt.events(req.invocation_id), live])).not.toContain('SECRET');
      expect(diagnostics.join('\n')).toContain('SECRET'); // the operator still gets the detail
    });
  }
});
