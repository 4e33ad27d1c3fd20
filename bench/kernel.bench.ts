/**
 * Kernel benchmark: per-invocation latency of a no-op read_only capability through
 * `start` → terminal versus calling the provider directly (the difference is the kernel's
 * overhead), throughput with 1,000 invocations in flight, and memory per retained terminal
 * invocation under the default retention bound — with empty outputs (the kernel's own
 * bookkeeping) and with ~200 KB outputs (a screen read), after 1,000 and 10,000 invocations;
 * and what 10,000 such invocations leave behind when their host releases each one after `wait`,
 * as the hub does. Terminal states are awaited through `subscribe`, not polling.
 */
import { Runtime } from '../src/main/kernel';
import type { CapabilityProvider, InvocationRequest, ProviderCall, RuntimeEvent } from '../src/main/kernel';
import type { BenchReport, BenchRow } from './types';
import { median } from './types';
import { MiB, sampleMemory, screenText } from './payload';

const SPEC = {
  id: 'bench.noop',
  version: '1.0.0',
  title: 'No-op',
  description: 'Returns an empty object.',
  input_schema: { type: 'object', properties: { channel: { type: 'string' } }, additionalProperties: false },
  output_schema: { type: 'object' },
  safety: 'read_only' as const,
};

const PAYLOAD_BYTES = 200_000;

const provider: CapabilityProvider = {
  descriptor: () => ({ id: 'bench/noop', version: '1.0.0', name: 'No-op', description: 'Benchmark provider.' }),
  capabilities: () => [{ spec: SPEC, interactions: ['typed'] }],
  invoke: (_call: ProviderCall, _signal: AbortSignal) => Promise.resolve({ output: {} }),
};

/** Same capability, answering like a screen read: a fresh ~200 KB text per call. */
const reader: CapabilityProvider = {
  ...provider,
  invoke: (_call: ProviderCall, _signal: AbortSignal) => Promise.resolve({ output: { text: screenText(PAYLOAD_BYTES, serial) } }),
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
function harness(maxRetained?: number, using: CapabilityProvider = provider): { runtime: Runtime; run: () => Promise<void> } {
  const runtime = new Runtime(maxRetained === undefined ? {} : { maxRetained });
  runtime.register(using);
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

/** Per-call µs: wall time, and CPU time (user + system), which other processes on a shared machine disturb far less. */
interface PerCall {
  wall: number;
  cpu: number;
}

/** Mean µs per call of one batch of `size` sequential calls. */
async function batch(fn: () => Promise<unknown>, size: number): Promise<PerCall> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < size; i++) await fn();
  const c = process.cpuUsage(c0);
  return { wall: ((performance.now() - t0) * 1000) / size, cpu: (c.user + c.system) / size };
}

/**
 * Medians over `batches` rounds, each running a batch of `a` then one of `b` (so load drift hits
 * both alike); `overhead` is the median of the rounds' differences.
 */
async function alternating(a: () => Promise<unknown>, b: () => Promise<unknown>, batches: number, size: number) {
  const rows = { a: [] as PerCall[], b: [] as PerCall[] };
  for (let i = 0; i < batches; i++) {
    rows.a.push(await batch(a, size));
    rows.b.push(await batch(b, size));
  }
  const m = (xs: PerCall[], k: keyof PerCall): number => median(xs.map((x) => x[k]));
  const diff = (k: keyof PerCall): number => median(rows.a.map((x, i) => x[k] - rows.b[i]![k]));
  return {
    a: { wall: m(rows.a, 'wall'), cpu: m(rows.a, 'cpu') },
    b: { wall: m(rows.b, 'wall'), cpu: m(rows.b, 'cpu') },
    overhead: { wall: diff('wall'), cpu: diff('cpu') },
  };
}

