import fc from 'fast-check';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import type { CapabilityOffer, CapabilitySpec, InteractionKind } from '../../../src/main/kernel';
import { Runtime } from '../../../src/main/kernel';
import { provider, rejection, request, spec } from './helpers';

const key = (o: CapabilityOffer): string => `${o.interaction} ${o.provider.id} ${o.capability.id}@${o.capability.version}`;

/** Three providers with overlapping offers, registered in the given order. */
function fixture(order: number[] = [0, 1, 2]): Runtime {
  const providers = [
    provider('zeta', [
      { spec: spec(), interactions: ['typed', 'visual_ui'] },
      { spec: spec({ version: '1.2.0' }), interactions: ['typed'] },
    ]),
    provider('alpha', [
      { spec: spec(), interactions: ['semantic_ui'] },
      { spec: spec({ id: 'app.write', safety: 'mutating' }), interactions: ['typed'] },
    ]),
    provider('mid', [{ spec: spec({ version: '2.0.0' }), interactions: ['typed', 'semantic_ui'] }]),
  ];
  const rt = new Runtime();
  for (const i of order) rt.register(providers[i]!);
  return rt;
}

describe('discovery', () => {
  it('orders by interaction preference, then provider id, then version (highest first)', async () => {
    expect((await fixture().discover()).map(key)).toEqual([
      'typed alpha app.write@1.0.0',
      'typed mid app.read@2.0.0',
      'typed zeta app.read@1.2.0',
      'typed zeta app.read@1.0.0',
      'semantic_ui alpha app.read@1.0.0',
      'semantic_ui mid app.read@2.0.0',
      'visual_ui zeta app.read@1.0.0',
    ]);
  });

  it('the order does not depend on registration order', async () => {
    const expected = (await fixture().discover()).map(key);
    for (const order of [
      [2, 1, 0],
      [1, 0, 2],
      [2, 0, 1],
    ])
      expect((await fixture(order).discover()).map(key)).toEqual(expected);
  });

  it('filters by capability id, version requirement, provider id and interaction', async () => {
    const rt = fixture();
    expect((await rt.discover({ capability_id: 'app.read', version_requirement: '^1' })).map(key)).toEqual([
      'typed zeta app.read@1.2.0',
      'typed zeta app.read@1.0.0',
      'semantic_ui alpha app.read@1.0.0',
      'visual_ui zeta app.read@1.0.0',
    ]);
    expect((await rt.discover({ provider_id: 'mid', interaction: 'semantic_ui' })).map(key)).toEqual(['semantic_ui mid app.read@2.0.0']);
    expect(await rt.discover({ capability_id: 'nobody.offers' })).toEqual([]);
  });

  it('a malformed query is rejected with invalid_request', async () => {
    const rt = fixture();
    expect((await rejection(rt.discover({ version_requirement: 'not a range' }))).code).toBe('invalid_request');
    expect((await rejection(rt.discover({ capability_id: 'Bad' }))).code).toBe('invalid_request');
    expect((await rejection(rt.discover({ interaction: 'mouse' as InteractionKind }))).code).toBe('invalid_request');
    expect((await rejection(rt.discover({ extra: 1 } as never))).code).toBe('invalid_request');
  });
});

describe('selection', () => {
  it('picks the first matching offer in discovery order', async () => {
    const rt = fixture();
    expect(await rt.start(request({ version_requirement: '*' }))).toMatchObject({ provider_id: 'mid', capability_version: '2.0.0', interaction: 'typed' });
    expect(await rt.start(request({ version_requirement: '^1' }))).toMatchObject({ provider_id: 'zeta', capability_version: '1.2.0', interaction: 'typed' });
    expect(await rt.start(request({ version_requirement: '~1.0.0' }))).toMatchObject({
      provider_id: 'zeta',
      capability_version: '1.0.0',
      interaction: 'typed',
    });
  });

  it('honours provider and interaction constraints as hard constraints', async () => {
    const rt = fixture();
    expect(await rt.start(request({ version_requirement: '^1', constraints: { interaction: 'semantic_ui' } }))).toMatchObject({
      provider_id: 'alpha',
      interaction: 'semantic_ui',
    });
    expect(await rt.start(request({ version_requirement: '^1', constraints: { provider_id: 'zeta', interaction: 'visual_ui' } }))).toMatchObject({
      provider_id: 'zeta',
      interaction: 'visual_ui',
      capability_version: '1.0.0',
    });
  });

  it('nobody offering the id is capability_unavailable', async () => {
    const e = await rejection(fixture().start(request({ capability_id: 'nobody.offers' })));
    expect(e.code).toBe('capability_unavailable');
    expect(e.message).toMatch(/hint:/);
  });

  it('a version requirement that no registered version satisfies is capability_unavailable', async () => {
    expect((await rejection(fixture().start(request({ version_requirement: '^3' })))).code).toBe('capability_unavailable');
  });

  it('offered within the range but not under the constraints is constraint_unsatisfied', async () => {
    const rt = fixture();
    expect((await rejection(rt.start(request({ constraints: { provider_id: 'nobody' } })))).code).toBe('constraint_unsatisfied');
    expect((await rejection(rt.start(request({ version_requirement: '^2', constraints: { interaction: 'visual_ui' } })))).code).toBe('constraint_unsatisfied');
  });

  it('a constraint met only outside the range is still constraint_unsatisfied, never relaxed', async () => {
    // mid offers 2.0.0 only; within ^1 nobody but zeta/alpha offers it.
    expect((await rejection(fixture().start(request({ version_requirement: '^1', constraints: { provider_id: 'mid' } })))).code).toBe('constraint_unsatisfied');
  });

  it('an invalid version requirement is invalid_request', async () => {
    expect((await rejection(fixture().start(request({ version_requirement: '>>1' })))).code).toBe('invalid_request');
  });

  it('explainSelection names the selected offer and why each candidate did or did not match', async () => {
    const rt = fixture();
    const ex = await rt.explainSelection({ capability_id: 'app.read', version_requirement: '^1', constraints: { interaction: 'semantic_ui' } });
    expect(ex.selected && key(ex.selected)).toBe('semantic_ui alpha app.read@1.0.0');
    expect(ex.error).toBeUndefined();
    expect(ex.candidates.map((c) => [key(c.offer), c.matched])).toEqual([
      ['typed mid app.read@2.0.0', false],
      ['typed zeta app.read@1.2.0', false],
      ['typed zeta app.read@1.0.0', false],
      ['semantic_ui alpha app.read@1.0.0', true],
      ['semantic_ui mid app.read@2.0.0', false],
      ['visual_ui zeta app.read@1.0.0', false],
    ]);
    expect(ex.candidates[0]!.reason).toMatch(/version 2\.0\.0 does not satisfy/);
    expect(ex.candidates[1]!.reason).toMatch(/interaction typed is not the required semantic_ui/);
    expect(ex.candidates[3]!.reason).toMatch(/^selected/);
  });

  it('explainSelection reports the same errors as start', async () => {
    const rt = fixture();
    expect((await rt.explainSelection({ capability_id: 'app.read', version_requirement: '^9' })).error?.code).toBe('capability_unavailable');
    expect((await rt.explainSelection({ capability_id: 'app.read', version_requirement: '^1', constraints: { provider_id: 'nope' } })).error?.code).toBe(
      'constraint_unsatisfied',
    );
    expect((await rt.explainSelection({ capability_id: 'app.read', version_requirement: 'what' })).error?.code).toBe('invalid_request');
  });
});

