/**
 * Interaction selection through the real kernel: the desktop driver registered as two providers
 * (`uplink/desktop-semantic`, `uplink/desktop-visual`) the way the hub maps drivers to providers.
 * The kernel prefers semantic_ui, honours a visual_ui constraint, and reports
 * `constraint_unsatisfied` when no provider can serve the constraint; never a fallback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runtime, SoftwareUseError } from '../../../src/main/kernel';
import type { CapabilityProvider, InteractionKind, InvocationConstraints, InvocationSnapshot, JsonValue, ProviderCall } from '../../../src/main/kernel';
import { isMutating } from '../../../src/main/drivers/contract';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { addrOf, channelOf, semanticChannelOf, startFixture } from './apps';
import type { App } from './apps';
import { startSession, waitFor } from './session';
import type { DesktopSession } from './session';
import { validated } from '../../fixtures/validated-driver';

/** One kernel provider per interaction kind over the desktop driver (mirrors src/main/hub/channels/driver-provider.ts). */
function providerFor(driver: DesktopDriver, kind: 'semantic_ui' | 'visual_ui'): CapabilityProvider {
  const id = kind === 'semantic_ui' ? 'uplink/desktop-semantic' : 'uplink/desktop-visual';
  return {
    descriptor: () => ({ id, version: '1.0.0', name: `desktop (${kind})`, description: driver.info().summary }),
    capabilities: () =>
      driver
        .ops()
        .filter((op) => (op.interactions ?? []).includes(kind))
        .map((op) => ({
          spec: {
            id: `desktop.${op.op}`,
            version: '1.0.0',
            title: `desktop ${op.op}`,
            description: op.summary,
            input_schema: {
              type: 'object',
              properties: { channel: { type: 'string' }, args: op.params_schema },
              required: ['channel', 'args'],
              additionalProperties: false,
            },
            output_schema: op.result_schema,
            safety: isMutating(op) ? 'mutating' : 'read_only',
          },
          interactions: [kind],
        })),
    invoke: async (call: ProviderCall, signal: AbortSignal) => {
      const input = call.request.input as { channel: string; args: JsonValue };
      const op = call.request.capability_id.slice('desktop.'.length);
      const output = await driver.invoke(input.channel.slice('desktop:'.length), op, input.args, { interaction: call.offer.interaction }, signal);
      return { output };
    },
  };
}

let session: DesktopSession;
let driver: DesktopDriver;
let runtime: Runtime;
let app: App;
let addr: string;
let seq = 0;

/** Starts an invocation the way the hub does: the channel's available kinds constrain selection. */
async function invoke(op: string, args: JsonValue, constraints: InvocationConstraints = {}, channel = addr): Promise<InvocationSnapshot> {
  const available = await driver.interactionsFor(channel);
  const forced: InvocationConstraints = { ...constraints };
  // The hub's rule: when the channel lacks semantic_ui, selection is constrained to what it has.
  if (!forced.interaction && !available.includes('semantic_ui') && available.length > 0) forced.interaction = available[0] as InteractionKind;
  const receipt = await runtime.start({
    invocation_id: `desktop-sel-${++seq}`,
    capability_id: `desktop.${op}`,
    version_requirement: '^1',
    input: { channel: `desktop:${channel}`, args },
    constraints: forced,
  });
  return waitFor(`invocation ${receipt.invocation_id} to finish`, async () => {
    const snap = await runtime.get(receipt.invocation_id);
    return ['succeeded', 'failed', 'cancelled'].includes(snap.state) ? snap : undefined;
  });
}

beforeAll(async () => {
  session = await startSession();
  driver = validated(createDesktopDriver({ env: session.env }));
  runtime = new Runtime({ policy: () => ({ kind: 'permit' }) });
  runtime.register(providerFor(driver, 'semantic_ui'));
  runtime.register(providerFor(driver, 'visual_ui'));
  app = await startFixture(session, ['--title', 'Selection Fixture']);
  addr = addrOf(await semanticChannelOf(driver, app.pid));
});

afterAll(async () => {
  runtime?.dispose();
  await app?.stop();
  await driver?.dispose();
  await session?.stop();
});

