/**
 * The fleet's merged history (docs/fleet.md, "History across the fleet"): every hub publishes its audit records to one
 * JetStream stream, one subject per hub; any hub reads the whole stream into one timeline.
 *
 * A record travels without its output (results can be big) and without `detail` (provider text is
 * operator-only and stays home). The owning hub's audit store stays the truth: the publisher only
 * ever reads it forwards from what the stream already holds, so what is recorded while NATS is
 * away is published when it comes back, and a live record merely wakes the publisher up.
 */
import { DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, createInbox, headers as natsHeaders, nanos } from 'nats';
import type { JsMsg, Msg, MsgHdrs, NatsConnection, StoredMsg, Subscription } from 'nats';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { schemaValidator } from '../../kernel';
import { AUDIT_RECORD_SCHEMA, RECORD_AGENT_SCHEMA, omitProperties, pickRecord } from '../../../shared/audit-record';
import type { AuditRecord } from '../../../shared/audit-record';
import { jsonDepth, MAX_DEPTH } from '../bounds';
import type { AuditEntry } from '../types';
import { sharedTrust } from './keys';
import type { FleetTrust } from './keys';
import { believeWith } from './link';

export const HISTORY_STREAM = 'UPLINK_HISTORY';
export const historySubject = (hub: string): string => `uplink.history.${hub}`;
const ALL_HISTORY = 'uplink.history.*';
const SUBJECT_PREFIX = 'uplink.history.';

/** One message's body at most; a bigger record has its args replaced by a note. */
export const MAX_HISTORY_BYTES = 64 * 1024;
/** Stream limits: a week, 1 GiB, 100,000 records per hub, whichever is reached first drops the oldest. */
const MAX_AGE_MS = 7 * 24 * 3600 * 1000;
const MAX_STREAM_BYTES = 1024 ** 3;
const MAX_PER_HUB = 100_000;
/** Republishing a record (an ack lost to a disconnect) within this window is stored once. */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
/** Records read from the audit store per page while catching up. */
const PAGE = 200;
/** An ack not back by then: NATS is away (a publish made while disconnected waits in the client). */
const PUBLISH_TIMEOUT_MS = 2000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/** The audit record as it travels: no output, no operator-only detail, the agent as recorded. */
export type FleetAuditRecord = Omit<AuditRecord, 'output' | 'detail'>;

/** One record as it travels. seq = the audit row id on the owning hub (increasing); prev = the seq
 *  this hub published just before it (0 for its first), so a reader can tell a gap from a jump. */
export interface FleetRecord {
  hub: string;
  seq: number;
  prev: number;
  record: FleetAuditRecord;
}

/** What a reader keeps: the record plus `cursor`, its local arrival order (increasing, for paging). */
export interface FleetEntry extends FleetRecord {
  cursor: number;
}

/** Where a publisher reads its own hub's audit. */
export interface HistorySource {
  /** Records with id > cursor, oldest first, at most `limit` (hub.queryAudit({after, limit}).entries). */
  after(cursor: number, limit: number): AuditEntry[];
  /** The newest record id now (0 when empty). */
  newest(): number;
  /** Live records as they are recorded (hub.subscribe). */
  subscribe(listener: (entry: AuditEntry) => void): () => void;
}

const RECORD_SCHEMA = {
  ...omitProperties(AUDIT_RECORD_SCHEMA, 'output', 'detail'),
  properties: { ...omitProperties(AUDIT_RECORD_SCHEMA, 'output', 'detail').properties, agent: RECORD_AGENT_SCHEMA },
};

const MESSAGE_SCHEMA = {
  type: 'object',
  required: ['hub', 'seq', 'prev', 'record'],
  additionalProperties: false,
  properties: {
    hub: { type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 64 },
    seq: { type: 'integer', minimum: 1 },
    prev: { type: 'integer', minimum: 0 },
    record: RECORD_SCHEMA,
  },
};

let validator: ValidateFunction | undefined;
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** The record in `data` if it is one, within size and depth, its seq its record's id; otherwise undefined. */
export function decodeFleetRecord(data: Uint8Array): FleetRecord | undefined {
  if (data.byteLength > MAX_HISTORY_BYTES) return undefined;
  try {
    const text = decoder.decode(data);
    if (jsonDepth(text) > MAX_DEPTH + 4) return undefined;
    const value = JSON.parse(text) as FleetRecord;
    validator ??= schemaValidator(MESSAGE_SCHEMA);
    if (!validator(value) || value.record.id !== value.seq || value.prev >= value.seq) return undefined;
    // A newer hub may send fields this one does not know: keep only the record's own.
    return { hub: value.hub, seq: value.seq, prev: value.prev, record: pickRecord<FleetAuditRecord>(RECORD_SCHEMA, value.record) };
  } catch {
    return undefined;
  }
}

