/** Timeline: live events batched per frame, history paging, filters, the detail pane. */
import type { TimelineEvent, TimelineFilter } from '../../shared/panel-types';
import { SEARCH_PAGE_MAX } from '../../shared/panel-types';
import { getApi } from '../api';
import { browserDownload, csvHeader, formatRecords } from '../export';
import type { Download, ExportFormat } from '../export';
import type { TimelineSearchState } from '../store/slices';
import { matchesFilter, mergeEvents, mergeOrder, rowKey, trimRows } from '../store/timeline-model';
import type { InvocationRow } from '../store/timeline-model';
import { frameBatch, get, load, message, set, toast } from './common';

const live = frameBatch<TimelineEvent>((batch) => ingestTimeline(batch));

/** Live events are batched (~one frame) so a burst costs one store update. */
export function enqueueTimeline(e: TimelineEvent): void {
  live.push(e);
}

/** Drops buffered live events (on dispose). */
export function discardTimelineBuffer(): void {
  live.discard();
}

/** Applies buffered live events now. */
export function flushTimeline(): void {
  live.flush();
}

/** Merges events (live or history) into the timeline. */
export function ingestTimeline(events: TimelineEvent[]): void {
  set((s) => {
    const t = s.timeline;
    const { created, changed } = mergeEvents(t.rows, events);
    if (!changed) return s;
    let order = mergeOrder(t.order, t.rows, created);
    const trimmed = trimRows(order, t.rows);
    let before = t.before;
    if (trimmed !== order) {
      order = trimmed;
      before = t.rows.get(order[0]!)?.first_cursor ?? before;
    }
    return { timeline: { ...t, order, before, version: t.version + 1, search: t.search && searchIngest(t.search, t.rows, events) } };
  });
}

/** A live event for a call the search shows, or for a new call that matches it, joins the results. */
function searchIngest(search: TimelineSearchState, rows: Map<string, InvocationRow>, events: TimelineEvent[]): TimelineSearchState {
  const joining = events.filter((e) => {
    const key = rowKey(e);
    if (search.rows.has(key)) return true;
    const row = rows.get(key);
    return row !== undefined && matchesFilter(row, search.filter);
  });
  if (joining.length === 0) return search;
  // A row seen first here takes every event the timeline holds for it, not only this batch's.
  const all = joining.flatMap((e) => (search.rows.has(rowKey(e)) ? [e] : (rows.get(rowKey(e))?.events ?? [e])));
  const { created, changed } = mergeEvents(search.rows, all);
  if (!changed) return search;
  return { ...search, order: mergeOrder(search.order, search.rows, created), version: search.version + 1 };
}

/** Loads the newest page (`reset`) or the page before the oldest row. */
export async function loadHistory(reset = false): Promise<void> {
  const t = get().timeline;
  if (t.loadingOlder || (!reset && t.historyLoaded && t.before === null)) return;
  set((s) => ({ timeline: { ...s.timeline, loadingOlder: true, error: undefined } }));
  try {
    const before = reset ? undefined : (get().timeline.before ?? undefined);
    const page = await getApi().queryTimeline({ limit: 500, ...(before !== undefined ? { before } : {}) });
    if (page.events.length) ingestTimeline(page.events);
    set((s) => ({
      timeline: { ...s.timeline, loadingOlder: false, historyLoaded: true, before: reset && s.timeline.historyLoaded ? s.timeline.before : page.next_before },
    }));
  } catch (error) {
    set((s) => ({ timeline: { ...s.timeline, loadingOlder: false, error: message(error) } }));
  }
}

/** How long typing pauses before the hub is asked. */
export const SEARCH_DEBOUNCE_MS = 250;
/** Calls per page of search results. */
export const SEARCH_PAGE = 50;
let searchTimer: ReturnType<typeof setTimeout> | undefined;
/** Which search is current: an answer to an older one is dropped. */
let searchSeq = 0;

const sameFilter = (a: TimelineFilter, b: TimelineFilter): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Sets the filters. With text, the hub searches the whole audit (args, output, reasons…) once the
 * typing pauses; without, the rows in memory are filtered here.
 */
export function setTimelineFilter(filter: TimelineFilter): void {
  set((s) => ({ timeline: { ...s.timeline, filter } }));
  if (searchTimer) clearTimeout(searchTimer);
  searchTimer = undefined;
  if (!filter.text?.trim()) {
    searchSeq++;
    if (get().timeline.search) set((s) => ({ timeline: { ...s.timeline, search: undefined } }));
    return;
  }
  const current = get().timeline.search;
  if (current && sameFilter(current.filter, filter)) return;
  searchTimer = setTimeout(() => {
    searchTimer = undefined;
    void searchTimeline(true);
  }, SEARCH_DEBOUNCE_MS);
}

