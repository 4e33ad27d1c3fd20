import { describe, expect, it } from 'vitest';
import type { CapabilityProvider, CapabilitySpec } from '../../../src/main/kernel';
import { Runtime, SoftwareUseError } from '../../../src/main/kernel';
import { provider, spec } from './helpers';

function registerThrows(runtime: Runtime, p: CapabilityProvider, pattern: RegExp): void {
  let thrown: unknown;
  try {
    runtime.register(p);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(SoftwareUseError);
  expect((thrown as Error).message).toMatch(pattern);
}

describe('register', () => {
  it('accepts a valid provider and lists it with its canonical specs', () => {
    const rt = new Runtime();
    rt.register(provider('uplink/tmux'));
    expect(rt.providers()).toEqual([
      {
        descriptor: { id: 'uplink/tmux', version: '1.0.0', name: 'uplink/tmux', description: 'provider uplink/tmux' },
        capabilities: [{ spec: spec(), interactions: ['typed'] }],
      },
    ]);
    expect(rt.specFor('app.read', '1.0.0')).toEqual(spec());
    expect(rt.specFor('app.read', '2.0.0')).toBeUndefined();
  });

  it('unregister removes a provider, its offers and the specs nobody else offers, so a new contract can take the id', () => {
    const rt = new Runtime();
    rt.register(provider('a'));
    rt.register(provider('b', [{ spec: spec({ id: 'other.cap' }), interactions: ['typed'] }]));
    expect(rt.unregister('a')).toBe(true);
    expect(rt.unregister('a')).toBe(false);
    expect(rt.providers().map((p) => p.descriptor.id)).toEqual(['b']);
    expect(rt.specFor('app.read', '1.0.0')).toBeUndefined();
    expect(rt.specFor('other.cap', '1.0.0')).toBeDefined();
    // Same id and version, another schema: refused while registered, accepted once the old one is gone.
    expect(() => rt.register(provider('a', [{ spec: spec({ description: 'changed' }), interactions: ['typed'] }]))).not.toThrow();
  });

  it('duplicate provider id is rejected', () => {
    const rt = new Runtime();
    rt.register(provider('p'));
    registerThrows(rt, provider('p', [{ spec: spec({ id: 'other.cap' }), interactions: ['typed'] }]), /already registered/);
  });

  it('an identical spec from a second provider is accepted, whatever its key order', () => {
    const rt = new Runtime();
    rt.register(provider('a'));
    const s = spec();
    const reordered = JSON.parse(
      JSON.stringify({
        safety: s.safety,
        output_schema: s.output_schema,
        input_schema: { additionalProperties: false, required: ['channel'], properties: { channel: { type: 'string' } }, type: 'object' },
        description: s.description,
        title: s.title,
        version: s.version,
        id: s.id,
      }),
    ) as CapabilitySpec;
    expect(() => rt.register(provider('b', [{ spec: reordered, interactions: ['semantic_ui'] }]))).not.toThrow();
    expect(rt.providers().map((p) => p.descriptor.id)).toEqual(['a', 'b']);
  });

  const conflicts: Array<[string, Partial<CapabilitySpec>]> = [
    ['input_schema', { input_schema: { type: 'object' } }],
    ['output_schema', { output_schema: { type: 'object', properties: { text: { type: 'number' } } } }],
    ['safety', { safety: 'mutating' }],
    ['title', { title: 'Read!' }],
    ['description', { description: 'Reads something else.' }],
  ];
  for (const [field, change] of conflicts) {
    it(`a spec that differs from the canonical one in ${field} is rejected`, () => {
      const rt = new Runtime();
      rt.register(provider('a'));
      registerThrows(rt, provider('b', [{ spec: spec(change), interactions: ['typed'] }]), /conflicts with the canonical spec/);
      expect(rt.providers().map((p) => p.descriptor.id)).toEqual(['a']);
    });
  }

  it('the same id at another version is a separate spec', () => {
    const rt = new Runtime();
    rt.register(provider('a'));
    expect(() => rt.register(provider('b', [{ spec: spec({ version: '2.0.0', safety: 'mutating' }), interactions: ['typed'] }]))).not.toThrow();
  });

  it('an empty interactions list is rejected', () => {
    registerThrows(new Runtime(), provider('a', [{ spec: spec(), interactions: [] }]), /non-empty interactions/);
  });

  it('an unknown or repeated interaction kind is rejected', () => {
    registerThrows(new Runtime(), provider('a', [{ spec: spec(), interactions: ['typed', 'mouse' as never] }]), /unknown interaction/);
    registerThrows(new Runtime(), provider('a', [{ spec: spec(), interactions: ['typed', 'typed'] }]), /twice/);
  });

  it('an invalid provider or capability identifier is rejected', () => {
    registerThrows(new Runtime(), provider('Bad_Id'), /provider id is not a valid identifier/);
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ id: 'two..dots' }), interactions: ['typed'] }]), /capability id is not a valid identifier/);
  });

  it('a schema that does not compile under Draft 2020-12 is rejected', () => {
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ input_schema: { type: 'banana' } }), interactions: ['typed'] }]), /Draft 2020-12/);
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ output_schema: { $ref: '#/$defs/missing' } }), interactions: ['typed'] }]), /Draft 2020-12/);
  });

  it('Draft 2020-12 keywords compile (prefixItems, $defs, unevaluatedProperties)', () => {
    const input = {
      type: 'object',
      $defs: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
      properties: { channel: { type: 'string' }, p: { $ref: '#/$defs/pair' } },
      unevaluatedProperties: false,
    };
    expect(() => new Runtime().register(provider('a', [{ spec: spec({ input_schema: input }), interactions: ['typed'] }]))).not.toThrow();
  });

  it('two different specs may reuse a schema $id', () => {
    const rt = new Runtime();
    rt.register(provider('a', [{ spec: spec({ input_schema: { $id: 'https://example.com/schemas/x', type: 'object' } }), interactions: ['typed'] }]));
    expect(() =>
      rt.register(
        provider('b', [{ spec: spec({ id: 'app.other', input_schema: { $id: 'https://example.com/schemas/x', type: 'string' } }), interactions: ['typed'] }]),
      ),
    ).not.toThrow();
  });

  it('a non-semver version, missing text or bad safety is rejected', () => {
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ version: 'v1' }), interactions: ['typed'] }]), /semver/);
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ title: 3 as never }), interactions: ['typed'] }]), /title and description/);
    registerThrows(new Runtime(), provider('a', [{ spec: spec({ safety: 'safe' as never }), interactions: ['typed'] }]), /safety/);
  });

  it('a capability listed twice by one provider is rejected', () => {
    registerThrows(
      new Runtime(),
      provider('a', [
        { spec: spec(), interactions: ['typed'] },
        { spec: spec(), interactions: ['visual_ui'] },
      ]),
      /listed twice/,
    );
  });

  it('a failed register leaves the runtime unchanged', async () => {
    const rt = new Runtime();
    registerThrows(
      rt,
      provider('a', [
        { spec: spec({ id: 'good.one' }), interactions: ['typed'] },
        { spec: spec({ input_schema: { type: 'banana' } }), interactions: ['typed'] },
      ]),
      /Draft 2020-12/,
    );
    expect(rt.providers()).toEqual([]);
    expect(await rt.discover()).toEqual([]);
    expect(rt.specFor('good.one', '1.0.0')).toBeUndefined();
    expect(() => rt.register(provider('a', [{ spec: spec({ id: 'good.one', title: 'Other' }), interactions: ['typed'] }]))).not.toThrow();
  });

  it('an object without the provider port methods is rejected', () => {
    registerThrows(new Runtime(), { descriptor: () => ({}) } as unknown as CapabilityProvider, /descriptor\(\), capabilities\(\) and invoke\(\)/);
  });

  it('a throwing descriptor() or capabilities() is rejected', () => {
    const p = provider('a');
    registerThrows(
      new Runtime(),
      {
        ...p,
        descriptor: () => {
          throw new Error('boom');
        },
      },
      /descriptor\(\) threw/,
    );
    registerThrows(
      new Runtime(),
      {
        ...p,
        capabilities: () => {
          throw new Error('boom');
        },
      },
      /capabilities\(\) threw/,
    );
  });

  it('mutating the provider spec after register does not change the canonical spec', () => {
    const s = spec();
    const rt = new Runtime();
    rt.register(provider('a', [{ spec: s, interactions: ['typed'] }]));
    (s.input_schema as { type: string }).type = 'string';
    s.title = 'Changed';
    expect(rt.specFor('app.read', '1.0.0')).toEqual(spec());
  });

  it('canonical specs handed out are frozen', () => {
    const rt = new Runtime();
    rt.register(provider('a'));
    const canonical = rt.specFor('app.read', '1.0.0')!;
    expect(Object.isFrozen(canonical)).toBe(true);
    expect(Object.isFrozen(canonical.input_schema)).toBe(true);
  });
});

describe('register with hostile providers', () => {
  it('a provider whose getters or proxy traps throw is rejected with a SoftwareUseError and changes nothing', async () => {
    const trap = (): never => {
      throw new Error('trap');
    };
    const good = provider('a');
    const hostile: unknown[] = [
      new Proxy(good, { get: trap }),
      { ...good, descriptor: () => new Proxy({ id: 'a', version: '1.0.0', name: 'a', description: 'a' }, { get: trap }) },
      { ...good, capabilities: () => [Object.defineProperty({ interactions: ['typed'] }, 'spec', { get: trap, enumerable: true })] },
      { ...good, capabilities: () => [{ spec: new Proxy(spec(), { get: trap }), interactions: ['typed'] }] },
      { ...good, capabilities: () => new Proxy([], { get: trap }) },
    ];
    for (const p of hostile) {
      const rt = new Runtime();
      registerThrows(rt, p as CapabilityProvider, /cannot register provider/);
      expect(rt.providers()).toEqual([]);
      expect(await rt.discover()).toEqual([]);
    }
  });
});
