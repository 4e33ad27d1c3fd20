/**
 * Hub benchmarks: `channel_observe` round trips over stdio and Streamable HTTP, each beside a bare
 * MCP SDK server with one echo tool measured in the same run; audit-store write throughput (WAL)
 * and what a call's audit costs before its reply; the approval broker's added latency
 * (auto-approving operator, standing rule) over a plain permit. Needs `npm run build`
 * (dist/cli.mjs); bundles the fixture driver and the echo server (`bare-echo.ts`) itself. Servers
 * are measured call by call alternately (the target's figure: load drift hits all alike, and each
 * server waits between calls as it does for an agent); stdio is also measured in alternating
 * blocks of 100 calls, each server hot. Over stdio a second echo server, connected the way the
 * hub connects its own, shows the hub's own work apart from how requests are dispatched.
 * Memory: a hub's heap and RSS after 10,000 screen-read-sized (200 KB) and 1,000 screenshot-sized
 * (1 MB base64) results, above the same hub idle, each in a fresh process (`hub-memory.ts`).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundled, firstLine, OUT, ROOT } from './bundle';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AuditStore } from '../src/main/hub/audit/store';
import { createHub } from '../src/main/hub/hub-core';
import type { AgentIdentity } from '../src/main/hub';
import { createTestDriver } from '../test/fixtures/test-driver';
import { writeLauncherFile } from '../test/fixtures/launcher';
import { median } from './types';
import { MiB, type MemorySample } from './payload';
import type { BenchReport, BenchRow } from './types';

const WARMUP = 50;
const ROUNDS = 1000;
const BLOCK = 100;

const BARE_HTTP = `
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
const sessions = new Map();
const http = createServer(async (req, res) => {
  const chunks = []; for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const sid = req.headers['mcp-session-id'];
  let t = sid && sessions.get(sid);
  if (!t) {
    const s = new McpServer({ name: 'bare', version: '1.0.0' });
    s.tool('echo', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }] }));
    t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, t) });
    await s.connect(t);
  }
  await t.handleRequest(req, res, body);
});
http.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ url: 'http://127.0.0.1:' + http.address().port + '/mcp' }) + '\\n'));
`;

/** Medians (µs) of calls measured alternately, one of each in turn, so load drift on a shared machine hits all alike. */
async function timeAlternating(calls: Array<() => Promise<unknown>>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) for (const call of calls) await call();
  const samples = calls.map((): number[] => []);
  for (let i = 0; i < ROUNDS; i++) {
    for (let k = 0; k < calls.length; k++) {
      const t0 = performance.now();
      await calls[k]!();
      samples[k]!.push(performance.now() - t0);
    }
  }
  return samples.map((s) => median(s) * 1000);
}

/**
 * Medians (µs) of calls measured in alternating blocks of BLOCK calls: each server stays hot
 * within its block (a tight client loop), while drift still hits all alike.
 */
async function timeAlternatingHot(calls: Array<() => Promise<unknown>>): Promise<number[]> {
  const samples = calls.map((): number[] => []);
  for (let r = 0; r < ROUNDS / BLOCK; r++) {
    for (let k = 0; k < calls.length; k++) {
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        await calls[k]!();
        if (i >= BLOCK / 5) samples[k]!.push(performance.now() - t0); // the first calls of a block warm it up
      }
    }
  }
  return samples.map((s) => median(s) * 1000);
}

async function timeCalls(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await call();
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await call();
    samples.push(performance.now() - t0);
  }
  return median(samples) * 1000;
}

