import { describe, expectTypeOf, it, expect } from 'vitest';
import type * as Shared from '../../../src/shared/wire';
import type * as Kernel from '../../../src/main/kernel/types';
import type * as Contract from '../../../src/main/drivers/contract';
import type { PanelApi, PanelCalls, PanelEvents } from '../../../src/shared/panel-api';
import type { PANEL_EVENTS } from '../../../src/shared/panel-channels';
import { PANEL_CALLS, PANEL_METHODS } from '../../../src/shared/panel-channels';
import { createPanelProxy } from '../../../src/shared/panel-proxy';
import { INTERACTION_KINDS, INVOCATION_STATES, RUNTIME_EVENT_KINDS, TERMINAL_STATES } from '../../../src/shared/wire';
import { TERMINAL_STATES as KERNEL_TERMINAL_STATES } from '../../../src/main/kernel/types';
import type { AuditRecord, RecordAgent } from '../../../src/shared/audit-record';
import type { TimelineEvent } from '../../../src/shared/panel-types';
import type * as Hub from '../../../src/main/hub/types';

describe('shared wire types', () => {
  it('the kind and state lists the panel schemas are built from name every member of their union, once', () => {
    const kinds: Record<Shared.RuntimeEventKind, true> = { accepted: true, started: true, cancellation_requested: true, succeeded: true, failed: true, cancelled: true, approval_requested: true, approval_granted: true, approval_denied: true, progress: true };
    const states: Record<Shared.InvocationState, true> = { accepted: true, running: true, succeeded: true, failed: true, cancelled: true };
    const interactions: Record<Shared.InteractionKind, true> = { typed: true, semantic_ui: true, visual_ui: true };
    expect([...RUNTIME_EVENT_KINDS].sort()).toEqual(Object.keys(kinds).sort());
    expect([...INVOCATION_STATES].sort()).toEqual(Object.keys(states).sort());
    expect([...INTERACTION_KINDS]).toEqual(['typed', 'semantic_ui', 'visual_ui']);
    expect(Object.keys(interactions)).toHaveLength(INTERACTION_KINDS.length);
    expect(TERMINAL_STATES).toEqual(KERNEL_TERMINAL_STATES);
  });


  it('are structurally identical to the kernel and driver contract (checked by tsc)', () => {
    expectTypeOf<Shared.JsonValue>().toEqualTypeOf<Kernel.JsonValue>();
    expectTypeOf<Shared.InteractionKind>().toEqualTypeOf<Kernel.InteractionKind>();
    expectTypeOf<Shared.InvocationState>().toEqualTypeOf<Kernel.InvocationState>();
    expectTypeOf<Shared.ErrorCode>().toEqualTypeOf<Kernel.ErrorCode>();
    expectTypeOf<Shared.RuntimeEventKind>().toEqualTypeOf<Kernel.RuntimeEventKind>();
    expectTypeOf<Shared.RuntimeEvent>().toEqualTypeOf<Kernel.RuntimeEvent>();
    expectTypeOf<Shared.CapabilitySpec>().toEqualTypeOf<Kernel.CapabilitySpec>();
    expectTypeOf<Shared.ProviderDescriptor>().toEqualTypeOf<Kernel.ProviderDescriptor>();
    expectTypeOf<Shared.ChannelEntry>().toEqualTypeOf<Contract.ChannelEntry>();
    expectTypeOf<Shared.OpSpec>().toEqualTypeOf<Contract.OpSpec>();
    expectTypeOf<Shared.DoctorReport>().toEqualTypeOf<Contract.DoctorReport>();
    expectTypeOf<Shared.ApprovalPreview>().toEqualTypeOf<Contract.ApprovalPreview>();
    expectTypeOf<Shared.TierSpec>().toEqualTypeOf<Contract.TierSpec>();
  });
});

describe('the audit record', () => {
  it('is one shape: the hub entry, the panel event and the stored agent are the schema-derived record (checked by tsc)', () => {
    expectTypeOf<AuditRecord['id']>().toEqualTypeOf<number>();
    expectTypeOf<AuditRecord['kind']>().toEqualTypeOf<Kernel.RuntimeEventKind | 'decision' | 'rejected'>();
    expectTypeOf<AuditRecord['state']>().toEqualTypeOf<Kernel.InvocationState | 'rejected' | undefined>();
    expectTypeOf<AuditRecord['args']>().toEqualTypeOf<Kernel.JsonValue | undefined>();
    expectTypeOf<RecordAgent>().toEqualTypeOf<{ kind: 'mcp' | 'cli' | 'panel'; agent_id?: string; name: string; version?: string; user?: string }>();
    expectTypeOf<Omit<Hub.AuditEntry, 'agent' | 'authorized'>>().toEqualTypeOf<Omit<AuditRecord, 'agent' | 'authorized'>>();
    expectTypeOf<Hub.AgentIdentity>().toMatchTypeOf<RecordAgent>();
    expectTypeOf<TimelineEvent>().toEqualTypeOf<Omit<AuditRecord, 'output'>>();
  });
});

describe('channel map', () => {
  it('has a request and response schema for every PanelApi call and a schema for every event', () => {
    expectTypeOf<keyof typeof PANEL_CALLS>().toEqualTypeOf<keyof PanelCalls>();
    expectTypeOf<keyof typeof PANEL_EVENTS>().toEqualTypeOf<keyof PanelEvents>();
    expect(PANEL_METHODS.length).toBe(Object.keys(PANEL_CALLS).length);
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
