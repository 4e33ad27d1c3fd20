/**
 * The fleet's merged history on a real `nats-server -js` with token auth: two real hubs publish
 * their audit records, readers merge them; a publisher that restarts publishes only what is new,
 * one new to the stream only the newest `backfill`;
 * what is recorded while the server is down (kill -9) arrives after it restarts, without a gap;
 * forged or invalid messages are ignored; a reader started late sees the older records.
 */
import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'nats';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import type { AuditEntry } from '../../../src/main/hub/types';
import { HISTORY_STREAM, encodeFleetRecord, historySubject, startHistoryPublisher, startHistoryReader } from '../../../src/main/hub/fleet/history';
import type { FleetEntry, HistorySource } from '../../../src/main/hub/fleet/history';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';
import { freePort, startNatsServer, stopNatsServer, until } from '../../fixtures/nats-server';

const TOKEN = 'history-test-token-9a2e';
const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'claude', session: 's1' };

let port = 0;
let server: ChildProcess | undefined;
const storeDir = tmpDataDir('uplink-history-nats-');
const dirs = [storeDir];

async function startNats(): Promise<void> {
  server = await startNatsServer(port, ['-js', '-sd', storeDir, '--auth', TOKEN]);
}

const killNats = (): Promise<void> => stopNatsServer(server);

