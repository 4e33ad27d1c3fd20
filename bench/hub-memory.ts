/**
 * One hub-memory measurement, run by `hub.bench.ts` in a fresh Node process (`--expose-gc`) so
 * RSS belongs to this hub alone: a hub with a driver whose op answers like a screen read or a
 * screenshot, reached through the MCP server over an in-memory transport as an agent reaches it.
 * Prints one JSON line: memory of the idle hub (after a few small warm-up calls) and after `calls` calls.
 * Usage: node --expose-gc hub-memory.mjs <calls> <text|screenshot>
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createHub } from '../src/main/hub/hub-core';
import type { Driver } from '../src/main/drivers/contract';
import type { JsonValue } from '../src/main/kernel/types';
import { createMcpServer } from '../src/main/edges/mcp/server';
import { sampleMemory, screenText, screenshotBase64 } from './payload';

const TEXT_BYTES = 200_000;
const SCREENSHOT_BYTES = 1_048_576;
const WARMUP = 20;
const IN_FLIGHT = 4;

const [calls, kind] = [Number(process.argv[2]), process.argv[3]];
if (!Number.isSafeInteger(calls) || (kind !== 'text' && kind !== 'screenshot')) {
  console.error('usage: hub-memory.mjs <calls> <text|screenshot>');
  process.exit(2);
}

let serial = 0;
/** Warm-up calls answer small, so the idle hub holds no large outputs of its own. */
let full = false;
const obj = (properties: Record<string, unknown>): Record<string, unknown> => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const driver: Driver = {
  info: () => ({ id: 'bench', kind: 'both', summary: 'memory benchmark driver' }),
  channels: async () => [{ channel: 'bench:screen', labels: [], detail: {} }],
  ops: () => [
    { op: 'read', summary: 'A screen read', mutating: false, params_schema: obj({}), result_schema: obj({ text: { type: 'string' } }) },
    { op: 'screenshot', summary: 'A screenshot', mutating: false, params_schema: obj({}), result_schema: obj({ png_base64: { type: 'string' } }) },
  ],
  send: async () => ({ delivered: true, correlation_id: 'c', injected_at: new Date().toISOString() }),
  invoke: async (_addr, op): Promise<JsonValue> =>
    op === 'read' ? { text: screenText(full ? TEXT_BYTES : 64, ++serial) } : { png_base64: screenshotBase64(full ? SCREENSHOT_BYTES : 64, ++serial) },
  recv: async () => ({ items: [], next_cursor: 0 }),
  doctor: async () => ({ driver: 'bench', ok: true, lines: [] }),
};

/** Peak RSS of this process so far (the kernel's high-water mark). */
function peakRss(): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), 'uplink-bench-hubmem-'));
const hub = createHub({ dataDir, drivers: [driver], watchConfig: false });
const server = createMcpServer(hub, { id: 'bench' }, 'bench');
const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: 'bench-agent', version: '1' });
await client.connect(clientSide);
const op = kind === 'text' ? 'read' : 'screenshot';
const call = async (): Promise<void> => {
  const r = await client.callTool({ name: 'channel_observe', arguments: { channel: 'bench:screen', op } });
  if (r.isError) throw new Error(JSON.stringify(r.content));
  // The agent must really receive the payload, or the figures would measure nothing.
  if (full && !checked) {
    checked = true;
    if (JSON.stringify(r).length < (kind === 'text' ? TEXT_BYTES : SCREENSHOT_BYTES)) throw new Error('the result did not carry the payload');
  }
};
let checked = false;

for (let i = 0; i < WARMUP; i++) await call();
const idle = sampleMemory();
full = true;
const t0 = performance.now();
let started = 0;
await Promise.all(
  Array.from({ length: IN_FLIGHT }, async () => {
    while (started < calls) {
      started++;
      await call();
    }
  }),
);
const seconds = (performance.now() - t0) / 1000;
const after = sampleMemory();
const peak = peakRss();
await client.close();
await hub.close();
rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ idle, after, peak, seconds })}\n`);
process.exit(0);
