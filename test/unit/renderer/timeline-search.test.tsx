// @vitest-environment jsdom
/**
 * The Timeline's afternoon: the search box asks the hub (debounced, paged, "N matches, load more"),
 * the export writes correct JSON Lines and CSV from the hub's pages, each row says what the call
 * sent, the words of a denial and a stop are the outcome's, and a tab that finds another hub
 * forgets the old one's rows and prompts before it shows the new one's.
 */
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { HubStatus, PendingApproval, TimelineEvent, TimelineSearch } from '../../../src/shared/panel-types';
import { addApproval, exportTimeline, ingestTimeline, SEARCH_DEBOUNCE_MS, searchTimeline, setTimelineFilter } from '../../../src/renderer/actions';
import { useStore } from '../../../src/renderer/store';
import { mergeEvents, summarizeArgs, SUMMARY_CHARS } from '../../../src/renderer/store/timeline-model';
import type { InvocationRow } from '../../../src/renderer/store/timeline-model';
import { csvCell, formatRecords } from '../../../src/renderer/export';
import { TimelineRow } from '../../../src/renderer/components/TimelineRow';
import { TimelineView } from '../../../src/renderer/components/TimelineView';
import { InvocationDetailPane } from '../../../src/renderer/components/InvocationDetailPane';
import type { FakeApi } from './fake-api';
import { useFakePanel } from './fake-api';

let fake: FakeApi;
useFakePanel((f) => (fake = f));

const agent = { kind: 'mcp' as const, agent_id: 'builder', name: 'claude-code' };
let cursor = 0;
const ev = (invocation_id: string, e: Partial<TimelineEvent>): TimelineEvent => ({
  id: ++cursor,
  at: 1_700_000_000_000 + cursor,
  type: 'event',
  kind: 'accepted',
  invocation_id,
  channel: 'tmux:%1',
  op: 'type',
  agent,
  ...e,
});
const call = (id: string, text: string): TimelineEvent[] => [
  ev(id, { kind: 'accepted', state: 'accepted', sequence: 1, args: { text } }),
  ev(id, { kind: 'succeeded', state: 'succeeded', sequence: 2, outcome: 'succeeded' }),
];
const searches = () => fake.calls.filter((c) => c.method === 'searchTimeline').map((c) => c.params as TimelineSearch);

function rowOf(events: TimelineEvent[]): InvocationRow {
  const rows = new Map<string, InvocationRow>();
  mergeEvents(rows, events);
  return [...rows.values()][0]!;
}

describe('the search box asks the hub', () => {
  it('debounced: one search for what was typed, its matches shown with "load more"', async () => {
    vi.useFakeTimers();
    const pages = [
      { events: call('push1', 'git push origin main'), matches: 1, next_before: 40 },
      { events: call('push0', 'git push --tags'), matches: 1, next_before: null },
    ];
    fake.replies.searchTimeline = () => pages.shift();
    useStore.setState((s) => ({ timeline: { ...s.timeline, historyLoaded: true } }));
    render(<TimelineView />);
    const box = within(screen.getByRole('search')).getByRole('searchbox');
    for (const text of ['g', 'gi', 'git', 'git push']) act(() => void fireEvent.change(box, { target: { value: text } }));
    expect(searches()).toHaveLength(0);
    await act(async () => void (await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 10)));
    expect(searches()).toEqual([{ filter: { text: 'git push' }, limit: 50 }]);
    expect(screen.getByText('1 match so far')).toBeTruthy();
    expect(useStore.getState().timeline.search?.rows.get('push1')?.summary).toBe('git push origin main');
    await act(async () => void fireEvent.click(screen.getByRole('button', { name: 'Load more' })));
    expect(searches()[1]).toEqual({ filter: { text: 'git push' }, limit: 50, before: 40 });
    expect(screen.getByText('2 matches')).toBeTruthy();
    expect(screen.getByText('Searched the whole audit')).toBeTruthy();
  });

  it('shows only what the hub found, not the rows in memory; clearing the text shows them again', async () => {
    act(() => ingestTimeline(call('other', 'ls')));
    fake.replies.searchTimeline = { events: call('old', 'git push'), matches: 1, next_before: null };
    useStore.setState((s) => ({ timeline: { ...s.timeline, historyLoaded: true, filter: { text: 'git push' } } }));
    await act(() => searchTimeline(true));
    render(<TimelineView />);
    // The search's one match, not the row in memory that does not match.
    expect(screen.getByText('1 match')).toBeTruthy();
    expect(useStore.getState().timeline.search?.order).toEqual(['old']);
    act(() => setTimelineFilter({}));
    expect(screen.getByText('1 invocations')).toBeTruthy();
    expect(useStore.getState().timeline.search).toBeUndefined();
  });

  it('a live call that matches joins the results', async () => {
    fake.replies.searchTimeline = { events: [], matches: 0, next_before: null };
    useStore.setState((s) => ({ timeline: { ...s.timeline, filter: { text: 'git push' } } }));
    await act(() => searchTimeline(true));
    act(() => ingestTimeline([...call('live', 'git push now'), ...call('nope', 'make')]));
    expect(useStore.getState().timeline.search?.order).toEqual(['live']);
  });
});

