/** Test helpers for the kernel: spec/provider builders and a controllable provider. */
import type {
  CapabilitySpec,
  CapabilityProvider,
  InteractionKind,
  InvocationRequest,
  ProviderCall,
  ProviderOutput,
  RuntimeEvent,
} from '../../../src/main/kernel';
import type { Runtime } from '../../../src/main/kernel';

export function spec(overrides: Partial<CapabilitySpec> = {}): CapabilitySpec {
  return {
    id: 'app.read',
    version: '1.0.0',
    title: 'Read',
    description: 'Reads something.',
    input_schema: { type: 'object', properties: { channel: { type: 'string' } }, required: ['channel'], additionalProperties: false },
    output_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    safety: 'read_only',
    ...overrides,
  };
}

export type InvokeFn = (call: ProviderCall, signal: AbortSignal) => Promise<ProviderOutput>;

/** A provider whose calls are counted and whose behaviour the test chooses. */
export interface TestProvider extends CapabilityProvider {
  calls: ProviderCall[];
  signals: AbortSignal[];
}

export function provider(
  id: string,
  capabilities: Array<{ spec: CapabilitySpec; interactions: InteractionKind[] }> = [{ spec: spec(), interactions: ['typed'] }],
  invoke: InvokeFn = async () => ({ output: { text: 'ok' } }),
): TestProvider {
  const p: TestProvider = {
    calls: [],
    signals: [],
    descriptor: () => ({ id, version: '1.0.0', name: id, description: `provider ${id}` }),
    capabilities: () => capabilities,
    invoke: (call, signal) => {
      p.calls.push(call);
      p.signals.push(signal);
      return invoke(call, signal);
    },
  };
  return p;
}

let counter = 0;
export function request(overrides: Partial<InvocationRequest> = {}): InvocationRequest {
  return {
    invocation_id: `inv-${++counter}`,
    capability_id: 'app.read',
    version_requirement: '^1',
    input: { channel: 'tmux:%1' },
    constraints: {},
    ...overrides,
  };
}

/** A promise the test settles by hand. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Resolves with the invocation's events once its terminal event has been emitted. */
export function untilTerminal(runtime: Runtime, invocationId: string): Promise<RuntimeEvent[]> {
  return new Promise((resolve) => {
    const seen: RuntimeEvent[] = [];
    const stop = runtime.subscribe((e) => {
      if (e.invocation_id !== invocationId) return;
      seen.push(e);
      if (TERMINAL.has(e.kind)) {
        stop();
        resolve(seen);
      }
    });
  });
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
}

/** The kinds of an invocation's full history. */
export async function kinds(runtime: Runtime, invocationId: string): Promise<string[]> {
  return (await runtime.events(invocationId)).events.map((e) => e.kind);
}

/** The rejection of a promise (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; retryable: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; retryable: boolean };
  }
  throw new Error('expected a rejection');
}
