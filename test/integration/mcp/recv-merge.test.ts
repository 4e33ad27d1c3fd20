/**
 * channel_recv without `driver` reads every messaging driver and merges their items by time then
 * driver, with one opaque cursor holding each driver's position; with `driver`, one driver and its
 * own integer cursor, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import { encodeCursor } from '../../../src/main/edges/mcp/recv';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub } from '../../../src/main/hub';
import type { RecvBatch } from '../../../src/main/drivers/contract';
import { DriverError } from '../../../src/main/drivers/contract';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';

const hubs: Hub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

/** A messaging driver whose items are `[seconds, text]`, at 2026-01-01T00:00:<seconds>Z. */
function messenger(id: string, items: Array<[number, string]>, broken = false): ReturnType<typeof createTestDriver> {
  const base = createTestDriver(id);
  return {
    ...base,
    async recv(after?: number): Promise<RecvBatch> {
      if (broken) throw new DriverError('Unavailable', `${id} is down`);
      const all = items.map(([s, raw], i) => ({ cursor: i + 1, at: `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`, raw, channel: `${id}:alpha` }));
      return { items: all.filter((it) => it.cursor > (after ?? 0)), next_cursor: items.length };
    },
  };
}

async function connect(...drivers: Array<ReturnType<typeof createTestDriver>>): Promise<Client> {
  const hub = createHub({ dataDir: tmpDataDir(), drivers });
  hubs.push(hub);
  const server = createMcpServer(hub, { id: 'default' }, 's1');
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'recv-agent', version: '1' });
  await client.connect(b);
  await client.listTools();
  return client;
}

const recv = async (client: Client, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name: 'channel_recv', arguments: args })) as CallToolResult;
type Merged = { items: Array<{ raw: string; channel?: string }>; next_cursor: string | number; failed?: Array<{ driver: string; error: string }> };

describe('channel_recv merges every messaging driver', () => {
  it('orders items by time then driver, and the cursor picks up where each driver was', async () => {
    const one = messenger('one', [
      [3, 'one@3'],
      [5, 'one@5'],
    ]);
    const two = messenger('two', [
      [1, 'two@1'],
      [3, 'two@3'],
    ]);
    const client = await connect(one, two);
    const first = await recv(client, {});
    expect(first.isError).toBeFalsy();
    const merged = first.structuredContent as Merged;
    expect(merged.items.map((i) => i.raw)).toEqual(['two@1', 'one@3', 'two@3', 'one@5']);
    expect(typeof merged.next_cursor).toBe('string');
    expect(JSON.parse(Buffer.from(merged.next_cursor as string, 'base64url').toString())).toEqual({ v: 1, at: { one: 2, two: 2 } });
    // Nothing new since: the cursor holds both positions.
    expect(((await recv(client, { cursor: merged.next_cursor })).structuredContent as Merged).items).toEqual([]);
    // Part-way: one driver from its start, the other from 1.
    const part = (await recv(client, { cursor: encodeCursor({ two: 1 }) })).structuredContent as Merged;
    expect(part.items.map((i) => i.raw)).toEqual(['one@3', 'two@3', 'one@5']);
  });

  it('with driver, one driver and its integer cursor (also its position taken from a merged cursor)', async () => {
    const client = await connect(messenger('one', [[3, 'one@3']]), messenger('two', [[1, 'two@1']]));
    const only = (await recv(client, { driver: 'two' })).structuredContent as Merged;
    expect(only).toMatchObject({ items: [{ raw: 'two@1' }], next_cursor: 1 });
    expect(((await recv(client, { driver: 'two', cursor: 1 })).structuredContent as Merged).items).toEqual([]);
    expect(((await recv(client, { driver: 'one', cursor: encodeCursor({ one: 0, two: 1 }) })).structuredContent as Merged).items).toHaveLength(1);
  });

  it("an integer cursor without driver is the first driver's; a cursor it did not give is refused in one line", async () => {
    const client = await connect(messenger('one', [[3, 'one@3']]), messenger('two', [[1, 'two@1']]));
    expect(((await recv(client, { cursor: 1 })).structuredContent as Merged).items.map((i) => i.raw)).toEqual(['two@1']);
    for (const cursor of ['not base64!', Buffer.from('{"v":1,"at":{"one":-1}}').toString('base64url'), 'x'.repeat(5000)]) {
      const r = await recv(client, { cursor });
      expect(r.isError).toBe(true);
      expect((r.content[0] as { text: string }).text).toMatch(/^uplink error \[core:Invalid\]: .* — hint: /);
    }
  });

  it('a driver that cannot be read is named in failed, keeps its position, and the others are still read', async () => {
    const client = await connect(messenger('one', [[3, 'one@3']]), messenger('two', [], true));
    const r = await recv(client, { cursor: encodeCursor({ two: 4 }) });
    const merged = r.structuredContent as Merged;
    expect(merged.items.map((i) => i.raw)).toEqual(['one@3']);
    expect(merged.failed).toEqual([{ driver: 'two', error: expect.stringContaining('two is down') }]);
    expect(JSON.parse(Buffer.from(merged.next_cursor as string, 'base64url').toString())).toEqual({ v: 1, at: { one: 1, two: 4 } });
  });
});