describe('kernel selection over the desktop providers', () => {
  it('picks semantic_ui by default for an op both kinds serve', async () => {
    const snap = await invoke('type', { text: 'sem' });
    expect(snap.state).toBe('succeeded');
    expect(snap.receipt).toMatchObject({ provider_id: 'uplink/desktop-semantic', interaction: 'semantic_ui' });
    expect(snap.result?.output).toMatchObject({ confirmed: true });
    await app.state((s) => s.entry === 'sem', 'entry = "sem" via AT-SPI');
  });

  it('picks visual_ui when the caller constrains to it', async () => {
    const entry = (
      (await driver.invoke(addr, 'find', { role: 'text' }, { interaction: 'semantic_ui' })) as {
        matches: Array<{ bounds: { x: number; y: number; width: number; height: number } }>;
      }
    ).matches[0]!.bounds;
    const click = await invoke('click', { x: entry.x + Math.floor(entry.width / 2), y: entry.y + Math.floor(entry.height / 2) }, { interaction: 'visual_ui' });
    expect(click.receipt.interaction).toBe('visual_ui');
    await invoke('key', { chord: 'End' });
    const snap = await invoke('type', { text: '+vis' }, { interaction: 'visual_ui' });
    expect(snap.state).toBe('succeeded');
    expect(snap.receipt).toMatchObject({ provider_id: 'uplink/desktop-visual', interaction: 'visual_ui' });
    await app.state((s) => s.entry === 'sem+vis', 'entry = "sem+vis" via XTest');
  });

  it('every op result passes the kernel output schema check', async () => {
    for (const [op, args] of [
      ['observe', {}],
      ['tree', { max_depth: 3 }],
      ['find', { role: 'push button' }],
      ['screenshot', { max_width: 100 }],
      ['activate', { path: '//push button[Count]' }],
      ['set-text', { path: '//text[Name]', text: 'schema' }],
      ['key', { chord: 'ctrl+a' }],
    ] as const) {
      const snap = await invoke(op, args);
      expect({ op, state: snap.state, error: snap.error }).toEqual({ op, state: 'succeeded', error: undefined });
    }
    await app.state((s) => s.entry === 'schema', 'entry = "schema"');
  });

  it('reports constraint_unsatisfied when no provider can serve the constraint', async () => {
    for (const [op, args, interaction] of [
      ['tree', {}, 'visual_ui'],
      ['click', { x: 1, y: 1 }, 'semantic_ui'],
      ['type', { text: 'x' }, 'typed'],
    ] as const) {
      const error = await runtime
        .start({
          invocation_id: `desktop-sel-${++seq}`,
          capability_id: `desktop.${op}`,
          version_requirement: '^1',
          input: { channel: `desktop:${addr}`, args },
          constraints: { interaction },
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SoftwareUseError);
      expect((error as SoftwareUseError).code).toBe('constraint_unsatisfied');
    }
  });

  it('a window whose app exposes no accessibility tree is served through visual_ui only, with no fallback when semantic is forced', async () => {
    const plain = await startFixture({ ...session, env: { ...session.env, NO_AT_BRIDGE: '1' } }, ['--title', 'No A11y Fixture']);
    try {
      const channel = await channelOf(driver, plain.pid);
      expect((channel.detail as { interactions: string[] }).interactions).toEqual(['visual_ui']);
      const plainAddr = addrOf(channel);
      expect(await driver.interactionsFor(plainAddr)).toEqual(['visual_ui']);
      const typed = await invoke('type', { text: 'pixels' }, {}, plainAddr);
      expect(typed.receipt.interaction).toBe('visual_ui');
      await plain.state((s) => s.entry === 'pixels', 'entry = "pixels"');
      const forced = await invoke('tree', {}, { interaction: 'semantic_ui' }, plainAddr);
      expect(forced.state).toBe('failed');
      expect(forced.error?.code).toBe('provider_failed');
      expect(forced.receipt.provider_id).toBe('uplink/desktop-semantic');
    } finally {
      await plain.stop();
    }
  });
});
