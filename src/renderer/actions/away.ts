/**
 * "While you were away": what ended without the operator while this browser's panel was not
 * connected — prompts denied by the default policy, timed out, cancelled by their agent, ended by a
 * stopping hub, calls lost with a hub that died — read from the audit, since the last moment this
 * browser's panel was connected (kept in its origin's storage, shared by its tabs).
 */
import type { TimelineEvent } from '../../shared/audit-record';
import { getApi } from '../api';
import { set } from './common';

const SEEN_KEY = 'uplink.panel-seen-at';
/** How often a connected panel notes that it is (a closed or crashed tab is away from then on). */
const SEEN_EVERY_MS = 10_000;
/** How much history one look back reads at most. */
const MAX_PAGES = 10;

/** Whether an audit record says a call ended unattended. */
export function endedUnattended(e: TimelineEvent): boolean {
  if (e.outcome === 'lost') return true;
  if (e.type !== 'decision' || e.granted !== false || !e.invocation_id) return false;
  return e.authorized === 'timeout' || e.authorized === 'default_policy' || e.authorized === 'cancelled' || e.authorized === 'closed';
}

const storage = (): Storage | undefined => {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
};

let seenTimer: ReturnType<typeof setInterval> | undefined;
const noteSeen = (): void => storage()?.setItem(SEEN_KEY, String(Date.now()));

/** Starts or stops noting that this browser's panel is connected; on connect, loads what happened since it last was. */
export function awayConnection(open: boolean): void {
  if (!open) {
    if (seenTimer) noteSeen();
    if (seenTimer) clearInterval(seenTimer);
    seenTimer = undefined;
    return;
  }
  if (seenTimer) return;
  const since = Number(storage()?.getItem(SEEN_KEY) ?? NaN);
  noteSeen();
  seenTimer = setInterval(noteSeen, SEEN_EVERY_MS);
  if (typeof window !== 'undefined') window.addEventListener('pagehide', noteSeen);
  if (Number.isFinite(since) && since > 0) void loadAway(since);
}

/** Reads the audit back to `since` (newest pages first) and shows what ended unattended. */
export async function loadAway(since: number): Promise<void> {
  const found: TimelineEvent[] = [];
  let before: number | undefined;
  try {
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await getApi().queryTimeline({ limit: 500, ...(before !== undefined ? { before } : {}) });
      for (const e of page.events) if (e.at > since && endedUnattended(e)) found.push(e);
      const oldest = page.events[0];
      if (page.next_before === null || !oldest || oldest.at <= since) break;
      before = page.next_before;
    }
  } catch {
    return; // Not connected after all: the next connect looks again.
  }
  // One line per call: its last such record; oldest first.
  const byCall = new Map<string, TimelineEvent>();
  for (const e of found.sort((a, b) => a.id - b.id)) byCall.set(e.invocation_id ?? String(e.id), e);
  const items = [...byCall.values()];
  set((s) => {
    const known = new Set(s.approvals.away.map((e) => e.id));
    return { approvals: { ...s.approvals, away: [...s.approvals.away, ...items.filter((e) => !known.has(e.id))] } };
  });
}

/** The operator has read the list. */
export function dismissAway(): void {
  set((s) => ({ approvals: { ...s.approvals, away: [] } }));
}