/** `uplink` is a launcher of dist/cli.mjs with the fixture driver. */
async function roundTrips(uplink: string): Promise<BenchRow[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'uplink-bench-'));
  const env = { ...process.env, UPLINK_DATA_DIR: dataDir } as Record<string, string>;
  const observe = { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'noop' } };
  const echo = { name: 'echo', arguments: { text: 'x' } };
  writeFileSync(join(OUT, 'bare-http.mjs'), BARE_HTTP);
  const bareEcho = await bundled('bench/bare-echo.ts');

  const stdioClient = async (args: string[], childEnv?: Record<string, string>): Promise<Client> => {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, ...(childEnv ? { env: childEnv } : {}) }));
    return client;
  };
  const stdio = await stdioClient([uplink, 'mcp'], env);
  const bareStdio = await stdioClient([bareEcho, 'sdk']);
  const directStdio = await stdioClient([bareEcho, 'direct']);
  const servers = [() => stdio.callTool(observe), () => bareStdio.callTool(echo), () => directStdio.callTool(echo)];
  const [uplinkStdio, baseStdio, directBase] = (await timeAlternating(servers)) as [number, number, number];
  const [uplinkHot, baseHot, directHot] = (await timeAlternatingHot(servers)) as [number, number, number];
  await Promise.all([stdio.close(), bareStdio.close(), directStdio.close()]);

  const serve = spawn(process.execPath, [uplink, 'serve', '--port', '0', '--json'], { env, cwd: ROOT });
  const bare = spawn(process.execPath, [join(OUT, 'bare-http.mjs')], { cwd: ROOT });
  try {
    const served = await firstLine(serve);
    const bareUrl = (await firstLine(bare)).url!;
    const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const http = new Client({ name: 'bench', version: '1' });
    await http.connect(new StreamableHTTPClientTransport(new URL(served.mcp_url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const bareHttp = new Client({ name: 'bench', version: '1' });
    await bareHttp.connect(new StreamableHTTPClientTransport(new URL(bareUrl)));
    const [uplinkHttp, baseHttp] = (await timeAlternating([() => http.callTool(observe), () => bareHttp.callTool(echo)])) as [number, number];
    await http.close();
    await bareHttp.close();
    return [
      { name: 'stdio channel_observe (noop) median', value: uplinkStdio, unit: 'µs' },
      { name: 'stdio bare SDK echo median', value: baseStdio, unit: 'µs' },
      { name: 'stdio ratio', value: uplinkStdio / baseStdio, unit: '×', note: 'target ≤ 1.3, goal 1.1' },
      { name: 'stdio bare SDK echo, dispatched as the hub does, median', value: directBase, unit: 'µs', note: "the SDK server connected like the hub's" },
      {
        name: 'stdio ratio to it',
        value: uplinkStdio / directBase,
        unit: '×',
        note: `no target: the hub's own work, ${Math.round(uplinkStdio - directBase)} µs a call`,
      },
      { name: 'stdio channel_observe, hot loop median', value: uplinkHot, unit: 'µs', note: `alternating blocks of ${BLOCK} calls` },
      { name: 'stdio bare SDK echo, hot loop median', value: baseHot, unit: 'µs' },
      { name: 'stdio bare SDK echo dispatched as the hub does, hot loop median', value: directHot, unit: 'µs' },
      {
        name: 'stdio ratio, hot loop',
        value: uplinkHot / baseHot,
        unit: '×',
        note: `no target: every server kept hot; to the echo dispatched as the hub does ${(uplinkHot / directHot).toFixed(2)}×`,
      },
      { name: 'HTTP channel_observe (noop) median', value: uplinkHttp, unit: 'µs' },
      { name: 'HTTP bare SDK echo median', value: baseHttp, unit: 'µs' },
      { name: 'HTTP ratio', value: uplinkHttp / baseHttp, unit: '×', note: 'target ≤ 1.5' },
    ];
  } finally {
    serve.kill('SIGTERM');
    bare.kill('SIGTERM');
  }
}

/**
 * What the hash chain costs an append: the same store with and without it (the internal
 * `chain: false`, the baseline only), measured in the same run, in alternating rounds (median).
 */
function chainCost(entry: (i: number) => Parameters<AuditStore['append']>[0]): BenchRow[] {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-bench-chain-'));
  const stores = { chained: new AuditStore(join(dir, 'chained.sqlite')), plain: new AuditStore(join(dir, 'plain.sqlite'), { chain: false }) };
  const rates = { chained: { single: [] as number[], batched: [] as number[] }, plain: { single: [] as number[], batched: [] as number[] } };
  const batch = Array.from({ length: 100 }, (_, i) => entry(i));
  for (let round = 0; round < 5; round++) {
    for (const kind of ['chained', 'plain'] as const) {
      const store = stores[kind];
      let t0 = performance.now();
      for (let i = 0; i < 2000; i++) store.append(entry(i));
      rates[kind].single.push(2000 / ((performance.now() - t0) / 1000));
      t0 = performance.now();
      for (let i = 0; i < 50; i++) store.appendMany(batch);
      rates[kind].batched.push(5000 / ((performance.now() - t0) / 1000));
    }
  }
  stores.chained.close();
  stores.plain.close();
  const single = { chained: median(rates.chained.single), plain: median(rates.plain.single) };
  const batched = { chained: median(rates.chained.batched), plain: median(rates.plain.batched) };
  return [
    { name: 'audit append with hash chain, one commit per event', value: Math.round(single.chained), unit: 'events/s' },
    { name: 'audit append without hash chain, one commit per event', value: Math.round(single.plain), unit: 'events/s', note: 'baseline, same run' },
    { name: 'audit append with hash chain, batched ×100', value: Math.round(batched.chained), unit: 'events/s' },
    { name: 'audit append without hash chain, batched ×100', value: Math.round(batched.plain), unit: 'events/s', note: 'baseline, same run' },
    {
      name: 'hash chain: batched append rate kept',
      value: batched.chained / batched.plain,
      unit: '×',
      note: 'sha256 + canonical JSON per row, the head read once per commit',
    },
  ];
}

function auditThroughput(): BenchRow[] {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-bench-audit-'));
  const store = new AuditStore(join(dir, 'audit.sqlite'));
  const agent: AgentIdentity = { kind: 'mcp', name: 'bench', version: '1' };
  const entry = (i: number) => ({
    at: Date.now(),
    type: 'event' as const,
    kind: 'succeeded' as const,
    invocation_id: `inv-${i}`,
    sequence: 3,
    channel: 'tmux:%1',
    op: 'read',
    capability_id: 'tmux.read',
    agent,
    provider_id: 'uplink/tmux',
    interaction: 'typed' as const,
    state: 'succeeded' as const,
    duration_ms: 2,
  });
  const n = 20_000;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) store.append(entry(i));
  const single = n / ((performance.now() - t0) / 1000);
  const batch = Array.from({ length: 100 }, (_, i) => entry(i));
  t0 = performance.now();
  for (let i = 0; i < n / 100; i++) store.appendMany(batch);
  const batched = n / ((performance.now() - t0) / 1000);
  // Before a reply: a call's three rows committed (the old way) vs journaled with one write (now).
  const calls = 3000;
  const call = (i: number) => [entry(i), { ...entry(i), kind: 'started' as const, state: 'running' as const }, entry(i)];
  t0 = performance.now();
  for (let i = 0; i < calls; i++) store.appendMany(call(i));
  const commitPerCall = ((performance.now() - t0) / calls) * 1000;
  let journalMs = 0;
  let queued: ReturnType<typeof call> = [];
  let seq = 0;
  for (let i = 0; i < calls; i++) {
    const rows = call(i);
    const t = performance.now();
    seq = store.journal(rows);
    journalMs += performance.now() - t;
    queued.push(...rows);
    if (queued.length >= 150) {
      store.appendMany(queued, false, seq);
      queued = [];
    }
  }
  if (queued.length) store.appendMany(queued, false, seq);
  const journalPerCall = (journalMs / calls) * 1000;
  const m = 200;
  t0 = performance.now();
  for (let i = 0; i < m; i++) store.appendDurable({ ...entry(i), type: 'decision', kind: 'decision', authorized: 'operator', granted: true });
  const durable = m / ((performance.now() - t0) / 1000);
  store.close();
  const chain = chainCost(entry);
  return [
    ...chain,
    { name: 'audit append, one commit per event (WAL)', value: Math.round(single), unit: 'events/s', note: 'worst case' },
    {
      name: 'audit append, batched ×100 (WAL)',
      value: Math.round(batched),
      unit: 'events/s',
      note: 'events outside a call (approvals pending, progress) commit in batches within 20 ms',
    },
    { name: 'audit durable decision (synchronous=FULL)', value: Math.round(durable), unit: 'decisions/s', note: 'fsync per decision' },
    { name: "a call's 3 rows committed before the reply", value: commitPerCall, unit: 'µs', note: 'the former way' },
    { name: "a call's 3 entries journaled before the reply", value: journalPerCall, unit: 'µs', note: 'one write; committed with the batch' },
    { name: 'journal vs commit before the reply', value: journalPerCall / commitPerCall, unit: '×' },
  ];
}

async function brokerLatency(): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-bench-broker-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { rules: [{ id: 'bench', channel: 'test:beta', op: 'write' }] } }));
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()], watchConfig: false });
  const agent: AgentIdentity = { kind: 'mcp', name: 'bench', version: '1' };
  hub.attachPanel();
  hub.subscribeApprovals((e) => {
    if (e.type === 'added') void hub.decide(e.approval.approval_id, { kind: 'once', by: 'bench' });
  });
  const permit = await timeCalls(() => hub.invoke('test:alpha', 'echo', { text: 'x' }, { agent }));
  const asked = await timeCalls(() => hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
  const ruled = await timeCalls(() => hub.invoke('test:beta', 'write', { text: 'x' }, { agent }));
  await hub.close();
  return [
    { name: 'hub invoke, read-only permit (median)', value: permit, unit: 'µs' },
    { name: 'hub invoke, operator approval (auto-decider)', value: asked, unit: 'µs' },
    { name: 'broker added latency: operator ask', value: asked - permit, unit: 'µs', note: 'prompt + preview + fsynced decision' },
    { name: 'hub invoke, standing rule', value: ruled, unit: 'µs' },
    { name: 'broker added latency: standing rule', value: ruled - permit, unit: 'µs', note: 'rule match + fsynced decision' },
  ];
}