async function latency() {
  const { runtime, run } = harness();
  const offer = (await runtime.discover({ capability_id: 'bench.noop' }))[0]!;
  const signal = new AbortController().signal;
  const direct = (): Promise<unknown> => provider.invoke({ request: request(), offer, context: undefined }, signal);
  // Warm up both paths so the JIT has compiled them before we measure.
  await alternating(run, direct, 5, 2_000);
  return alternating(run, direct, 41, 1_000);
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

/**
 * Heap + external bytes per retained terminal invocation under the default retention bound, after
 * each count in `checkpoints` (the first invocation, which allocates lazily-created structures,
 * is not counted).
 */
async function memoryPerRetained(using: CapabilityProvider, checkpoints: number[]): Promise<Map<number, number>> {
  const { runtime, run } = harness(undefined, using);
  await run();
  const base = sampleMemory();
  const perRetained = new Map<number, number>();
  let done = 1;
  for (const target of checkpoints) {
    while (done < target) {
      const n = Math.min(500, target - done);
      await Promise.all(Array.from({ length: n }, run));
      done += n;
    }
    const now = sampleMemory();
    perRetained.set(target, (now.heap + now.external - base.heap - base.external) / (target - 1));
  }
  const snapshot = await runtime.get(`bench-${serial}`);
  if (snapshot.state !== 'succeeded') throw new Error('bench invocation did not succeed');
  return perRetained;
}

/** Heap + external bytes above the start after `total` 200 KB invocations, each released once waited for. */
async function memoryReleased(total: number): Promise<number> {
  const runtime = new Runtime();
  runtime.register(reader);
  const once = async (): Promise<void> => {
    const { invocation_id: id } = await runtime.start(request());
    if ((await runtime.wait(id)).state !== 'succeeded') throw new Error('bench invocation did not succeed');
    runtime.release(id);
  };
  await once();
  const base = sampleMemory();
  for (let done = 1; done < total; done += 500) await Promise.all(Array.from({ length: Math.min(500, total - done) }, once));
  const now = sampleMemory();
  return now.heap + now.external - base.heap - base.external;
}

export async function run(): Promise<BenchReport> {
  const released = await memoryReleased(10_000);
  const empty = await memoryPerRetained(provider, [10_000]);
  const full = await memoryPerRetained(reader, [1_000, 10_000]);
  const { a: kernel, b: direct, overhead } = await latency();
  const rate = await throughput(1_000, 200_000);
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;
  const memoryRows: BenchRow[] = [
    {
      name: 'memory per retained invocation @10,000, empty output',
      value: Math.round(empty.get(10_000)!),
      unit: 'bytes',
      note: 'target ≤ 4096; heap + external after GC',
    },
    {
      name: 'memory per retained invocation @1,000, 200 KB output',
      value: Math.round(full.get(1_000)!),
      unit: 'bytes',
      note: `${kib(full.get(1_000)!)}: the output is kept`,
    },
    {
      name: 'memory per retained invocation @10,000, 200 KB output',
      value: Math.round(full.get(10_000)!),
      unit: 'bytes',
      note: `${((full.get(10_000)! * 9_999) / MiB).toFixed(0)} MiB in all at the default bound of 10,000`,
    },
    {
      name: 'memory left by 10,000 × 200 KB invocations, each released after wait',
      value: released / MiB,
      unit: 'MiB',
      note: 'what the hub does once it has the terminal snapshot',
    },
  ];
  return {
    title: 'kernel (sua runtime)',
    rows: [
      { name: 'start → terminal, no-op read_only (median)', value: kernel.wall, unit: 'µs/inv', note: `CPU ${kernel.cpu.toFixed(2)} µs` },
      { name: 'provider called directly (median)', value: direct.wall, unit: 'µs/inv', note: `CPU ${direct.cpu.toFixed(2)} µs` },
      { name: 'kernel overhead', value: overhead.wall, unit: 'µs/inv', note: 'median of alternating batches; target ≤ 20' },
      { name: 'kernel overhead, CPU time', value: overhead.cpu, unit: 'µs/inv', note: 'user + system; less disturbed by a loaded machine' },
      { name: 'throughput, 1,000 in flight', value: Math.round(rate), unit: 'inv/s' },
      ...memoryRows,
    ],
  };
}
