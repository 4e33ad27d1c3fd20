/**
 * The SSE events of `/mcp`, kept so a client whose stream dropped can reconnect with
 * `Last-Event-ID` and get what it missed (the SDK's `EventStore`). Memory is bounded per stream
 * and in all (events and bytes), oldest first; a session's events go when the session closes.
 * A stream keeps a contiguous tail, so a resume either replays everything after its cursor or
 * is refused as unknown: never a silent gap.
 */
import type { EventId, EventStore, StreamId } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How much is kept. */
export interface EventLimits {
  streamEvents: number;
  streamBytes: number;
  totalEvents: number;
  totalBytes: number;
}

/** A stream holds a 1 MB base64 screenshot answer with room to spare; all streams of all sessions share the total. */
export const EVENT_LIMITS: EventLimits = { streamEvents: 1024, streamBytes: 4 * 1024 * 1024, totalEvents: 16_384, totalBytes: 16 * 1024 * 1024 };

interface Stream {
  id: StreamId;
  entries: Entry[];
  bytes: number;
  owner: Map<StreamId, Stream>;
}

interface Entry {
  seq: number;
  stream: Stream;
  /** Serialized, so the bound counts what memory holds; undefined for a priming event (no message). */
  text: string | undefined;
  bytes: number;
}

/** One session's view: the SDK transport's event store, plus what the HTTP server needs. */
export interface SessionEvents extends EventStore {
  /** True when the event is held for this session (another session's ids are unknown here). */
  knows(eventId: EventId): boolean;
  /** Frees every event of the session; later events are not kept. */
  drop(): void;
}

/** All sessions' events under one bound. */
export class EventBuffer {
  private seq = 0;
  /** Every held event, oldest first (Map keeps insertion order). */
  private readonly all = new Map<number, Entry>();
  private bytes = 0;

  constructor(private readonly limits: EventLimits = EVENT_LIMITS) {}

  /** What is held now. */
  get size(): { events: number; bytes: number } {
    return { events: this.all.size, bytes: this.bytes };
  }

  forSession(): SessionEvents {
    const streams = new Map<StreamId, Stream>();
    let dropped = false;
    const find = (eventId: EventId): Entry | undefined => {
      const entry = /^\d{1,15}$/.test(eventId) ? this.all.get(Number(eventId)) : undefined;
      return entry && entry.stream.owner === streams ? entry : undefined;
    };
    return {
      storeEvent: async (streamId, message) => {
        const seq = ++this.seq;
        if (!dropped) this.store(streams, streamId, message, seq);
        return String(seq);
      },
      getStreamIdForEventId: async (eventId) => find(eventId)?.stream.id,
      replayEventsAfter: async (lastEventId, { send }) => {
        const from = find(lastEventId);
        if (!from) throw new Error(`event ${lastEventId} is not held`);
        for (const e of from.stream.entries.filter((x) => x.seq > from.seq)) {
          if (e.text !== undefined) await send(String(e.seq), JSON.parse(e.text) as JSONRPCMessage);
        }
        return from.stream.id;
      },
      knows: (eventId) => find(eventId) !== undefined,
      drop: () => {
        dropped = true;
        for (const s of [...streams.values()]) this.clear(s);
      },
    };
  }

  private store(streams: Map<StreamId, Stream>, streamId: StreamId, message: JSONRPCMessage, seq: number): void {
    let stream = streams.get(streamId);
    if (!stream) streams.set(streamId, (stream = { id: streamId, entries: [], bytes: 0, owner: streams }));
    // The SDK's priming event carries no message: only its id matters.
    const text = 'jsonrpc' in message ? JSON.stringify(message) : undefined;
    const bytes = text === undefined ? 0 : Buffer.byteLength(text);
    if (bytes > this.limits.streamBytes || bytes > this.limits.totalBytes) {
      // Keeping older events without this one would let a resume skip it.
      this.clear(stream);
      return;
    }
    const entry: Entry = { seq, stream, text, bytes };
    stream.entries.push(entry);
    stream.bytes += bytes;
    this.all.set(seq, entry);
    this.bytes += bytes;
    while (stream.entries.length > this.limits.streamEvents || stream.bytes > this.limits.streamBytes) this.evictOldest(stream);
    while (this.all.size > this.limits.totalEvents || this.bytes > this.limits.totalBytes) {
      this.evictOldest(this.all.values().next().value!.stream);
    }
  }

  /** Removes a stream's oldest event (a stream's oldest is older than all its others, so the tail stays contiguous). */
  private evictOldest(stream: Stream): void {
    const e = stream.entries.shift()!;
    stream.bytes -= e.bytes;
    this.all.delete(e.seq);
    this.bytes -= e.bytes;
    if (stream.entries.length === 0) stream.owner.delete(stream.id);
  }

  private clear(stream: Stream): void {
    while (stream.entries.length > 0) this.evictOldest(stream);
    stream.owner.delete(stream.id);
  }
}
