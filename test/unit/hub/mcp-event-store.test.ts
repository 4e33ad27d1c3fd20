/** The `/mcp` event store: what a reconnecting client gets, and how much it may hold. */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { EventBuffer } from '../../../src/main/edges/http/event-store';
import type { EventLimits, SessionEvents } from '../../../src/main/edges/http/event-store';

const roomy: EventLimits = { streamEvents: 100, streamBytes: 1e6, totalEvents: 1000, totalBytes: 1e7 };
const note = (n: number, pad = ''): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 1, progress: n, message: pad },
});
const size = (m: JSONRPCMessage): number => Buffer.byteLength(JSON.stringify(m));

async function replay(events: SessionEvents, after: string): Promise<Array<[string, JSONRPCMessage]>> {
  const got: Array<[string, JSONRPCMessage]> = [];
  await events.replayEventsAfter(after, { send: async (id, m) => void got.push([id, m]) });
  return got;
}

describe('EventBuffer', () => {
  it('replays the events of the same stream after the cursor, in order, without the priming event', async () => {
    const events = new EventBuffer(roomy).forSession();
    const priming = await events.storeEvent('s1', {} as JSONRPCMessage);
    const a = await events.storeEvent('s1', note(1));
    await events.storeEvent('s2', note(99));
    const b = await events.storeEvent('s1', note(2));
    expect(await events.getStreamIdForEventId!(priming)).toBe('s1');
    expect(await replay(events, priming)).toEqual([
      [a, note(1)],
      [b, note(2)],
    ]);
    expect(await replay(events, a)).toEqual([[b, note(2)]]);
    expect(await replay(events, b)).toEqual([]);
  });

  it("does not know another session's events", async () => {
    const buffer = new EventBuffer(roomy);
    const mine = buffer.forSession();
    const theirs = buffer.forSession();
    const id = await theirs.storeEvent('s', note(1));
    expect(mine.knows(id)).toBe(false);
    expect(await mine.getStreamIdForEventId!(id)).toBeUndefined();
    await expect(replay(mine, id)).rejects.toThrow(/not held/);
    expect(mine.knows('not-a-number')).toBe(false);
  });

  it('keeps at most streamEvents per stream, evicting the oldest, and forgets evicted cursors', async () => {
    const events = new EventBuffer({ ...roomy, streamEvents: 3 }).forSession();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await events.storeEvent('s', note(i)));
    const other = await events.storeEvent('t', note(9));
    expect(ids.map((id) => events.knows(id))).toEqual([false, false, true, true, true]);
    expect(events.knows(other)).toBe(true);
    expect((await replay(events, ids[2]!)).map(([, m]) => m)).toEqual([note(3), note(4)]);
  });

  it('keeps at most streamBytes per stream', async () => {
    const one = size(note(1, 'x'.repeat(100)));
    const buffer = new EventBuffer({ ...roomy, streamBytes: one * 2 + 10 });
    const events = buffer.forSession();
    const ids: string[] = [];
    for (let i = 1; i <= 4; i++) ids.push(await events.storeEvent('s', note(i, 'x'.repeat(100))));
    expect(ids.map((id) => events.knows(id))).toEqual([false, false, true, true]);
    expect(buffer.size).toEqual({ events: 2, bytes: 2 * one });
  });

  it('keeps at most totalEvents and totalBytes across all sessions, oldest first', async () => {
    const buffer = new EventBuffer({ ...roomy, totalEvents: 4 });
    const a = buffer.forSession();
    const b = buffer.forSession();
    const first = await a.storeEvent('s', note(1));
    const second = await b.storeEvent('s', note(2));
    const rest = [await a.storeEvent('s', note(3)), await b.storeEvent('s', note(4)), await a.storeEvent('s', note(5))];
    expect([a.knows(first), b.knows(second), ...rest.map((id, i) => (i % 2 ? b : a).knows(id))]).toEqual([false, true, true, true, true]);
    expect(buffer.size.events).toBe(4);

    const bytes = new EventBuffer({ ...roomy, totalBytes: size(note(1)) * 2 });
    const c = bytes.forSession();
    const ids = [await c.storeEvent('x', note(1)), await c.storeEvent('y', note(2)), await c.storeEvent('z', note(3))];
    expect(ids.map((id) => c.knows(id))).toEqual([false, true, true]);
    expect(bytes.size.bytes).toBeLessThanOrEqual(size(note(1)) * 2);
  });

  it('an event larger than a stream may hold is not kept, nor the events before it (a resume must not skip it)', async () => {
    const buffer = new EventBuffer({ ...roomy, streamBytes: 200 });
    const events = buffer.forSession();
    const before = await events.storeEvent('s', note(1));
    const big = await events.storeEvent('s', note(2, 'x'.repeat(300)));
    const elsewhere = await events.storeEvent('t', note(3));
    expect([events.knows(before), events.knows(big), events.knows(elsewhere)]).toEqual([false, false, true]);
  });

  it("drop() frees the session's events and keeps no later ones; other sessions keep theirs", async () => {
    const buffer = new EventBuffer(roomy);
    const gone = buffer.forSession();
    const kept = buffer.forSession();
    await gone.storeEvent('s', note(1));
    await gone.storeEvent('t', note(2));
    const id = await kept.storeEvent('s', note(3));
    gone.drop();
    expect(buffer.size).toEqual({ events: 1, bytes: size(note(3)) });
    await gone.storeEvent('s', note(4));
    expect(buffer.size.events).toBe(1);
    expect(kept.knows(id)).toBe(true);
  });
});
