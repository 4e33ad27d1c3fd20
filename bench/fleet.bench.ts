/**
 * Fleet benchmark: 50 simulated hubs in one process, each with its own NATS connection, key pair
 * and history publisher (every record signed; the reader checks each against the roster), fed by a fake audit source recording audit-record-sized entries at 20/s each (1,000/s
 * in all) for 10 s after 1 s of warm-up, and one reader (the panel's merged timeline) on a real `nats-server -js`.
 * The reader runs in a process of its own (`fleet-reader.ts`), as it does in a fleet, where it is
 * one hub's panel and the hubs that publish are other processes; lag is taken on the monotonic
 * clock both processes read.
 * Reports events/s delivered, lag from record to reader (p50/p99) and records lost (must be 0);
 * beside it the same payloads at the same rate over plain core NATS publish/subscribe, with its
 * subscriber likewise in a process of its own, measured in the same run (what JetStream's
 * ack-per-record and the consumer add), and the ratio.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import type { NatsConnection } from 'nats';
import { encodeFleetRecord, startHistoryPublisher } from '../src/main/hub/fleet/history';
import type { HistorySource } from '../src/main/hub/fleet/history';
import { keyTrust, nk } from '../src/main/hub/fleet/keys';
import type { DropReason, FleetTrust, Roster } from '../src/main/hub/fleet/keys';
import type { AuditEntry } from '../src/main/hub/types';
import { bundled, ROOT } from './bundle';
import { percentile } from './types';
import type { BenchReport, BenchRow } from './types';

const NATS = '/usr/sbin/nats-server';
const HUBS = 50;
const PER_HUB_PER_S = 20;
const HISTORY_S = 10;
const BASELINE_S = 5;
/** Both runs first drive this long untimed: connections, JIT and the reader's validator warm. */
const WARMUP_S = 1;

