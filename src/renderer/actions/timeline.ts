/** Timeline: live events batched per frame, history paging, filters, the detail pane. */
import type { TimelineEvent, TimelineFilter } from '../../shared/panel-types';
import { getApi } from '../api';
import { mergeEvents, mergeOrder, trimRows } from '../store/timeline-model';
import { frameBatch, get, load, message, set } from './common';

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
    return { timeline: { ...t, order, before, version: t.version + 1 } };
  });
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

export function setTimelineFilter(filter: TimelineFilter): void {
  set((s) => ({ timeline: { ...s.timeline, filter } }));
}

export function setFollow(follow: boolean): void {
  if (get().timeline.follow !== follow) set((s) => ({ timeline: { ...s.timeline, follow } }));
}

export async function selectInvocation(key: string | undefined): Promise<void> {
  set((s) => ({ timeline: { ...s.timeline, selected: key, detail: { loading: !!key } } }));
  const row = key ? get().timeline.rows.get(key) : undefined;
  if (!row?.invocation_id) return void set((s) => ({ timeline: { ...s.timeline, detail: { loading: false } } }));
  const id = row.invocation_id;
  await load(
    (detail) => set((s) => (s.timeline.selected === key ? { timeline: { ...s.timeline, detail } } : s)),
    () => get().timeline.detail,
    () => getApi().getInvocation({ invocation_id: id }),
  );
}