/** Runs the current filter's search (`reset`: from the newest record), or loads its next page. */
export async function searchTimeline(reset = false): Promise<void> {
  const filter = get().timeline.filter;
  if (!filter.text?.trim()) return;
  const prior = get().timeline.search;
  if (!reset && (!prior || prior.loading || prior.before === null)) return;
  const seq = ++searchSeq;
  const base: TimelineSearchState =
    reset || !prior ? { filter, rows: new Map(), order: [], version: 0, before: null, loading: true } : { ...prior, loading: true, error: undefined };
  const before = reset || !prior ? undefined : (prior.before ?? undefined);
  set((s) => ({ timeline: { ...s.timeline, search: base } }));
  try {
    const page = await getApi().searchTimeline({ filter, limit: SEARCH_PAGE, ...(before !== undefined ? { before } : {}) });
    if (seq !== searchSeq) return;
    set((s) => {
      const search = s.timeline.search;
      if (!search) return s;
      const { created } = mergeEvents(search.rows, page.events);
      const order = mergeOrder(search.order, search.rows, created);
      return { timeline: { ...s.timeline, search: { ...search, order, version: search.version + 1, before: page.next_before, loading: false } } };
    });
  } catch (error) {
    if (seq !== searchSeq) return;
    set((s) => ({ timeline: { ...s.timeline, search: s.timeline.search && { ...s.timeline.search, loading: false, error: message(error) } } }));
  }
}

/** Most records one export writes: past it the file ends, and the toast says so. */
export const EXPORT_MAX_RECORDS = 100_000;

/**
 * Downloads the filtered view as JSON Lines or CSV: every record of every call the filters match,
 * over the whole audit, streamed from the hub a page at a time and bounded. Resolves with what was
 * written.
 */
export async function exportTimeline(
  format: ExportFormat,
  download: Download = browserDownload,
): Promise<{ records: number; calls: number; complete: boolean }> {
  const filter = get().timeline.filter;
  const parts: string[] = format === 'csv' ? [csvHeader()] : [];
  let records = 0;
  let calls = 0;
  let before: number | undefined;
  let complete = false;
  const written = new Set<number>();
  const keys = new Set<string>();
  try {
    while (records < EXPORT_MAX_RECORDS) {
      const page = await getApi().searchTimeline({ filter, limit: SEARCH_PAGE_MAX, ...(before !== undefined ? { before } : {}) });
      // A call whose records straddle two pages comes back whole in both: written once.
      const fresh = page.events.filter((e) => !written.has(e.id));
      const room = EXPORT_MAX_RECORDS - records;
      const events = fresh.length > room ? fresh.slice(0, room) : fresh;
      for (const e of events) {
        written.add(e.id);
        if (!e.invocation_id || !keys.has(e.invocation_id)) calls++;
        if (e.invocation_id) keys.add(e.invocation_id);
      }
      parts.push(formatRecords(events, format));
      records += events.length;
      if (page.next_before === null) {
        complete = events.length === fresh.length;
        break;
      }
      before = page.next_before;
    }
  } catch (error) {
    toast('error', `the export stopped after ${records} records: ${message(error)} — hint: try again, or narrow the filters`);
    return { records, calls, complete: false };
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  download(`uplink-timeline-${stamp}.${format}`, format === 'csv' ? 'text/csv;charset=utf-8' : 'application/x-ndjson', parts);
  toast(
    'info',
    `exported ${records.toLocaleString()} record${records === 1 ? '' : 's'} of ${calls.toLocaleString()} call${calls === 1 ? '' : 's'} as ${format === 'csv' ? 'CSV' : 'JSON Lines'}${complete ? '' : ` (stopped at ${EXPORT_MAX_RECORDS.toLocaleString()} records: narrow the filters for the rest)`}`,
  );
  return { records, calls, complete };
}

/** Forgets every row, search and selection (the tab now shows another hub). */
export function resetTimeline(): void {
  live.discard();
  if (searchTimer) clearTimeout(searchTimer);
  searchTimer = undefined;
  searchSeq++;
  set((s) => ({
    timeline: {
      ...s.timeline,
      rows: new Map(),
      order: [],
      version: s.timeline.version + 1,
      selected: undefined,
      detail: { loading: false },
      before: null,
      historyLoaded: false,
      loadingOlder: false,
      error: undefined,
      search: undefined,
    },
  }));
}

export function setFollow(follow: boolean): void {
  if (get().timeline.follow !== follow) set((s) => ({ timeline: { ...s.timeline, follow } }));
}

export async function selectInvocation(key: string | undefined): Promise<void> {
  set((s) => ({ timeline: { ...s.timeline, selected: key, detail: { loading: !!key } } }));
  const row = key ? (get().timeline.rows.get(key) ?? get().timeline.search?.rows.get(key)) : undefined;
  if (!row?.invocation_id) return void set((s) => ({ timeline: { ...s.timeline, detail: { loading: false } } }));
  const id = row.invocation_id;
  await load(
    (detail) => set((s) => (s.timeline.selected === key ? { timeline: { ...s.timeline, detail } } : s)),
    () => get().timeline.detail,
    () => getApi().getInvocation({ invocation_id: id }),
  );
}
