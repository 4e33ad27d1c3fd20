/**
 * The live timeline: one virtualized row per invocation, newest at the bottom. Auto-follow keeps
 * the newest row in view until the operator scrolls up; scrolling to the top pages older
 * history in from the audit store without moving what the operator is looking at.
 */
import type { KeyboardEvent } from 'react';
import { memo, useCallback, useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useShallow } from 'zustand/react/shallow';
import type { TimelineFilter } from '../../shared/panel-types';
import { exportTimeline, loadHistory, searchTimeline, selectInvocation, setFollow, setTimelineFilter } from '../actions';
import { useStore } from '../store';
import { OUTCOMES, outcomeWords } from '../../shared/audit-record';
import { facets, matchesFilter } from '../store/timeline-model';
import { Empty, ErrorBox, Loading } from './common';
import { InvocationDetailPane } from './InvocationDetailPane';
import { ROW_HEIGHT, TimelineRow } from './TimelineRow';

const rowHeight = (): number => ROW_HEIGHT;
/** Calls not ended yet, in the State picker before the outcomes (one list, one set of words). */
const IN_PROGRESS = [
  ['waiting', 'waiting for the operator'],
  ['running', 'in progress'],
] as const;

const Filters = memo(function Filters({ filter, options }: { filter: TimelineFilter; options: ReturnType<typeof facets> }) {
  const change = (patch: Partial<TimelineFilter>) => {
    const next: Record<string, unknown> = { ...filter, ...patch };
    for (const k of Object.keys(next)) if (!next[k]) delete next[k];
    setTimelineFilter(next as TimelineFilter);
  };
  const pick = (name: 'channel' | 'op' | 'agent', values: string[]) => (
    <label>
      {name[0]!.toUpperCase() + name.slice(1)}
      <select value={filter[name] ?? ''} onChange={(e) => change({ [name]: e.target.value })}>
        <option value="">all</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div className="filters" role="search">
      {pick('channel', options.channels)}
      {pick('op', options.ops)}
      {pick('agent', options.agents)}
      <label>
        State
        <select
          value={filter.outcome ?? filter.state ?? ''}
          onChange={(e) => {
            const v = e.target.value;
            const ended = (OUTCOMES as readonly string[]).includes(v);
            change({ state: ended ? undefined : (v as TimelineFilter['state']), outcome: ended ? (v as TimelineFilter['outcome']) : undefined });
          }}
        >
          <option value="">all</option>
          {IN_PROGRESS.map(([v, words]) => (
            <option key={v} value={v}>
              {words}
            </option>
          ))}
          {OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {outcomeWords(o)}
            </option>
          ))}
        </select>
      </label>
      <label className="grow">
        Search
        <input
          type="search"
          value={filter.text ?? ''}
          placeholder="what was typed or sent, output, reason, id…"
          onChange={(e) => change({ text: e.target.value })}
        />
      </label>
    </div>
  );
});

/** Downloads what the filters show, over the whole audit, as JSON Lines or CSV. */
function ExportButtons() {
  const [busy, setBusy] = useState(false);
  const run = (format: 'jsonl' | 'csv') => {
    setBusy(true);
    void exportTimeline(format).finally(() => setBusy(false));
  };
  return (
    <span className="export" role="group" aria-label="Export the filtered view">
      <button type="button" className="btn btn-small" disabled={busy} onClick={() => run('jsonl')}>
        Export JSONL
      </button>
      <button type="button" className="btn btn-small" disabled={busy} onClick={() => run('csv')}>
        Export CSV
      </button>
    </span>
  );
}