const open = (): Promise<NatsConnection> => connect({ servers: `127.0.0.1:${port}`, token: TOKEN, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

function sourceOf(hub: Hub): HistorySource {
  return {
    after: (cursor, limit) => hub.queryAudit({ after: cursor, limit }).entries,
    newest: () => hub.queryAudit({ limit: 1 }).entries[0]?.id ?? 0,
    subscribe: (listener) => hub.subscribe(listener),
  };
}

function member(name: string): { name: string; hub: Hub; nc?: NatsConnection } {
  const dataDir = tmpDataDir(`uplink-history-${name}-`);
  dirs.push(dataDir);
  return { name, hub: createHub({ dataDir, drivers: [createTestDriver('test', name)], watchConfig: false, panelGraceMs: 0 }) };
}

const newest = (hub: Hub): number => hub.queryAudit({ limit: 1 }).entries[0]?.id ?? 0;
const ids = (hub: Hub): number[] => hub.queryAudit({ after: 0, limit: 1000 }).entries.map((e) => e.id);
const seqs = (entries: FleetEntry[], hub: string): number[] => entries.filter((e) => e.hub === hub).map((e) => e.seq);
const echo = async (m: { hub: Hub }, n: number, text: string): Promise<void> => {
  for (let i = 0; i < n; i++) await m.hub.invoke('test:alpha', 'echo', { text: `${text} ${i}` }, { agent });
};

describe('the fleet history on JetStream', () => {
  const a = member('a');
  const b = member('b');
  let readerNc: NatsConnection;
  const arrived: FleetEntry[] = [];
  const logged: string[] = [];
  let reader: ReturnType<typeof startHistoryReader>;
  let pubA: ReturnType<typeof startHistoryPublisher>;
  let pubB: ReturnType<typeof startHistoryPublisher>;
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    port = await freePort();
    await startNats();
    a.nc = await open();
    b.nc = await open();
    readerNc = await open();
    // Records made before anyone published: the publisher's backfill takes them.
    await echo(a, 2, 'early');
  });

  afterAll(async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    await Promise.all([a, b].map((m) => m.hub.close()));
    await Promise.all([a.nc, b.nc, readerNc].map((nc) => nc?.close().catch(() => undefined)));
    await killNats();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('merges the records of two hubs in one reader, without outputs or operator-only detail', async () => {
    reader = startHistoryReader({ nc: readerNc, log: (l) => logged.push(l), onEntry: (e) => arrived.push(e) });
    closers.push(() => reader.close());
    pubA = startHistoryPublisher({ nc: a.nc!, hub: 'a', source: sourceOf(a.hub), log: (l) => logged.push(l) });
    pubB = startHistoryPublisher({ nc: b.nc!, hub: 'b', source: sourceOf(b.hub), log: (l) => logged.push(l) });
    closers.push(
      () => pubA.close(),
      () => pubB.close(),
    );
    await echo(a, 3, 'from a');
    await echo(b, 3, 'from b');
    await b.hub.invoke('test:alpha', 'fail', {}, { agent }).catch(() => undefined);
    await until('both hubs’ records', () => seqs(arrived, 'a').at(-1) === newest(a.hub) && seqs(arrived, 'b').at(-1) === newest(b.hub));

    expect(seqs(arrived, 'a')).toEqual(ids(a.hub));
    expect(seqs(arrived, 'b')).toEqual(ids(b.hub));
    expect(pubA.lastPublished()).toBe(newest(a.hub));
    const succeeded = arrived.find((e) => e.hub === 'b' && e.record.kind === 'succeeded')!;
    expect(succeeded.record).toMatchObject({
      id: succeeded.seq,
      channel: 'test:alpha',
      op: 'echo',
      agent: { kind: 'mcp', name: 'claude-code', agent_id: 'claude' },
    });
    expect(succeeded.record).not.toHaveProperty('output');
    expect(succeeded.record.agent).not.toHaveProperty('session');
    expect(arrived.some((e) => 'detail' in e.record)).toBe(false);
    // Each record names the one its hub published before it.
    for (const hub of ['a', 'b']) {
      const mine = arrived.filter((e) => e.hub === hub);
      expect(mine.map((e) => e.prev)).toEqual([0, ...mine.slice(0, -1).map((e) => e.seq)]);
    }
    expect(reader.hubs()).toEqual([
      { hub: 'a', last_seq: newest(a.hub), records: ids(a.hub).length },
      { hub: 'b', last_seq: newest(b.hub), records: ids(b.hub).length },
    ]);
    // Newest first by arrival, filtered by hub, paged with `before`.
    const page = reader.query({ hub: 'a', limit: 2 });
    expect(page.entries.map((e) => e.seq)).toEqual(ids(a.hub).slice(-2).reverse());
    const rest = reader.query({ hub: 'a', before: page.next_before, limit: 1000 });
    expect([...rest.entries, ...page.entries].map((e) => e.seq).sort((x, y) => x - y)).toEqual(ids(a.hub));
    expect(rest.next_before).toBeUndefined();
  });

  it('publishes only what is new when a publisher restarts', async () => {
    await pubA.close();
    const before = newest(a.hub);
    await echo(a, 2, 'while a’s publisher is stopped');
    const seen: number[] = [];
    const spy = readerNc.subscribe(historySubject('a'), {
      callback: (_e, m) => seen.push((JSON.parse(new TextDecoder().decode(m.data)) as { seq: number }).seq),
    });
    await readerNc.flush();
    pubA = startHistoryPublisher({ nc: a.nc!, hub: 'a', source: sourceOf(a.hub), log: (l) => logged.push(l) });
    closers.push(() => pubA.close());
    await until('a’s new records', () => pubA.lastPublished() === newest(a.hub));
    await readerNc.flush();
    spy.unsubscribe();
    expect(seen).toEqual(ids(a.hub).filter((id) => id > before));
    await until('the reader to have them', () => seqs(arrived, 'a').at(-1) === newest(a.hub));
    expect(seqs(arrived, 'a')).toEqual(ids(a.hub));
  });

  it('publishes only the newest `backfill` records of a hub the stream has nothing of', async () => {
    const c = member('c');
    try {
      await echo(c, 3, 'before c joined');
      const pubC = startHistoryPublisher({ nc: readerNc, hub: 'c', source: sourceOf(c.hub), backfill: 2 });
      closers.push(() => pubC.close());
      await until('c’s backfill', () => seqs(arrived, 'c').at(-1) === newest(c.hub));
      expect(seqs(arrived, 'c')).toEqual(ids(c.hub).slice(-2));
      expect(arrived.find((e) => e.hub === 'c')?.prev).toBe(0);
      await pubC.close();
    } finally {
      await c.hub.close();
    }
  });

  it('delivers what was recorded while the server was down (kill -9), with no gap', async () => {
    await killNats();
    await echo(a, 3, 'during the outage');
    await echo(b, 2, 'during the outage');
    await startNats();
    pubA.resume();
    pubB.resume();
    await until('the records of the outage', () => seqs(arrived, 'a').at(-1) === newest(a.hub) && seqs(arrived, 'b').at(-1) === newest(b.hub), 20_000);
    expect(seqs(arrived, 'a')).toEqual(ids(a.hub));
    expect(seqs(arrived, 'b')).toEqual(ids(b.hub));
    // Still live afterwards.
    await echo(b, 1, 'after the outage');
    await until('a live record after the outage', () => seqs(arrived, 'b').at(-1) === newest(b.hub));
  });

  it('ignores a forged or invalid message and goes on', async () => {
    const js = readerNc.jetstream();
    const fromB = arrived.find((e) => e.hub === 'b')!;
    const forged = { hub: 'a', seq: 999_999, prev: newest(a.hub), record: { ...fromB.record, id: 999_999 } };
    await js.publish(historySubject('b'), new TextEncoder().encode(JSON.stringify(forged)));
    await js.publish(historySubject('b'), new TextEncoder().encode('{"hub":"b","seq":"not a number"}'));
    await js.publish(historySubject('b'), new TextEncoder().encode(JSON.stringify({ ...forged, hub: 'b', record: { ...forged.record, kind: 'exploded' } })));
    // A valid record replayed (same hub, same seq) is a duplicate.
    const { cursor: _, ...replayed } = fromB;
    await js.publish(historySubject('b'), new TextEncoder().encode(JSON.stringify(replayed)));
    await echo(b, 1, 'after the forgery');
    await until('b’s next record', () => seqs(arrived, 'b').at(-1) === newest(b.hub));
    expect(arrived.some((e) => e.seq === 999_999)).toBe(false);
    expect(seqs(arrived, 'b')).toEqual(ids(b.hub));
    expect(logged.filter((l) => l.includes('ignored a message on uplink.history.b'))).toHaveLength(1);
    expect(reader.hubs().find((h) => h.hub === 'a')?.last_seq).toBe(newest(a.hub));
  });

  it('shows a reader started late the older records, up to `keep` of them', async () => {
    const late = startHistoryReader({ nc: b.nc! });
    closers.push(() => late.close());
    await until(
      'the late reader to catch up',
      () => late.hubs().find((h) => h.hub === 'b')?.last_seq === newest(b.hub) && late.hubs().find((h) => h.hub === 'a')?.last_seq === newest(a.hub),
    );
    expect(
      late
        .query({ hub: 'a', limit: 1000 })
        .entries.map((e) => e.seq)
        .reverse(),
    ).toEqual(ids(a.hub));
    const small = startHistoryReader({ nc: b.nc!, keep: 3 });
    closers.push(() => small.close());
    const { state } = await (await b.nc!.jetstreamManager()).streams.info(HISTORY_STREAM);
    await until('the small reader to read the newest three', () => small.query({}).entries.length === 3 && state.last_seq > 0);
    expect(small.query({}).entries.map((e) => e.seq)).toEqual(
      arrived
        .slice(-3)
        .map((e) => e.seq)
        .reverse(),
    );
  });

  it('bounds a reader’s memory in bytes as well as records, whatever size the args are', async () => {
    const bounded = startHistoryReader({ nc: b.nc!, keepBytes: 64 * 1024 });
    closers.push(() => bounded.close());
    await echo(a, 8, 'x'.repeat(20_000));
    await until('the bounded reader to see a’s newest record', () => bounded.hubs().find((h) => h.hub === 'a')?.last_seq === newest(a.hub));
    const kept = bounded.query({ limit: 1000 }).entries;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept[0]!.seq).toBe(newest(a.hub));
    expect(kept.reduce((n, e) => n + JSON.stringify(e.record).length, 0)).toBeLessThanOrEqual(64 * 1024);
  });
  it('sends a live record in the turn that recorded it, not after the event loop’s next round of I/O', async () => {
    const nc = await open();
    closers.push(() => nc.close());
    const sent: string[] = [];
    const publish = nc.publish.bind(nc);
    nc.publish = (subject, data, opts) => (sent.push(subject), publish(subject, data, opts));
    const listeners = new Set<(e: AuditEntry) => void>();
    const rows: AuditEntry[] = [];
    const source: HistorySource = {
      after: (cursor, limit) => rows.filter((r) => r.id > cursor).slice(0, limit),
      newest: () => rows.length,
      subscribe: (l) => (listeners.add(l), () => void listeners.delete(l)),
    };
    const record = (): void => {
      const e: AuditEntry = {
        id: rows.length + 1,
        at: Date.now(),
        type: 'event',
        kind: 'succeeded',
        invocation_id: `inv-${rows.length}`,
        outcome: 'succeeded',
      };
      rows.push(e);
      for (const l of listeners) l(e);
    };
    const pub = startHistoryPublisher({ nc, hub: 'turn', source });
    closers.push(() => pub.close());
    record();
    await until('the first record acked', () => pub.lastPublished() === 1);
    record();
    // One microtask later: the code that recorded it has returned, no I/O has been read since.
    await Promise.resolve();
    expect(sent.filter((s) => s === historySubject('turn'))).toHaveLength(2);
    await until('the second record acked', () => pub.lastPublished() === 2);
    await until('the reader to have both', () => seqs(arrived, 'turn').length === 2);
  });

  it('keeps the records after a gap in stream order while the gap is looked for, and says what is missing', async () => {
    const js = readerNc.jetstream();
    const row = (id: number): AuditEntry => ({ id, at: Date.now(), type: 'event', kind: 'succeeded', invocation_id: `gap-${id}`, outcome: 'succeeded' });
    // g's record 2 never reached the stream; what comes after it arrives while the reader looks for it.
    const order: Array<[string, number, number]> = [
      ['g', 1, 0],
      ['g', 3, 2],
      ['g', 4, 3],
      ['h', 1, 0],
      ['g', 5, 4],
    ];
    await Promise.all(order.map(([hub, id, prev]) => js.publish(historySubject(hub), encodeFleetRecord(hub, prev, row(id)))));
    await until('g’s and h’s records', () => arrived.filter((e) => e.hub === 'g' || e.hub === 'h').length === order.length);
    expect(arrived.filter((e) => e.hub === 'g' || e.hub === 'h').map((e) => `${e.hub}:${e.seq}`)).toEqual(['g:1', 'g:3', 'g:4', 'h:1', 'g:5']);
    expect(logged).toContain("history: hub g's records 2..2 are no longer in the stream");
  });
});