interface HubMemory {
  idle: MemorySample;
  after: MemorySample;
  peak: number;
  seconds: number;
}

/** Runs `hub-memory.ts` for `calls` results of `kind` in a fresh process. */
function hubMemoryRun(script: string, calls: number, kind: 'text' | 'screenshot'): Promise<HubMemory> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', script, String(calls), kind],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`hub memory bench failed: ${stderr || error.message}`)) : resolve(JSON.parse(stdout.trim().split('\n').pop()!) as HubMemory),
    );
  });
}

async function hubMemory(): Promise<BenchRow[]> {
  const script = await bundled('bench/hub-memory.ts');
  const rows: BenchRow[] = [];
  const mib = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;
  for (const [calls, kind, what] of [
    [10_000, 'text', '10,000 × 200 KB reads'],
    [1_000, 'screenshot', '1,000 × 1 MB screenshots'],
  ] as const) {
    const m = await hubMemoryRun(script, calls, kind);
    const live = (s: MemorySample): number => s.heap + s.external;
    rows.push(
      {
        name: `hub heap + external above idle after ${what}`,
        value: mib(live(m.after) - live(m.idle)),
        unit: 'MiB',
        note: `goal ≤ 64 MiB; idle ${mib(live(m.idle))} MiB (heap ${mib(m.after.heap - m.idle.heap)}, external ${mib(m.after.external - m.idle.external)} MiB above idle)`,
      },
      {
        name: `hub RSS above idle after ${what}`,
        value: mib(m.after.rss - m.idle.rss),
        unit: 'MiB',
        note: `goal ≤ 64 MiB; idle ${mib(m.idle.rss)} MiB, peak ${mib(m.peak)} MiB; ${Math.round(calls / m.seconds)} calls/s over MCP (in-memory)`,
      },
    );
  }
  return rows;
}

export async function run(): Promise<BenchReport> {
  mkdirSync(OUT, { recursive: true });
  const uplink = writeLauncherFile(join(OUT, 'uplink.mjs'), join(ROOT, 'dist/cli.mjs'), await bundled('test/fixtures/hub-drivers.ts'));
  const rows = [...(await roundTrips(uplink)), ...auditThroughput(), ...(await brokerLatency()), ...(await hubMemory())];
  return { title: 'Hub: MCP round trips, audit store, approval broker, memory', rows };
}