describe('selection properties', () => {
  const kinds: InteractionKind[] = ['typed', 'semantic_ui', 'visual_ui'];
  const offerArb = fc.record({
    provider: fc.constantFrom('p-a', 'p-b', 'p-c', 'q'),
    version: fc.constantFrom('1.0.0', '1.1.0', '2.0.0', '0.9.0'),
    interactions: fc.subarray(kinds, { minLength: 1 }),
  });

  /** Builds providers from generated offers (one spec per version, shared by all providers). */
  function build(offers: Array<{ provider: string; version: string; interactions: InteractionKind[] }>, order: number[]): Runtime {
    const byProvider = new Map<string, Array<{ spec: CapabilitySpec; interactions: InteractionKind[] }>>();
    for (const o of offers) {
      const list = byProvider.get(o.provider) ?? [];
      if (!list.some((c) => c.spec.version === o.version))
        list.push({ spec: spec({ version: o.version, input_schema: true, output_schema: true }), interactions: o.interactions });
      byProvider.set(o.provider, list);
    }
    const providers = [...byProvider].map(([id, caps]) => provider(id, caps));
    const rt = new Runtime();
    const registered = new Set<number>();
    for (const i of [...order, ...providers.keys()]) {
      if (i >= providers.length || registered.has(i)) continue;
      registered.add(i);
      rt.register(providers[i]!);
    }
    return rt;
  }

  it('discovery order and selection do not depend on registration order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(offerArb, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(7), { maxLength: 8 }),
        fc.constantFrom('*', '^1', '~1.0', '>=1.1.0', '^2'),
        fc.option(fc.constantFrom(...kinds), { nil: undefined }),
        async (offers, order, range, interaction) => {
          const a = build(offers, []);
          const b = build(offers, order);
          expect((await b.discover()).map(key)).toEqual((await a.discover()).map(key));
          const sel = { capability_id: 'app.read', version_requirement: range, constraints: interaction ? { interaction } : {} };
          const ea = await a.explainSelection(sel);
          const eb = await b.explainSelection(sel);
          expect(eb.selected && key(eb.selected)).toEqual(ea.selected && key(ea.selected));
          expect(eb.error?.code).toEqual(ea.error?.code);
          // Against an oracle: the order is the documented one, and selection is its first match.
          const listed = await b.discover();
          const rank = (o: CapabilityOffer): number => kinds.indexOf(o.interaction);
          for (let i = 1; i < listed.length; i++) {
            const [x, y] = [listed[i - 1]!, listed[i]!];
            const ordered =
              rank(x) < rank(y) ||
              (rank(x) === rank(y) &&
                (x.provider.id < y.provider.id || (x.provider.id === y.provider.id && semver.gte(x.capability.version, y.capability.version))));
            expect(ordered, `${key(x)} before ${key(y)}`).toBe(true);
          }
          const inRange = listed.filter((o) => semver.satisfies(o.capability.version, range));
          const expected = inRange.find((o) => interaction === undefined || o.interaction === interaction);
          expect(eb.selected && key(eb.selected)).toEqual(expected && key(expected));
          if (expected === undefined) expect(eb.error?.code).toBe(inRange.length === 0 ? 'capability_unavailable' : 'constraint_unsatisfied');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('start pins exactly the offer explainSelection selects', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(offerArb, { minLength: 1, maxLength: 6 }), fc.constantFrom('*', '^1', '^2', '<1'), async (offers, range) => {
        const rt = build(offers, []);
        const ex = await rt.explainSelection({ capability_id: 'app.read', version_requirement: range });
        const outcome = await rt.start(request({ version_requirement: range })).then(
          (r) => r,
          (e: { code: string }) => e.code,
        );
        if (ex.selected) {
          expect(outcome).toMatchObject({
            provider_id: ex.selected.provider.id,
            capability_version: ex.selected.capability.version,
            interaction: ex.selected.interaction,
          });
        } else {
          expect(outcome).toBe(ex.error?.code);
        }
      }),
      { numRuns: 60 },
    );
  });
});