/** The message for one audit entry: always within MAX_HISTORY_BYTES (args, then long texts give way). */
export function encodeFleetRecord(hub: string, prev: number, entry: AuditEntry): Uint8Array {
  const record = pickRecord<FleetAuditRecord>(RECORD_SCHEMA, entry);
  const body = (r: FleetAuditRecord): Uint8Array => encoder.encode(JSON.stringify({ hub, seq: entry.id, prev, record: r }));
  let data = body(record);
  if (data.byteLength <= MAX_HISTORY_BYTES) return data;
  const note = `args left out of the fleet history: the record is ${data.byteLength} bytes, over ${MAX_HISTORY_BYTES}; the full record is in hub ${hub}'s audit`;
  const smaller: FleetAuditRecord = { ...record, ...(record.args !== undefined ? { args: note } : {}) };
  data = body(smaller);
  if (data.byteLength <= MAX_HISTORY_BYTES) return data;
  const cut = Object.fromEntries(Object.entries(smaller).map(([k, v]) => [k, typeof v === 'string' && v.length > 1024 ? `${v.slice(0, 1024)}…` : v]));
  return body(cut as FleetAuditRecord);
}

/** Creates the history stream, or accepts the one there (several hubs race to create it). */
export async function ensureHistoryStream(nc: NatsConnection): Promise<void> {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(HISTORY_STREAM);
    return;
  } catch (e) {
    if (!notFound(e)) throw e;
  }
  try {
    await jsm.streams.add({
      name: HISTORY_STREAM,
      subjects: [ALL_HISTORY],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(MAX_AGE_MS),
      max_bytes: MAX_STREAM_BYTES,
      // The body plus the Nats-Msg-Id header.
      max_msg_size: MAX_HISTORY_BYTES + 1024,
      max_msgs_per_subject: MAX_PER_HUB,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: 1,
    });
  } catch (e) {
    // Another hub created it in between: theirs is as good as ours.
    await jsm.streams.info(HISTORY_STREAM).catch(() => Promise.reject(e));
  }
}

function notFound(e: unknown): boolean {
  const code = (e as { api_error?: { code?: number }; code?: string })?.api_error?.code ?? Number((e as { code?: string })?.code);
  return code === 404;
}

const reason = (e: unknown): string => String((e as Error)?.message ?? e);

/** Logs a line once until `reset()`: a failure that repeats every retry is said once. */
function onceLog(log: ((line: string) => void) | undefined): { say(line: string): void; reset(): void } {
  let said = false;
  return {
    say: (line) => {
      if (said) return;
      said = true;
      log?.(line);
    },
    reset: () => {
      said = false;
    },
  };
}

