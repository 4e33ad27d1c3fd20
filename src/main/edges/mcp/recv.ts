/**
 * `channel_recv` without `driver`: every messaging driver read at once, merged. Its cursor is
 * opaque to the agent: base64url of `{"v":1,"at":{"<driver>":<its cursor>,…}}`, each driver's own
 * position, checked and bounded when it comes back. A driver missing from it (enabled since) is
 * read from its beginning. An integer cursor is the first messaging driver's own (what the tool
 * took before it merged). With `driver`, the tool reads that driver alone with its integer cursor.
 */
import { HubError, toHubError } from '../../hub';
import type { CallOptions, Hub, RecvBatch } from '../../hub';

/** Longest merged cursor accepted, and most drivers it may name. */
export const MAX_CURSOR_CHARS = 4096;
const MAX_CURSOR_DRIVERS = 64;

type RecvItem = RecvBatch['items'][number];

/** A merged read: items of every driver that answered, by time then driver, and the drivers that failed. */
export interface MergedRecv {
  items: RecvItem[];
  next_cursor: string;
  failed?: Array<{ driver: string; error: string }>;
}

const invalid = (why: string): HubError =>
  new HubError('core', 'Invalid', `channel_recv cursor is not one this hub gave: ${why}`, {
    hint: 'pass back next_cursor exactly as the last channel_recv answered it, or omit cursor to read from the beginning',
  });

export function encodeCursor(at: Record<string, number>): string {
  return Buffer.from(JSON.stringify({ v: 1, at })).toString('base64url');
}

/** Each driver's position in a merged cursor (an integer: the first messaging driver's). */
export function decodeCursor(cursor: string | number | undefined, first: string | undefined): Record<string, number> {
  if (cursor === undefined) return {};
  if (typeof cursor === 'number') return first === undefined ? {} : { [first]: cursor };
  if (cursor.length > MAX_CURSOR_CHARS) throw invalid(`it is ${cursor.length} characters; the limit is ${MAX_CURSOR_CHARS}`);
  if (!/^[A-Za-z0-9_-]*$/.test(cursor)) throw invalid('it is not base64url');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('it does not decode');
  }
  const at = (parsed as { v?: unknown; at?: unknown } | null)?.at;
  if ((parsed as { v?: unknown }).v !== 1 || at === null || typeof at !== 'object' || Array.isArray(at)) throw invalid('it has no driver positions');
  const entries = Object.entries(at as Record<string, unknown>);
  if (entries.length > MAX_CURSOR_DRIVERS) throw invalid(`it names ${entries.length} drivers; the limit is ${MAX_CURSOR_DRIVERS}`);
  for (const [driver, position] of entries)
    if (driver.length > 128 || typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0)
      throw invalid('a driver position is not a non-negative integer');
  return at as Record<string, number>;
}

/** Reads every messaging driver from its position in `cursor` and merges what they answer. */
export async function recvMerged(hub: Hub, cursor: string | number | undefined, call: CallOptions): Promise<MergedRecv> {
  const drivers = await hub.messagingDrivers();
  if (drivers.length === 0)
    throw new HubError('core', 'NotFound', 'no messaging driver is enabled', { hint: 'run `uplink doctor` to see the enabled drivers' });
  const at = decodeCursor(cursor, drivers[0]);
  const answers = await Promise.allSettled(drivers.map((driver) => hub.recv(at[driver], { ...call, driver })));
  const items: Array<{ item: RecvItem; driver: string; order: number }> = [];
  const next: Record<string, number> = {};
  const failed: Array<{ driver: string; error: HubError }> = [];
  answers.forEach((a, i) => {
    const driver = drivers[i]!;
    if (a.status === 'fulfilled') {
      next[driver] = a.value.next_cursor;
      a.value.items.forEach((item, order) => items.push({ item, driver, order }));
    } else {
      // A driver that failed keeps its position: the next read asks it again from there.
      if (at[driver] !== undefined) next[driver] = at[driver];
      failed.push({ driver, error: toHubError(`${driver}:*`, a.reason) });
    }
  });
  if (failed.length === drivers.length) throw failed[0]!.error;
  const time = (item: RecvItem): number => {
    const t = Date.parse(item.at);
    return Number.isNaN(t) ? 0 : t;
  };
  items.sort((x, y) => time(x.item) - time(y.item) || (x.driver < y.driver ? -1 : x.driver > y.driver ? 1 : 0) || x.order - y.order);
  return {
    items: items.map((x) => x.item),
    next_cursor: encodeCursor(next),
    ...(failed.length ? { failed: failed.map((f) => ({ driver: f.driver, error: f.error.rendered })) } : {}),
  };
}