export function TimelineView() {
  const t = useStore(
    useShallow((s) => ({
      rows: s.timeline.rows,
      order: s.timeline.order,
      version: s.timeline.version,
      filter: s.timeline.filter,
      follow: s.timeline.follow,
      selected: s.timeline.selected,
      detail: s.timeline.detail,
      before: s.timeline.before,
      historyLoaded: s.timeline.historyLoaded,
      loadingOlder: s.timeline.loadingOlder,
      error: s.timeline.error,
      search: s.timeline.search,
    })),
  );
  const filter = useDeferredValue(t.filter);
  const filtering = Object.keys(filter).length > 0;
  // With text, the hub's search over the whole audit is shown; else the rows in memory, filtered.
  const searching = !!t.filter.text?.trim();
  const search = searching ? t.search : undefined;
  const rows = search?.rows ?? t.rows;
  const visible = useMemo(() => {
    if (searching) return search?.order ?? [];
    if (!filtering) return t.order;
    return t.order.filter((k) => {
      const row = t.rows.get(k);
      return row !== undefined && matchesFilter(row, filter);
    });
    // `version` changes when rows mutate in place.
  }, [t.order, t.rows, t.version, filter, filtering, searching, search, search?.version]);
  const options = useMemo(() => facets(t.rows.values()), [t.rows, t.version]);

  const scrollRef = useRef<HTMLDivElement>(null);
  // Stable callbacks: a new getItemKey would make the virtualizer rebuild all 20,000+
  // measurements on every scroll frame.
  const getItemKey = useCallback((i: number) => visible[i]!, [visible]);
  const getScrollElement = useCallback(() => scrollRef.current, []);
  const virtualizer = useVirtualizer({
    count: visible.length,
    getScrollElement,
    estimateSize: rowHeight,
    overscan: 6,
    // React 19 batches the re-render into the next frame instead of inside the scroll event.
    useFlushSync: false,
    getItemKey,
  });

  // Keep the view steady when older history is prepended; follow the newest row otherwise.
  const firstKey = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    const prevFirst = firstKey.current;
    firstKey.current = visible[0];
    if (!el) return;
    if (t.follow) {
      el.scrollTop = el.scrollHeight;
      return;
    }
    if (prevFirst && visible[0] !== prevFirst) {
      const shift = visible.indexOf(prevFirst);
      if (shift > 0) el.scrollTop += shift * ROW_HEIGHT;
    }
  }, [visible, t.follow]);

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < ROW_HEIGHT;
    setFollow(atBottom);
    const tl = useStore.getState().timeline;
    if (el.scrollTop < ROW_HEIGHT * 3 && !tl.filter.text?.trim() && tl.before !== null) void loadHistory();
  }, []);

  useEffect(() => {
    if (!t.historyLoaded) void loadHistory(true);
  }, [t.historyLoaded]);

  const onSelect = useCallback((key: string) => void selectInvocation(key), []);
  // Keyboard: arrows move the selection (and open its detail), Escape closes the detail.
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && t.selected) return void selectInvocation(undefined);
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const at = t.selected ? visible.indexOf(t.selected) : -1;
    const next = Math.max(0, Math.min(visible.length - 1, at < 0 ? visible.length - 1 : at + (e.key === 'ArrowDown' ? 1 : -1)));
    const key = visible[next];
    if (key === undefined) return;
    if (next < visible.length - 1) setFollow(false);
    virtualizer.scrollToIndex(next, { align: 'auto' });
    void selectInvocation(key);
  };
  const selectedRow = t.selected ? (rows.get(t.selected) ?? t.rows.get(t.selected)) : undefined;

  return (
    <section className="view view-timeline" aria-labelledby="timeline-h">
      <header className="view-head">
        <h2 id="timeline-h">Timeline</h2>
        <span className="muted" aria-live="polite">
          {searching
            ? !search || (search.loading && search.order.length === 0)
              ? 'searching…'
              : `${visible.length.toLocaleString()} match${visible.length === 1 ? '' : 'es'}${search.before !== null ? ' so far' : ''}`
            : `${visible.length.toLocaleString()} ${filtering ? `of ${t.order.length.toLocaleString()} ` : ''}invocations`}
        </span>
        <span className="spacer" />
        <ExportButtons />
        {!t.follow && (
          <button type="button" className="btn btn-small" onClick={() => setFollow(true)}>
            ↓ Follow newest
          </button>
        )}
      </header>
      <Filters filter={t.filter} options={options} />
      {t.error && <ErrorBox error={t.error} onRetry={() => void loadHistory()} />}
      {search?.error && <ErrorBox error={search.error} onRetry={() => void searchTimeline(true)} />}
      <div className="tl-strip muted" aria-live="polite">
        {searching ? (
          !search || (search.loading && search.order.length === 0) ? (
            'Searching the whole audit…'
          ) : search.loading ? (
            'Loading more matches…'
          ) : search.before === null ? (
            'Searched the whole audit'
          ) : (
            <>
              More of the audit to search{' '}
              <button type="button" className="btn btn-small" onClick={() => void searchTimeline()}>
                Load more
              </button>
            </>
          )
        ) : t.loadingOlder ? (
          'Loading older history…'
        ) : t.historyLoaded && t.before === null ? (
          'Showing everything since the start of history'
        ) : (
          <>
            Scroll to the top to load older history {/* A short (or filtered) list cannot scroll: the button pages in the same way. */}
            <button type="button" className="btn btn-small" onClick={() => void loadHistory()} disabled={!t.historyLoaded}>
              Load older
            </button>
          </>
        )}
      </div>
      <div className="timeline-body">
        <div
          className="tl-scroll"
          ref={scrollRef}
          onScroll={onScroll}
          onKeyDown={onKeyDown}
          tabIndex={0}
          role="grid"
          aria-label="Invocations, oldest at the top; arrow keys select"
          aria-rowcount={visible.length}
          aria-activedescendant={t.selected ? `tl-${t.selected}` : undefined}
        >
          {searching && (!search || (search.loading && search.order.length === 0)) ? (
            <Loading what="matches" />
          ) : !searching && !t.historyLoaded && t.order.length === 0 ? (
            <Loading what="history" />
          ) : visible.length === 0 ? (
            <Empty title={filtering ? 'Nothing matches these filters' : 'No activity yet'}>
              {filtering ? 'Clear a filter to see more.' : 'Every channel op, approval and rejection shows up here as it happens.'}
            </Empty>
          ) : (
            <div className="tl-inner" style={{ height: virtualizer.getTotalSize() }}>
              {virtualizer.getVirtualItems().map((item) => {
                const row = rows.get(visible[item.index]!);
                return row ? <TimelineRow key={item.key} row={row} top={item.start} selected={row.key === t.selected} onSelect={onSelect} /> : null;
              })}
            </div>
          )}
        </div>
        {selectedRow && <InvocationDetailPane row={selectedRow} detail={t.detail} onClose={() => void selectInvocation(undefined)} />}
      </div>
    </section>
  );
}