/** The inbox prefix `nc` was opened with (a roster fleet lets a hub subscribe only under its own), as nats.js's own requests use it. */
function inboxPrefixOf(nc: NatsConnection): string | undefined {
  return (nc as NatsConnection & { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
}

/** Why an ack says a publish was not stored (no JetStream answered, or it refused), or undefined when it was. */
export function ackFailure(m: Pick<Msg, 'data' | 'headers'>): string | undefined {
  if (m.data.byteLength === 0) return m.headers?.code === 503 ? 'no JetStream answered the publish (503)' : 'an empty ack';
  try {
    const ack = JSON.parse(decoder.decode(m.data)) as { stream?: unknown; error?: { code?: number; description?: string } };
    if (ack.error) return `JetStream refused the record: ${ack.error.description ?? 'no description'} (${ack.error.code ?? '?'})`;
    return ack.stream === HISTORY_STREAM ? undefined : `the ack names stream ${String(ack.stream)}, not ${HISTORY_STREAM}`;
  } catch {
    return 'an ack that is not JSON';
  }
}

/**
 * Publishes this hub's audit records to the stream: first what the stream lacks (everything after
 * the last record it has of this hub, or the newest `backfill` when it has none), then live. One
 * message at a time, each acked before the next, with msgID `<hub>:<seq>` so a republished record
 * is stored once. When NATS is away it pauses and retries by itself; `resume()` (on reconnect)
 * retries at once.
 *
 * Acks come to one inbox of the publisher's own rather than through `js.publish`, whose request per
 * record makes a timer, a mux entry and three stack-capturing errors: most of a record's cost on
 * the hub's event loop after signing.
 */
export function startHistoryPublisher(o: {
  nc: NatsConnection;
  hub: string;
  source: HistorySource;
  backfill?: number;
  log?: (line: string) => void;
  /** Signs each record (with a roster); a record the stream holds under this hub's subject counts only if this hub signed it. */
  trust?: FleetTrust;
}): {
  resume(): void;
  lastPublished(): number;
  close(): Promise<void>;
} {
  const { nc, hub, source } = o;
  const trust = o.trust ?? sharedTrust();
  const subject = historySubject(hub);
  const problem = onceLog(o.log);
  /** The last seq the stream acked; undefined until the stream was asked what it has. */
  let last: number | undefined;
  /** Where reading the source continues (ahead of `last` only before the first publish of a backfill). */
  let cursor = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const inbox = createInbox(inboxPrefixOf(nc));
  let acks: Subscription | undefined;
  /** The one publish awaiting its ack, by its reply token: an ack to an earlier one that timed out is ignored. */
  let waiting: { token: string; settle(failure: string | undefined): void } | undefined;
  let sent = 0;

  function onAck(m: Msg): void {
    if (!waiting || m.subject !== `${inbox}.${waiting.token}`) return;
    waiting.settle(ackFailure(m));
  }

  /** Publishes one record and resolves once the stream stored it (or had it already: same msgID). */
  function publishOne(data: Uint8Array, msgID: string, headers: MsgHdrs | undefined): Promise<void> {
    acks ??= nc.subscribe(`${inbox}.*`, { callback: (e, m) => void (e ? undefined : onAck(m)) });
    const token = String(++sent);
    const h = headers ?? natsHeaders();
    h.set('Nats-Msg-Id', msgID);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => waiting?.settle(`no ack within ${PUBLISH_TIMEOUT_MS} ms`), PUBLISH_TIMEOUT_MS);
      waiting = {
        token,
        settle: (failure) => {
          clearTimeout(timer);
          waiting = undefined;
          if (failure) reject(new Error(failure));
          else resolve();
        },
      };
      try {
        nc.publish(subject, data, { reply: `${inbox}.${token}`, headers: h });
      } catch (e) {
        clearTimeout(timer);
        waiting = undefined;
        reject(e as Error);
      }
    });
  }

  async function start(): Promise<void> {
    await ensureHistoryStream(nc);
    const jsm = await nc.jetstreamManager();
    let held: StoredMsg | undefined;
    try {
      held = await jsm.streams.getMessage(HISTORY_STREAM, { last_by_subj: subject });
    } catch (e) {
      if (!notFound(e)) throw e;
    }
    // Where this hub goes on from is what it signed itself: a record someone else put under its subject moves nothing.
    const own = held && believeWith(trust, { subject: held.subject, data: held.data, headers: held.header }, hub, false);
    if (held && !own)
      o.log?.(
        `history: the stream's last record under ${subject} is not signed by hub ${hub}; publishing from this hub's own audit — hint: restrict who may publish there (uplink fleet init writes such a server config)`,
      );
    const mine = held && own ? decodeFleetRecord(held.data) : undefined;
    const newest = source.newest();
    last = mine?.seq ?? 0;
    cursor = mine ? mine.seq : Math.max(0, newest - (o.backfill ?? 1000));
    if (last > newest)
      o.log?.(
        `history: the stream holds records of hub ${hub} up to ${last} but its audit ends at ${newest}; its records are published once they pass ${last} — hint: is another hub (another data directory) using the name ${hub}?`,
      );
  }

  async function publishAll(): Promise<void> {
    if (last === undefined) await start();
    for (;;) {
      const page = source.after(cursor, PAGE);
      for (const entry of page) {
        if (closed) return;
        const data = encodeFleetRecord(hub, last!, entry);
        await publishOne(data, `${hub}:${entry.id}`, trust.seal(subject, data));
        last = cursor = entry.id;
      }
      if (page.length < PAGE) return;
    }
  }

  function pump(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    if (retry) clearTimeout(retry);
    retry = undefined;
    running = (async () => {
      do {
        again = false;
        try {
          await publishAll();
          problem.reset();
          retryMs = RETRY_MIN_MS;
        } catch (e) {
          if (closed) return;
          problem.say(`history: publishing paused, will retry: ${reason(e)}`);
          retry = setTimeout(pump, retryMs);
          retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
          return;
        }
      } while (again && !closed);
    })().finally(() => {
      running = undefined;
    });
  }

  // The hub's recording never waits on NATS: a live entry only wakes the publisher, once for all the
  // entries recorded in one go. It wakes as soon as the code that recorded them returns (a
  // microtask), not after the event loop's next round of I/O, which under load held a record back
  // longer than the rest of its way to a reader took.
  let woken = false;
  const unsubscribe = source.subscribe(() => {
    if (woken || closed) return;
    woken = true;
    queueMicrotask(() => {
      woken = false;
      pump();
    });
  });
  pump();

  return {
    resume: () => {
      retryMs = RETRY_MIN_MS;
      pump();
    },
    lastPublished: () => last ?? 0,
    close: async () => {
      closed = true;
      unsubscribe();
      if (retry) clearTimeout(retry);
      await running;
      acks?.unsubscribe();
    },
  };
}

