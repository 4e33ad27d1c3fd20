/**
 * Driver benchmarks: what running a driver out of process adds to a call. One hub has the
 * in-process fixture driver and an external driver (a plain Node script speaking the driver
 * protocol) with the same no-op op; `noop` is invoked on each, call by call alternately, in the
 * same run. The hub call is what `channel_observe` does below the MCP framing, which is the same
 * for both and left out.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHub } from '../src/main/hub/hub-core';
import type { AgentIdentity } from '../src/main/hub';
import { createTestDriver } from '../test/fixtures/test-driver';
import { median, percentile } from './types';
import type { BenchReport } from './types';

const WARMUP = 200;
const ROUNDS = 2000;

// The fixture's `noop`, served over the protocol: the smallest driver that answers it.
const NOOP_DRIVER = `
import { createInterface } from 'node:readline';
const info = { id: 'ext', kind: 'capability', summary: 'no-op' };
const obj = (properties, required = []) => ({ type: 'object', properties, required, additionalProperties: false });
const ops = [{ op: 'noop', summary: 'Does nothing (read-only)', mutating: false, params_schema: obj({}), result_schema: obj({ ok: { const: true } }, ['ok']) }];
const results = { initialize: { protocol_version: '3', info, extensions: [] }, info, ops, channels: [{ channel: 'ext:alpha', labels: ['a'], detail: {} }], doctor: { driver: 'ext', ok: true, lines: [] } };
const write = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'invoke') return write({ jsonrpc: '2.0', id: m.id, result: { ok: true } });
  if (m.method in results) return write({ jsonrpc: '2.0', id: m.id, result: results[m.method] });
  write({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no method ' + m.method } });
}).on('close', () => process.exit(0));
`;

// The floor under any out-of-process driver: a Node child echoing a JSON-RPC reply per line over the same pipes.
const ECHO_CHILD = `
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { ok: true } }) + '\\n');
}).on('close', () => process.exit(0));
`;

/** A round trip to the echo child: one request line out, its reply line back. */
function echoChild(): { call: () => Promise<unknown>; close: () => void } {
  const child = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  let partial = '';
  let waiting: (() => void) | undefined;
  let id = 0;
  child.stdout.on('data', (d: Buffer) => {
    partial += d.toString();
    const nl = partial.indexOf('\n');
    if (nl < 0) return;
    JSON.parse(partial.slice(0, nl));
    partial = partial.slice(nl + 1);
    waiting?.();
  });
  return {
    call: () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'invoke', params: { channel: 'ext:alpha', op: 'noop', args: {} } })}\n`);
      }),
    close: () => child.stdin.end(),
  };
}

export async function run(): Promise<BenchReport> {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-bench-drivers-'));
  const script = join(dir, 'noop-driver.mjs');
  writeFileSync(script, NOOP_DRIVER);
  const sha256 = createHash('sha256').update(readFileSync(script)).digest('hex');
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ external_drivers: [{ id: 'ext', command: [process.execPath, script], integrity: { file: script, sha256 } }] }),
  );
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()], watchConfig: false });
  const agent: AgentIdentity = { kind: 'mcp', name: 'bench', version: '1' };
  const inProcess = (): Promise<unknown> => hub.invoke('test:alpha', 'noop', {}, { agent });
  const external = (): Promise<unknown> => hub.invoke('ext:alpha', 'noop', {}, { agent });
  const echo = echoChild();
  try {
    for (let i = 0; i < WARMUP; i++) {
      await inProcess();
      await external();
      await echo.call();
    }
    const a: number[] = [];
    const b: number[] = [];
    const added: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      let t0 = performance.now();
      await inProcess();
      const x = (performance.now() - t0) * 1000;
      t0 = performance.now();
      await external();
      const y = (performance.now() - t0) * 1000;
      a.push(x);
      b.push(y);
      added.push(y - x);
    }
    // The floor, with the hub at rest (its queued audit commits done): a bare pipe round trip,
    // each after as much CPU work as an in-process call takes, so the child has as long to fall
    // asleep between requests as the driver has. What waking another process costs here.
    await new Promise((r) => setTimeout(r, 200));
    const spin = median(a) / 1000;
    for (let i = 0; i < ROUNDS; i++) {
      for (const t = performance.now(); performance.now() - t < spin;);
      const t0 = performance.now();
      await echo.call();
      floor.push((performance.now() - t0) * 1000);
    }
    const p99 = percentile([...added], 99);
    return {
      title: 'Drivers: an op in process vs out of process (hub invoke of noop, alternating call by call)',
      rows: [
        { name: 'in-process driver, noop (median)', value: median(a), unit: 'µs' },
        { name: 'external driver, noop (median)', value: median(b), unit: 'µs', note: 'JSON-RPC line over stdio to a Node child' },
        { name: 'added per call by running out of process (median of pairs)', value: median(added), unit: 'µs' },
        { name: 'added per call, p99 of pairs', value: p99, unit: 'µs' },
        {
          name: 'bare pipe round trip to a Node child (median)',
          value: median(floor),
          unit: 'µs',
          note: 'baseline, same run: one JSON line each way, each after as much work as an in-process call, the hub at rest',
        },
        { name: 'bare pipe round trip to a Node child (p99)', value: percentile([...floor], 99), unit: 'µs', note: 'baseline, same run' },
        {
          name: 'added per call over the bare round trip (median)',
          value: median(added) - median(floor),
          unit: 'µs',
          note: "the hub's own work for an external call",
        },
      ],
    };
  } finally {
    echo.close();
    await hub.close();
  }
}
