/**
 * Kernel benchmark: per-invocation latency of a no-op read_only capability through
 * `start` → terminal versus calling the provider directly (the difference is the kernel's
 * overhead), throughput with 1,000 invocations in flight, and heap bytes per retained terminal
 * invocation at 10,000 retained. Terminal states are awaited through `subscribe`, not polling.
 */
import { Runtime } from '../src/main/kernel';
import type { CapabilityProvider, InvocationRequest, ProviderCall, RuntimeEvent } from '../src/main/kernel';
import type { BenchReport } from './types';
import { median } from './types';

const SPEC = {
  id: 'bench.noop',
  version: '1.0.0',
  title: 'No-op',
  description: 'Returns an empty object.',
  input_schema: { type: 'object', properties: { channel: { type: 'string' } }, additionalProperties: false },
  output_schema: { type: 'object' },
  safety: 'read_only' as const,
};

const provider: CapabilityProvider = {
  descriptor: () => ({ id: 'bench/noop', version: '1.0.0', name: 'No-op', description: 'Benchmark provider.' }),
  capabilities: () => [{ spec: SPEC, interactions: ['typed'] }],
  invoke: (_call: ProviderCall, _signal: AbortSignal) => Promise.resolve({ output: {} }),
};

let serial = 0;
const request = (): InvocationRequest => ({
  invocation_id: `bench-${++serial}`,
  capability_id: 'bench.noop',
  version_requirement: '^1',
  input: { channel: 'tmux:%1' },
  constraints: {},
});

const isTerminal = (e: RuntimeEvent): boolean => e.kind === 'succeeded' || e.kind === 'failed' || e.kind === 'cancelled';

/** A runtime plus a way to await one invocation's terminal event. */
function harness(maxRetained = 10_000): { runtime: Runtime; run: () => Promise<void> } {
  const runtime = new Runtime({ maxRetained });
  runtime.register(provider);
  const waiting = new Map<string, () => void>();
  runtime.subscribe((e) => {
    if (!isTerminal(e)) return;
    const done = waiting.get(e.invocation_id);
    if (done) {
      waiting.delete(e.invocation_id);
      done();
    }
  });
  const run = (): Promise<void> => {
    const req = request();
    const done = new Promise<void>((resolve) => waiting.set(req.invocation_id, resolve));
    return runtime.start(req).then(() => done);
  };
  return { runtime, run };
}

/** Median over batches of the mean µs per call of `fn`, run sequentially. */
async function perCall(fn: () => Promise<unknown>, batches: number, size: number): Promise<number> {
  const samples: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < size; i++) await fn();
    samples.push(((performance.now() - t0) * 1000) / size);
  }
  return median(samples);
}

async function latency(): Promise<{ kernel: number; direct: number }> {
  const { runtime, run } = harness();
  const offer = (await runtime.discover({ capability_id: 'bench.noop' }))[0]!;
  const signal = new AbortController().signal;
  const direct = (): Promise<unknown> => provider.invoke({ request: request(), offer }, signal);
  // Warm up both paths so the JIT has compiled them before we measure.
  await perCall(run, 5, 2_000);
  await perCall(direct, 5, 2_000);
  const kernel = await perCall(run, 41, 1_000);
  const directUs = await perCall(direct, 41, 1_000);
  return { kernel, direct: directUs };
}

async function throughput(inFlight: number, total: number): Promise<number> {
  const { run } = harness();
  const t0 = performance.now();
  let started = 0;
  await new Promise<void>((resolve, reject) => {
    let finished = 0;
    const next = (): void => {
      if (started >= total) return;
      started++;
      run().then(() => {
        finished++;
        if (finished === total) resolve();
        else next();
      }, reject);
    };
    for (let i = 0; i < inFlight; i++) next();
  });
  return total / ((performance.now() - t0) / 1000);
}

function collect(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc (node scripts/bench.mjs kernel does)');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

async function heapPerRetained(count: number): Promise<number> {
  const { runtime, run } = harness(count);
  await run(); // first invocation allocates lazily-created structures; not counted
  const before = collect();
  const batch = 500;
  for (let i = 0; i < count - 1; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, count - 1 - i) }, run));
  }
  const after = collect();
  const snapshot = await runtime.get(`bench-${serial}`);
  if (snapshot.state !== 'succeeded') throw new Error('bench invocation did not succeed');
  return (after - before) / (count - 1);
}

export async function run(): Promise<BenchReport> {
  const heap = await heapPerRetained(10_000);
  const { kernel, direct } = await latency();
  const rate = await throughput(1_000, 200_000);
  return {
    title: 'kernel (sua runtime)',
    rows: [
      { name: 'start → terminal, no-op read_only (median)', value: kernel, unit: 'µs/inv' },
      { name: 'provider called directly (median)', value: direct, unit: 'µs/inv' },
      { name: 'kernel overhead', value: kernel - direct, unit: 'µs/inv', note: 'target ≤ 20' },
      { name: 'throughput, 1,000 in flight', value: Math.round(rate), unit: 'inv/s' },
      { name: 'heap per retained terminal invocation @10,000', value: Math.round(heap), unit: 'bytes', note: 'target ≤ 4096' },
    ],
  };
}