interface HubState {
  /** The newest seq kept of this hub (duplicates are at or below it). */
  last: number;
  /** The stream sequence of that record, where a gap's fill starts. */
  streamSeq: number;
  /** Entries of this hub in memory now. */
  records: number;
}

/**
 * Reads the whole fleet's history: the newest `keep` records of the stream, then live, keeping the
 * newest `keep` in memory. Per hub, a record at or below the newest seen is a duplicate (dropped);
 * one whose `prev` is above it means records are missing, which are fetched from that hub's
 * subject before it is kept.
 */
export function startHistoryReader(o: {
  nc: NatsConnection;
  keep?: number;
  keepBytes?: number;
  log?: (line: string) => void;
  onEntry?: (e: FleetEntry) => void;
  /** Believes a hub's record only when that hub signed it (with a roster). */
  trust?: FleetTrust;
}): {
  query(q: { hub?: string; before?: number; limit?: number }): { entries: FleetEntry[]; next_before?: number };
  hubs(): Array<{ hub: string; last_seq: number; records: number }>;
  close(): Promise<void>;
} {
  const { nc } = o;
  const trust = o.trust ?? sharedTrust();
  const keep = Math.max(1, o.keep ?? 10_000);
  // Records are small, but an agent's args may reach 64 KiB: the memory bound is in bytes too.
  const keepBytes = Math.max(MAX_HISTORY_BYTES, o.keepBytes ?? 16 * 1024 * 1024);
  const js = nc.jetstream();
  const problem = onceLog(o.log);
  const ignored = onceLog(o.log);
  const hubs = new Map<string, HubState>();
  /** Kept entries are `entries[start..]`, oldest first; the dropped prefix is cut off in chunks. */
  let entries: FleetEntry[] = [];
  /** The message size of each of `entries`, and the sum over the kept ones. */
  let sizes: number[] = [];
  let bytes = 0;
  let start = 0;
  let cursor = 0;
  let closed = false;
  let stop: (() => void) | undefined;
  let wake: (() => void) | undefined;

  function keepEntry(r: FleetRecord, streamSeq: number, size: number): void {
    const st = hubs.get(r.hub) ?? { last: 0, streamSeq: 0, records: 0 };
    hubs.set(r.hub, st);
    st.last = r.seq;
    st.streamSeq = streamSeq;
    st.records++;
    const entry: FleetEntry = { ...r, cursor: ++cursor };
    entries.push(entry);
    sizes.push(size);
    bytes += size;
    while (entries.length - start > keep || (bytes > keepBytes && entries.length - start > 1)) {
      bytes -= sizes[start]!;
      hubs.get(entries[start++]!.hub)!.records--;
    }
    if (start >= keep) {
      entries = entries.slice(start);
      sizes = sizes.slice(start);
      start = 0;
    }
    try {
      o.onEntry?.(entry);
    } catch {
      // A listener's failure must not stop the history.
    }
  }

  function decodeMsg(m: { subject: string; data: Uint8Array; headers?: { get(k: string): string } | undefined }): FleetRecord | undefined {
    const r = decodeFleetRecord(m.data);
    // Checked before the record touches any hub's state: a forged one neither shows nor moves that hub's sequence.
    if (r && SUBJECT_PREFIX + r.hub === m.subject && believeWith(trust, m, r.hub, false)) return r;
    ignored.say(`history: ignored a message on ${m.subject} that is not a valid record of that hub (further ones are ignored silently)`);
    return undefined;
  }

  /** Fetches `hub`'s records after the last one kept, up to (not including) stream sequence `until`. */
  async function fill(hub: string, st: HubState, until: number): Promise<void> {
    const c = await js.consumers.get(HISTORY_STREAM, {
      filterSubjects: historySubject(hub),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: st.streamSeq + 1,
    });
    for (;;) {
      const m = await c.next({ expires: 2000 });
      if (!m || m.seq >= until) break;
      const r = decodeMsg(m);
      if (r && r.seq > st.last) keepEntry(r, m.seq, m.data.byteLength);
    }
    await c.delete().catch(() => undefined);
  }

  /** Keeps one message's record; returns a promise only when the records before it must be fetched first. */
  function take(m: JsMsg): Promise<void> | undefined {
    const r = decodeMsg(m);
    if (!r) return undefined;
    const st = hubs.get(r.hub);
    if (st && r.seq <= st.last) return undefined;
    if (st && r.prev > st.last) return fillThenKeep(r, st, m);
    keepEntry(r, m.seq, m.data.byteLength);
    return undefined;
  }

  async function fillThenKeep(r: FleetRecord, st: HubState, m: JsMsg): Promise<void> {
    const missing = `${st.last + 1}..${r.prev}`;
    await fill(r.hub, st, m.seq).catch((e) => o.log?.(`history: could not fetch hub ${r.hub}'s records ${missing}: ${reason(e)}`));
    if (r.prev > st.last) o.log?.(`history: hub ${r.hub}'s records ${st.last + 1}..${r.prev} are no longer in the stream`);
    keepEntry(r, m.seq, m.data.byteLength);
  }

  async function follow(): Promise<void> {
    let next: number | undefined;
    let retryMs = RETRY_MIN_MS;
    while (!closed) {
      // Messages are taken in the consumer's callback, as they are read off the socket: through its
      // async iterator each one waited for a few promise turns and left more garbage behind. While a
      // gap is being filled the ones after it wait here, in order.
      const waiting: JsMsg[] = [];
      let filling: Promise<void> | undefined;
      let current = true;
      const drain = async (first: Promise<void>, m: JsMsg): Promise<void> => {
        try {
          await first;
          next = m.seq + 1;
          for (let w = waiting.shift(); w && current; w = waiting.shift()) {
            await take(w);
            next = w.seq + 1;
          }
        } finally {
          filling = undefined;
        }
      };
      const onMessage = (m: JsMsg): void => {
        if (!current) return;
        if (filling) {
          waiting.push(m);
          return;
        }
        const gap = take(m);
        if (gap) filling = drain(gap, m);
        else next = m.seq + 1;
      };
      try {
        await ensureHistoryStream(nc);
        if (next === undefined) {
          const { state } = await (await nc.jetstreamManager()).streams.info(HISTORY_STREAM);
          next = Math.max(state.first_seq, state.last_seq - keep + 1, 1);
        }
        const c = await js.consumers.get(HISTORY_STREAM, { filterSubjects: ALL_HISTORY, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next });
        const messages = await c.consume({ callback: onMessage });
        stop = () => void messages.stop();
        if (closed) messages.stop();
        problem.reset();
        retryMs = RETRY_MIN_MS;
        const ended = await messages.closed();
        await filling;
        if (ended instanceof Error) throw ended;
      } catch (e) {
        if (!closed) problem.say(`history: reading paused, will retry: ${reason(e)}`);
      } finally {
        // Whatever still waits is read again from `next` by the next consumer.
        current = false;
        await filling;
      }
      if (closed) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, retryMs);
      });
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    }
  }
  const following = follow();

  return {
    query(q) {
      const limit = Math.min(1000, Math.max(1, q.limit ?? 200));
      const out: FleetEntry[] = [];
      for (let i = entries.length - 1; i >= start; i--) {
        const e = entries[i]!;
        if (q.before !== undefined && e.cursor >= q.before) continue;
        if (q.hub !== undefined && e.hub !== q.hub) continue;
        if (out.length === limit) return { entries: out, next_before: out.at(-1)!.cursor };
        out.push(e);
      }
      return { entries: out };
    },
    hubs: () => [...hubs].map(([hub, st]) => ({ hub, last_seq: st.last, records: st.records })).sort((a, b) => a.hub.localeCompare(b.hub)),
    close: async () => {
      closed = true;
      stop?.();
      wake?.();
      await following;
    },
  };
}