/** Milliseconds on CLOCK_MONOTONIC, which the reader's process reads too. */
const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function listening(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = tcpConnect(port, '127.0.0.1', () => (s.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(25);
  }
  throw new Error(`nats-server did not listen on ${port}`);
}

/** A realistic audit row: a terminal event of a tmux read with its args and an agent. */
function auditEntry(id: number, n: number): AuditEntry {
  return {
    id,
    at: Date.now(),
    type: 'event',
    kind: 'succeeded',
    invocation_id: `inv-${n.toString(16).padStart(12, '0')}`,
    sequence: 3,
    channel: 'tmux:%12',
    op: 'read',
    capability_id: 'tmux.read',
    agent: { kind: 'mcp', name: 'claude-code', agent_id: 'claude', version: '1.0.42', session: 's1' },
    provider_id: 'tmux',
    interaction: 'typed',
    state: 'succeeded',
    authorized: 'default_policy',
    granted: true,
    args: { channel: 'tmux:%12', lines: 200, text: 'x'.repeat(240) },
    duration_ms: 12,
    output: { text: 'not sent: outputs stay home' },
    outcome: 'succeeded',
  };
}

/**
 * One simulated hub's audit: records appended on a timer, `born` keeps when each was made. A read
 * makes its rows afresh, as a hub reads them from SQLite: no record stays on this process's heap.
 */
function fakeSource(h: number, born: number[]): HistorySource & { add(): void } {
  const listeners = new Set<(e: AuditEntry) => void>();
  let newest = 0;
  const row = (id: number): AuditEntry => auditEntry(id, h * 1_000_000 + id);
  return {
    after: (cursor, limit) => Array.from({ length: Math.max(0, Math.min(newest - cursor, limit)) }, (_, i) => row(cursor + 1 + i)),
    newest: () => newest,
    subscribe: (l) => (listeners.add(l), () => listeners.delete(l)),
    add() {
      const e = row(++newest);
      born[e.id] = monotonicMs();
      for (const l of listeners) l(e);
    },
  };
}

/** Calls `tick(hub)` PER_HUB_PER_S times a second for each hub, spread evenly, for `seconds`. */
async function drive(seconds: number, tick: (hub: number) => void): Promise<number> {
  const timers: Array<ReturnType<typeof setInterval>> = [];
  const every = 1000 / PER_HUB_PER_S;
  let made = 0;
  for (let h = 0; h < HUBS; h++) {
    const offset = (h * every) / HUBS;
    timers.push(
      setTimeout(() => {
        timers.push(setInterval(() => (made++, tick(h)), every));
      }, offset) as unknown as ReturnType<typeof setInterval>,
    );
  }
  await sleep(seconds * 1000);
  for (const t of timers) clearInterval(t);
  return made;
}

/** Each simulated hub's signing trust, and the reader's, over one roster of all of them. */
function fleetKeys(): { trusts: FleetTrust[]; reader: FleetTrust; roster: Roster } {
  const pairs = Array.from({ length: HUBS }, () => nk.createUser());
  const roster: Roster = { fleet: 'bench', version: 1, hubs: Object.fromEntries(pairs.map((kp, h) => [`hub-${h}`, kp.getPublicKey()])) };
  return { trusts: pairs.map((kp) => keyTrust(kp, roster)), reader: keyTrust(nk.createUser(), roster), roster };
}

/** What signing and checking one record's envelope costs, in µs (node's ed25519 on the NKey's key). */
function envelopeCost(): { sign: number; verify: number } {
  const { trusts, reader } = fleetKeys();
  const data = encodeFleetRecord('hub-0', 0, auditEntry(1, 1));
  const n = 2000;
  let h = trusts[0]!.seal('uplink.history.hub-0', data)!;
  let t = performance.now();
  for (let i = 0; i < n; i++) h = trusts[0]!.seal('uplink.history.hub-0', data)!;
  const sign = ((performance.now() - t) * 1000) / n;
  t = performance.now();
  for (let i = 0; i < n; i++) reader.open('uplink.history.hub-0', data, h, false);
  const verify = ((performance.now() - t) * 1000) / n;
  return { sign, verify };
}

/** Per hub (`hub-<n>`), when each seq arrived; `born` in this process is likewise per hub index, by seq. */
interface Arrivals {
  arrived: Record<string, Array<number | null>>;
  dropped: Partial<Record<DropReason, number>>;
}

/** The reading process (`fleet-reader.ts`), listening once this resolves; `collect(n)` waits for n records and ends it. */
async function startReader(script: string, args: string[]): Promise<{ collect(expect: number): Promise<Arrivals> }> {
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = once(child, 'exit').then(([code]) => Promise.reject(new Error(`the bench's reader exited ${code}`)));
  exited.catch(() => undefined);
  const next = async (): Promise<string> => (await Promise.race([lines.next(), exited])).value as string;
  if ((await next()) !== 'ready') throw new Error("the bench's reader did not start");
  return {
    async collect(expect) {
      child.stdin!.write(`${JSON.stringify({ expect })}\n`);
      return JSON.parse(await next()) as Arrivals;
    },
  };
}

/** Lags of the records born at or after `since`, and over how many seconds they arrived; `got` counts the warm-up's too. */
function lagsOf(arrivals: Arrivals, born: number[][], since: number): { got: number; seconds: number; lags: number[] } {
  const lags: number[] = [];
  let got = 0;
  let first = Infinity;
  let last = 0;
  born.forEach((times, h) => {
    const at = arrivals.arrived[`hub-${h}`] ?? [];
    times.forEach((t, seq) => {
      const a = at[seq];
      if (a === undefined || a === null) return;
      got++;
      if (t < since) return;
      lags.push(a - t);
      first = Math.min(first, a);
      last = Math.max(last, a);
    });
  });
  return { got, seconds: (last - first) / 1000, lags };
}

async function historyRun(port: number, script: string): Promise<{ made: number; got: number; seconds: number; lags: number[]; dropped: number }> {
  const { trusts, roster } = fleetKeys();
  const conns: NatsConnection[] = [];
  const born = Array.from({ length: HUBS }, (): number[] => []);
  const reader = await startReader(script, ['history', String(port), JSON.stringify(roster)]);
  const sources = Array.from({ length: HUBS }, (_, h) => fakeSource(h, born[h]!));
  const publishers = [];
  for (let h = 0; h < HUBS; h++) {
    const nc = await connect({ servers: `127.0.0.1:${port}` });
    conns.push(nc);
    publishers.push(startHistoryPublisher({ nc, hub: `hub-${h}`, source: sources[h]!, trust: trusts[h], log: (l) => console.error(l) }));
  }
  await sleep(500);
  const warm = await drive(WARMUP_S, (h) => sources[h]!.add());
  const since = monotonicMs();
  const made = warm + (await drive(HISTORY_S, (h) => sources[h]!.add()));
  const arrivals = await reader.collect(made);
  await Promise.all(publishers.map((p) => p.close()));
  await Promise.all(conns.map((nc) => nc.close()));
  const dropped = Object.values(arrivals.dropped).reduce((a, b) => a + b, 0);
  return { made, dropped, ...lagsOf(arrivals, born, since) };
}

async function baselineRun(port: number, script: string): Promise<{ made: number; got: number; lags: number[] }> {
  const conns = await Promise.all(Array.from({ length: HUBS }, () => connect({ servers: `127.0.0.1:${port}` })));
  const reader = await startReader(script, ['core', String(port)]);
  const born = Array.from({ length: HUBS }, (): number[] => []);
  const seqs = new Array<number>(HUBS).fill(0);
  const tick = (h: number): void => {
    const seq = ++seqs[h]!;
    born[h]![seq] = monotonicMs();
    // The same bytes a history publisher sends for such a record.
    conns[h]!.publish(`bench.core.hub-${h}`, encodeFleetRecord(`hub-${h}`, seq - 1, auditEntry(seq, seq)));
  };
  const warm = await drive(WARMUP_S, tick);
  const since = monotonicMs();
  const made = warm + (await drive(BASELINE_S, tick));
  const arrivals = await reader.collect(made);
  await Promise.all(conns.map((nc) => nc.close()));
  return { made, ...lagsOf(arrivals, born, since) };
}

export async function run(): Promise<BenchReport> {
  const title = `Fleet: ${HUBS} hubs × ${PER_HUB_PER_S} records/s → signed JetStream history → one reader (checking every signature), beside plain core NATS`;
  if (!existsSync(NATS)) {
    console.error(`bench fleet: skipped — ${NATS} is not installed (scripts/install-system-deps.sh installs it)`);
    return { title: `${title} (skipped: no nats-server)`, rows: [] };
  }
  const dir = mkdtempSync(join(tmpdir(), 'uplink-bench-fleet-'));
  const port = await freePort();
  let server: ChildProcess | undefined;
  try {
    server = spawn(NATS, ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    await listening(port);
    const cost = envelopeCost();
    const script = await bundled('bench/fleet-reader.ts');
    const h = await historyRun(port, script);
    const b = await baselineRun(port, script);
    const hp50 = percentile(h.lags, 50);
    const hp99 = percentile(h.lags, 99);
    const bp50 = percentile(b.lags, 50);
    const bp99 = percentile(b.lags, 99);
    const rows: BenchRow[] = [
      { name: 'history: records made', value: h.made, unit: 'records', note: `${HUBS} hubs, ${WARMUP_S} s of warm-up + ${HISTORY_S} s timed` },
      { name: 'history: delivered to the reader', value: h.lags.length / Math.max(h.seconds, 1e-3), unit: 'events/s' },
      { name: 'history: lag p50 (record → reader)', value: hp50, unit: 'ms' },
      { name: 'history: lag p99', value: hp99, unit: 'ms' },
      { name: 'history: records lost', value: h.made - h.got, unit: 'records', note: 'must be 0' },
      { name: 'history: records dropped by the signature check', value: h.dropped, unit: 'records', note: 'must be 0' },
      { name: 'envelope: sign one record', value: cost.sign, unit: 'µs' },
      { name: 'envelope: verify one record', value: cost.verify, unit: 'µs' },
      { name: 'core NATS: lag p50 (same payloads, same rate)', value: bp50, unit: 'ms' },
      { name: 'core NATS: lag p99', value: bp99, unit: 'ms' },
      { name: 'core NATS: messages lost', value: b.made - b.got, unit: 'messages' },
      { name: 'ratio p50 (history / core)', value: hp50 / bp50, unit: '×' },
      { name: 'ratio p99 (history / core)', value: hp99 / bp99, unit: '×' },
    ];
    return { title, rows };
  } finally {
    if (server && server.exitCode === null) {
      const s = server;
      await new Promise((resolve) => {
        s.once('exit', resolve);
        s.kill('SIGTERM');
      });
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
