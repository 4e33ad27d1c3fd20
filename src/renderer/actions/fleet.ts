/** The fleet: its members (live), and its merged timeline (live entries batched per frame, paging, a hub filter). */
import type { FleetTimelineEntry, FleetView } from '../../shared/panel-types';
import { getApi } from '../api';
import { frameBatch, get, load, message, set } from './common';

/** Entries kept in memory; the oldest beyond it are dropped (a hub's own `uplink log` has them all). */
export const MAX_FLEET_ENTRIES = 5_000;
const PAGE = 500;

/** Live entries that arrived while a fresh first page was on its way: merged with that page. */
let arrivedDuringReset: FleetTimelineEntry[] | undefined;
/** Bumped by every fresh load, so an answer for an older filter or connection is dropped. */
let generation = 0;

export async function loadFleetStatus(): Promise<void> {
  await load(
    (status) => set((s) => ({ fleet: { ...s.fleet, status } })),
    () => get().fleet.status,
    () => getApi().fleetStatus(),
  );
}

export function fleetChanged(view: FleetView): void {
  set((s) => ({ fleet: { ...s.fleet, status: { loading: false, data: view } } }));
}

const entryKey = (e: FleetTimelineEntry): string => `${e.hub}\u0000${e.seq}`;

/**
 * `more` merged into `entries`, newest first, without duplicates; beyond the bound the oldest are
 * dropped and `before` moves up to the oldest kept.
 */
export function mergeFleetEntries(
  entries: FleetTimelineEntry[],
  more: FleetTimelineEntry[],
  before: number | null,
  max = MAX_FLEET_ENTRIES,
): { entries: FleetTimelineEntry[]; before: number | null } {
  const seen = new Set(entries.map(entryKey));
  const fresh = more.filter((e) => {
    const k = entryKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (fresh.length === 0) return { entries, before };
  const merged = [...fresh, ...entries].sort((a, b) => b.cursor - a.cursor);
  if (merged.length <= max) return { entries: merged, before };
  const kept = merged.slice(0, max);
  return { entries: kept, before: kept[kept.length - 1]!.cursor };
}

/** Live entries, batched (~one frame); those of other hubs are skipped while one hub is picked. */
const live = frameBatch<FleetTimelineEntry>((entries) => {
  const hub = get().fleet.hub;
  const batch = hub ? entries.filter((e) => e.hub === hub) : entries;
  if (batch.length === 0) return;
  if (arrivedDuringReset) return void arrivedDuringReset.push(...batch);
  set((s) => ({ fleet: { ...s.fleet, ...mergeFleetEntries(s.fleet.entries, batch, s.fleet.before) } }));
});

export function enqueueFleetEntry(e: FleetTimelineEntry): void {
  live.push(e);
}

/** Drops buffered live entries (on dispose). */
export function discardFleetBuffer(): void {
  live.discard();
  arrivedDuringReset = undefined;
}

/** Applies buffered live entries now. */
export function flushFleetEntries(): void {
  live.flush();
}

/** Loads the newest page afresh (`reset`) or the page before the oldest entry kept. */
export async function loadFleetTimeline(reset = false): Promise<void> {
  const f = get().fleet;
  if (!reset && (f.loadingOlder || !f.loaded || f.before === null || f.entries.length >= MAX_FLEET_ENTRIES)) return;
  const gen = reset ? ++generation : generation;
  if (reset) arrivedDuringReset = [];
  set((s) => ({ fleet: { ...s.fleet, loadingOlder: true, error: undefined } }));
  try {
    const before = reset ? undefined : f.before;
    const page = await getApi().fleetTimeline({
      limit: PAGE,
      ...(f.hub ? { hub: f.hub } : {}),
      ...(before !== undefined && before !== null ? { before } : {}),
    });
    if (gen !== generation) return;
    if (reset) {
      const live = arrivedDuringReset ?? [];
      arrivedDuringReset = undefined;
      const merged = mergeFleetEntries(mergeFleetEntries([], page.entries, page.next_before).entries, live, page.next_before);
      set((s) => ({ fleet: { ...s.fleet, ...merged, loaded: true, loadingOlder: false } }));
    } else {
      set((s) => ({ fleet: { ...s.fleet, ...mergeFleetEntries(s.fleet.entries, page.entries, page.next_before), loadingOlder: false } }));
    }
  } catch (error) {
    if (gen !== generation) return;
    if (reset) arrivedDuringReset = undefined;
    set((s) => ({ fleet: { ...s.fleet, loadingOlder: false, error: message(error) } }));
  }
}

/** Shows one hub's entries (undefined: every hub's); the view loads them afresh. */
export function setFleetHub(hub: string | undefined): void {
  if (get().fleet.hub !== hub) set((s) => ({ fleet: { ...s.fleet, hub, entries: [], before: null, loaded: false } }));
}

/** After a reconnect: the status now, and the timeline reloaded when next shown. */
export async function refreshFleet(): Promise<void> {
  set((s) => ({ fleet: { ...s.fleet, loaded: false } }));
  await loadFleetStatus();
}