describe('export', () => {
  it('CSV cells: quoted where needed, and a formula never starts a cell', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const f of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx']) expect(csvCell(f)).toBe(`'${f}`);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell(12)).toBe('12');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell({ text: 'a' })).toBe('"{""text"":""a""}"');
  });

  it('JSON Lines: one record per line, each parsing back to the record', () => {
    const records = call('x', 'line one\nline two');
    const text = formatRecords(records, 'jsonl');
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(lines.slice(0, 2).map((l) => JSON.parse(l))).toEqual(records);
  });

  it('streams every page of the filtered view from the hub, writes each record once and says how many', async () => {
    const a = call('a', '=cmd|calc');
    const b = call('b', 'echo, "hi"');
    // A call straddling two pages comes back whole in both.
    const pages = [
      { events: [...a, ...b], matches: 2, next_before: 10 },
      { events: b, matches: 1, next_before: null },
    ];
    fake.replies.searchTimeline = () => pages.shift();
    useStore.setState((s) => ({ timeline: { ...s.timeline, filter: { op: 'type', outcome: 'succeeded' } } }));
    const files: Array<{ name: string; parts: string[] }> = [];
    const done = await exportTimeline('csv', (name, _type, parts) => files.push({ name, parts }));
    expect(done).toEqual({ records: 4, calls: 2, complete: true });
    expect(searches()).toEqual([
      { filter: { op: 'type', outcome: 'succeeded' }, limit: 200 },
      { filter: { op: 'type', outcome: 'succeeded' }, limit: 200, before: 10 },
    ]);
    expect(files).toHaveLength(1);
    expect(files[0]!.name).toMatch(/^uplink-timeline-.*\.csv$/);
    const csv = files[0]!.parts.join('');
    const lines = csv.split('\r\n');
    expect(lines[0]!.startsWith('id,at,type,kind,invocation_id')).toBe(true);
    expect(lines).toHaveLength(6);
    expect(csv).toContain(`"{""text"":""=cmd|calc""}"`);
    expect(csv).toContain(`"{""text"":""echo, \\""hi\\""""}"`);
    expect(useStore.getState().toasts.at(-1)?.text).toBe('exported 4 records of 2 calls as CSV');
  });
});

describe('each row says what the call sent', () => {
  it('from the args: the text typed, keys, a message; a click by its point', () => {
    expect(summarizeArgs({ text: 'git push origin main', enter: true })).toBe('git push origin main');
    expect(summarizeArgs({ keys: ['C-c', 'Enter'] })).toBe('C-c Enter');
    expect(summarizeArgs({ message: 'status?', timeout_ms: 2000 })).toBe('status?');
    expect(summarizeArgs({ x: 10, y: 20, button: 'left' })).toBe('at 10, 20');
    expect(summarizeArgs({ element: { role: 'button', name: 'Save' } })).toBe('Save');
    expect(summarizeArgs({ depth: 3 })).toBe('depth=3');
    expect(summarizeArgs(undefined)).toBeUndefined();
  });

  it('escaped and cut in the middle, both ends kept', () => {
    expect(summarizeArgs({ text: 'a\nb\u001b[2J' })).toBe('a\\nb\\x1b[2J');
    const long = `rm -rf ${'x'.repeat(200)} && git push --force`;
    const s = summarizeArgs({ text: long })!;
    expect([...s].length).toBeLessThanOrEqual(SUMMARY_CHARS);
    expect(s.startsWith('rm -rf')).toBe(true);
    expect(s.endsWith('push --force')).toBe(true);
    expect(s).toMatch(/chars cut/);
  });

  it('in the row, between the channel and the events', () => {
    const { container } = render(<TimelineRow row={rowOf(call('r', 'git push'))} selected={false} onSelect={() => undefined} top={0} />);
    expect(container.querySelector('.tl-summary')?.textContent).toBe('git push');
  });
});

describe('one vocabulary of outcomes in the panel', () => {
  const deniedCall = () => [
    ev('d', { kind: 'accepted', state: 'accepted', sequence: 1, args: { text: 'rm x' } }),
    ev('d', { kind: 'approval_requested', state: 'accepted', sequence: 2 }),
    ev('d', { type: 'decision', kind: 'decision', authorized: 'operator', granted: false, decision: 'deny', by: 'alice' }),
    ev('d', { kind: 'approval_denied', state: 'accepted', sequence: 3 }),
    ev('d', { kind: 'failed', state: 'failed', sequence: 4, error_code: 'policy_denied', outcome: 'denied' }),
  ];

  it('an operator denial: its chips say "not approved" then "denied", never "failed"', () => {
    const { container } = render(<TimelineRow row={rowOf(deniedCall())} selected={false} onSelect={() => undefined} top={0} />);
    const chips = [...container.querySelectorAll('.tl-events .ev i')].map((i) => i.textContent);
    expect(chips).toEqual(['accepted', 'asked', 'not approved', 'denied']);
    expect(container.querySelector('.tl-state')?.textContent).toMatch(/denied$/);
  });

  it('the detail pane reads "Outcome denied", not "State failed"', () => {
    const row = rowOf(deniedCall());
    render(<InvocationDetailPane row={row} detail={{ loading: false }} onClose={() => undefined} />);
    const pane = screen.getByLabelText('Invocation detail');
    expect(within(pane).queryByText('failed')).toBeNull();
    expect(within(pane).getByText('Outcome')).toBeTruthy();
    expect(within(pane).getByText('Outcome').nextElementSibling?.textContent).toMatch(/denied/);
  });

  it('a stop reads "cancelling" then "cancelled"; a timeout "timed out"; a lost call "lost"', () => {
    const stop = rowOf([
      ev('s', { kind: 'accepted', state: 'accepted', sequence: 1 }),
      ev('s', { kind: 'started', state: 'running', sequence: 2 }),
      ev('s', { kind: 'cancellation_requested', state: 'running', sequence: 3 }),
      ev('s', { kind: 'cancelled', state: 'cancelled', sequence: 4, outcome: 'cancelled' }),
    ]);
    const { container, unmount } = render(<TimelineRow row={stop} selected={false} onSelect={() => undefined} top={0} />);
    expect([...container.querySelectorAll('.tl-events .ev i')].map((i) => i.textContent)).toEqual(['accepted', 'started', 'cancelling', 'cancelled']);
    unmount();
    const late = rowOf([ev('t', { kind: 'failed', state: 'failed', sequence: 4, outcome: 'timed_out' })]);
    const r2 = render(<TimelineRow row={late} selected={false} onSelect={() => undefined} top={0} />);
    expect(r2.container.querySelector('.tl-events .ev i')?.textContent).toBe('timed out');
    r2.unmount();
    const lost = rowOf([ev('l', { kind: 'failed', state: 'failed', sequence: 2, outcome: 'lost' })]);
    const r3 = render(<TimelineRow row={lost} selected={false} onSelect={() => undefined} top={0} />);
    expect(r3.container.querySelector('.tl-state .outcome-lost')?.textContent).toMatch(/lost$/);
  });
});

describe('one hub per tab', () => {
  const status = (started_at: number): HubStatus => ({ started_at, pending_approvals: 0, attached_panels: 1, version: '0.1.0' });
  const prompt: PendingApproval = {
    approval_id: 'a1',
    invocation_id: 'onA',
    agent,
    channel: 'tmux:%3',
    channel_labels: [],
    op: 'send',
    capability_id: 'tmux.send',
    args: {},
    provider_id: 'uplink/tmux',
    interaction: 'typed',
    requested_at: Date.now(),
    expires_at: Date.now() + 60_000,
  };

  it("another hub's status drops the old hub's rows, prompts and channels, then reloads", async () => {
    act(() => fake.emit('hubStatus', status(1000)));
    act(() => ingestTimeline(call('onA', 'from hub A')));
    act(() => addApproval(prompt));
    expect(useStore.getState().timeline.order).toEqual(['onA']);
    const before = fake.calls.length;
    fake.replies.queryTimeline = { events: call('onB', 'from hub B'), next_before: null };
    act(() => fake.emit('hubStatus', status(2000)));
    const s = useStore.getState();
    expect(s.timeline.rows.has('onA')).toBe(false);
    expect(s.approvals.pending).toEqual([]);
    expect(s.connection.status?.started_at).toBe(2000);
    await act(async () => void (await new Promise((r) => setTimeout(r, 0))));
    expect(fake.calls.slice(before).map((c) => c.method)).toEqual(expect.arrayContaining(['listPendingApprovals', 'listChannels', 'queryTimeline']));
    expect(useStore.getState().timeline.order).toEqual(['onB']);
  });

  it('the same hub again (a status update) keeps everything', () => {
    act(() => fake.emit('hubStatus', status(1000)));
    act(() => ingestTimeline(call('onA', 'from hub A')));
    act(() => fake.emit('hubStatus', { ...status(1000), pending_approvals: 3 }));
    expect(useStore.getState().timeline.order).toEqual(['onA']);
  });
});
