/**
 * What still needs a test now that every shared wire shape is one TypeBox declaration (schema and
 * type from one source): the restated kernel and driver types match the originals, and the
 * schemas themselves say what a receiver relies on.
 */
import { describe, expectTypeOf, it, expect } from 'vitest';
import type * as Shared from '../../../src/shared/wire';
import type * as Kernel from '../../../src/main/kernel/types';
import type * as Contract from '../../../src/main/drivers/contract';
import type { PanelApi } from '../../../src/shared/panel-api';
import { PANEL_CALLS, PANEL_EVENTS, PANEL_METHODS } from '../../../src/shared/panel-channels';
import { createPanelProxy } from '../../../src/shared/panel-proxy';
import { INTERACTION_KINDS, TERMINAL_STATES } from '../../../src/shared/wire';
import { INTERACTION_KINDS as KERNEL_INTERACTION_KINDS, TERMINAL_STATES as KERNEL_TERMINAL_STATES } from '../../../src/main/kernel/types';
import { strictSchemaError } from '../../../src/main/kernel';
import type { RecordAgent } from '../../../src/shared/audit-record';
import { PendingApproval } from '../../../src/shared/approval';
import type { PromptAgent } from '../../../src/shared/approval';
import type * as Hub from '../../../src/main/hub/types';

describe('shared wire types', () => {
  it('restate the kernel and driver contract exactly (checked by tsc)', () => {
    expectTypeOf<Shared.JsonValue>().toEqualTypeOf<Kernel.JsonValue>();
    expectTypeOf<Shared.InteractionKind>().toEqualTypeOf<Kernel.InteractionKind>();
    expectTypeOf<Shared.InvocationState>().toEqualTypeOf<Kernel.InvocationState>();
    expectTypeOf<Shared.ErrorCode>().toEqualTypeOf<Kernel.ErrorCode>();
    expectTypeOf<Shared.SoftwareUseErrorWire>().toEqualTypeOf<Kernel.SoftwareUseErrorWire>();
    expectTypeOf<Shared.RuntimeEventKind>().toEqualTypeOf<Kernel.RuntimeEventKind>();
    expectTypeOf<Shared.RuntimeEvent>().toEqualTypeOf<Kernel.RuntimeEvent>();
    expectTypeOf<Shared.CapabilitySpec>().toEqualTypeOf<Kernel.CapabilitySpec>();
    expectTypeOf<Shared.ProviderDescriptor>().toEqualTypeOf<Kernel.ProviderDescriptor>();
    expectTypeOf<Shared.ProviderCapability>().toEqualTypeOf<Kernel.ProviderCapability>();
    expectTypeOf<Shared.ChannelEntry>().toEqualTypeOf<Contract.ChannelEntry>();
    expectTypeOf<Shared.OpSpec>().toEqualTypeOf<Contract.OpSpec>();
    expectTypeOf<Shared.DoctorReport>().toEqualTypeOf<Contract.DoctorReport>();
    expectTypeOf<Shared.ApprovalPreview>().toEqualTypeOf<Contract.ApprovalPreview>();
    expectTypeOf<Shared.TierSpec>().toEqualTypeOf<Contract.TierSpec>();
  });

  it('and the kernel lists the panel builds its filters from', () => {
    expect(INTERACTION_KINDS).toEqual(KERNEL_INTERACTION_KINDS);
    expect(TERMINAL_STATES).toEqual(KERNEL_TERMINAL_STATES);
  });

  it('the hub’s live identity fits what a record and a prompt keep of it (checked by tsc)', () => {
    expectTypeOf<Hub.AgentIdentity>().toMatchTypeOf<RecordAgent>();
    expectTypeOf<Hub.AgentIdentity>().toMatchTypeOf<PromptAgent>();
  });
});

type Node = Record<string, unknown>;

/** Every subschema of `schema` (properties, items, unions), itself included. */
function* subschemas(schema: Node, at = ''): Generator<[string, Node]> {
  yield [at || '/', schema];
  for (const [k, s] of Object.entries((schema.properties ?? {}) as Record<string, Node>)) yield* subschemas(s, `${at}/${k}`);
  if (schema.items && typeof schema.items === 'object') yield* subschemas(schema.items as Node, `${at}/items`);
  for (const s of (schema.anyOf ?? schema.oneOf ?? []) as Node[]) yield* subschemas(s, at);
}

/** Where an object schema of `schema` lets through properties it does not name. */
const openObjects = (schema: object): string[] =>
  [...subschemas(schema as Node)].filter(([, s]) => s.properties && s.additionalProperties !== false).map(([at]) => at);

describe('channel map', () => {
  const all = [
    ...Object.entries(PANEL_CALLS).flatMap(([m, c]) => [
      [`${m}.request`, c.request],
      [`${m}.response`, c.response],
    ]),
    ...Object.entries(PANEL_EVENTS),
  ] as Array<[string, Node]>;

  it('every schema compiles under ajv’s strict mode (TypeBox takes any option, a misspelt keyword too)', () => {
    const errors = all.flatMap(([name, schema]) => {
      const error = strictSchemaError(schema);
      return error ? [`${name}: ${error}`] : [];
    });
    expect(errors).toEqual([]);
  });

  it('every request is closed at every depth: a field the hub does not know is refused, never passed on', () => {
    const open = Object.entries(PANEL_CALLS).flatMap(([m, c]) => openObjects(c.request).map((at) => `${m}${at}`));
    expect(open).toEqual([]);
  });

  it('a prompt is closed at every depth, as the fleet’s hubs receive it', () => {
    expect(openObjects(PendingApproval)).toEqual([]);
  });

  it('the generated proxy exposes exactly the methods of the map plus `on`', () => {
    const calls: string[] = [];
    const api: PanelApi = createPanelProxy({ invoke: async (m) => void calls.push(m), subscribe: () => () => {} });
    expect(Object.keys(api).sort()).toEqual([...PANEL_METHODS, 'on'].sort());
    void api.listRules();
    void api.decide({ approval_id: 'a', decision: 'deny' });
    expect(calls).toEqual(['listRules', 'decide']);
    expect(() => api.on('nope' as never, () => {})).toThrow('unknown panel event');
    expect(Object.isFrozen(api)).toBe(true);
  });
});
