// @vitest-environment jsdom
/**
 * The driver debugger: a driver's process and admission as the hub reports them, its stderr
 * inert, a live trace filterable by channel and op that keeps masked args masked, trust with the
 * hash shown (and the hub's refusal shown), restart, and the pointer from the Channels view.
 */
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { DriverProcessStatus, DriverTraceEntry } from '../../../src/shared/panel-types';
import { PanelCallError } from '../../../src/shared/panel-api';
import { connectionChanged, showView } from '../../../src/renderer/actions';
import { App } from '../../../src/renderer/App';
import { traceTargets } from '../../../src/renderer/components/DriversView';
import { startFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

let fake: FakeApi;
let stop: () => void;
afterEach(() => {
  cleanup();
  stop();
});

const HASH = 'a'.repeat(64);
const NEW_HASH = 'b'.repeat(64);

const running = (extra: Partial<DriverProcessStatus> = {}): DriverProcessStatus => ({
  id: 'notes',
  command: ['/usr/bin/node', '/drivers/notes.mjs'],
  state: 'running',
  pid: 4242,
  protocol_version: '3',
  extensions: ['shutdown'],
  restarts: 2,
  last_exit: { at: Date.UTC(2026, 0, 1, 12), code: 1, signal: null, reason: 'exited with code 1' },
  admission: 'admitted',
  integrity: { file: '/drivers/notes.mjs', expected: HASH, actual: HASH },
  in_flight: 0,
  stderr: ['starting notes', 'evil \u001b[2J line'],
  ...extra,
});

const untrusted = (): DriverProcessStatus => ({
  ...running({ state: 'refused', admission: 'untrusted', restarts: 0, stderr: [], integrity: { file: '/drivers/notes.mjs', actual: HASH } }),
  pid: undefined,
  protocol_version: undefined,
  last_exit: undefined,
});

let seq = 0;
const entry = (e: Partial<DriverTraceEntry>): DriverTraceEntry => ({
  seq: ++seq,
  at: Date.UTC(2026, 0, 1, 12),
  dir: 'out',
  type: 'request',
  bytes: 40,
  summary: '{}',
  ...e,
});

function trace(): DriverTraceEntry[] {
  seq = 0;
  return [
    entry({ method: 'invoke', id: 7, summary: JSON.stringify({ addr: 'todo', op: 'write', args: { text: 'buy bread', secret: '••••' } }) }),
    entry({ dir: 'in', type: 'response', method: 'invoke', id: 7, ms: 12, summary: '{"jsonrpc":"2.0","id":7,"result":{"written":9}}' }),
    // Cut at the hub's summary limit: no longer JSON, still names its target.
    entry({ method: 'invoke', id: 8, summary: '{"addr":"ideas","op":"read","args":{},"context":{"interaction":"typed","agent":{"kind":"mcp","na' }),
    entry({ dir: 'in', type: 'error', method: 'invoke', id: 8, ms: 3, summary: '{"jsonrpc":"2.0","id":8,"error":{"code":-32000,"message":"gone"}}' }),
    entry({ method: 'channels', id: 9, summary: '{}' }),
  ];
}

function open(replies: FakeApi['replies']): void {
  ({ fake, stop } = startFakePanel({ listChannels: { channels: [], health: [{ driver: 'tmux', ok: true, lines: [] }], errors: [] }, ...replies }));
  act(() => showView('drivers'));
  connectionChanged('open');
  render(<App />);
}

const card = () => screen.getByRole('article', { name: 'driver notes' });
const rows = () => within(card()).getByRole('table', { name: 'notes protocol trace' }).querySelectorAll('tbody tr');

describe('the Drivers view', () => {
  it("shows each driver's process, admission and stderr, escaped; built-in drivers are marked in-process", async () => {
    open({ driverStatus: [running()] });
    const c = await screen.findByRole('article', { name: 'driver notes' });
    await screen.findByRole('article', { name: 'driver tmux' });
    for (const text of ['running', 'admitted', '4242', '3 (shutdown)', '/usr/bin/node /drivers/notes.mjs', `/drivers/notes.mjs sha256 ${HASH}`])
      expect(c.textContent).toContain(text);
    expect(c.textContent).toMatch(/exited with code 1 \(code 1, signal —\)/);
    expect(within(c).getByText('Restarts').nextElementSibling!.textContent).toBe('2');
    const stderr = within(c).getByLabelText('notes stderr').textContent!;
    expect(stderr).toBe('starting notes\nevil \\x1b[2J line');
    const tmux = screen.getByRole('article', { name: 'driver tmux' });
    expect(tmux.textContent).toContain('in-process');
    expect(tmux.textContent).toContain('healthy');
  });

  it('says who admitted a driver: "admitted by config" for a hand-written integrity, apart from the operator', async () => {
    open({ driverStatus: [running({ admitted_by: 'config' })] });
    const c = await screen.findByRole('article', { name: 'driver notes' });
    const badge = within(c).getByText('admitted by config');
    expect(badge.getAttribute('title')).toMatch(/written into config\.json, not trusted/);
    stop();
    cleanup();
    open({ driverStatus: [running({ admitted_by: 'operator' })] });
    const trusted = await screen.findByRole('article', { name: 'driver notes' });
    expect(within(trusted).getByText('admitted by the operator')).toBeTruthy();
    expect(within(trusted).queryByText('admitted by config')).toBeNull();
  });

  it('updates while open: status and new trace messages arrive without a click', async () => {
    const [first, ...rest] = trace();
    let status = running({ restarts: 0 });
    open({ driverStatus: () => [status], driverTrace: (p: { after?: number }) => (p.after === undefined ? [first] : rest.filter((e) => e.seq > p.after!)) });
    await waitFor(() => expect(rows()).toHaveLength(1));
    status = running({ restarts: 5 });
    // The view polls about once a second.
    await waitFor(
      () => {
        expect(rows()).toHaveLength(5);
        expect(within(card()).getByText('Restarts').nextElementSibling!.textContent).toBe('5');
      },
      { timeout: 5000 },
    );
    // Each poll asks only for what is new.
    const asked = fake.calls.filter((c) => c.method === 'driverTrace').map((c) => (c.params as { after?: number }).after);
    expect(asked.slice(0, 2)).toEqual([undefined, 1]);
  });

  it('reads each trace anew after a reconnect (a restarted hub numbers its messages from 1 again)', async () => {
    open({ driverStatus: [running()], driverTrace: trace() });
    await waitFor(() => expect(rows()).toHaveLength(5));
    fake.replies.driverTrace = (p: { after?: number }) => (p.after === undefined ? trace().slice(0, 1) : []);
    act(() => connectionChanged('reconnecting'));
    connectionChanged('open');
    await waitFor(() => expect(rows()).toHaveLength(1), { timeout: 5000 });
  });

  it('filters the trace by channel and by op; an answer follows its request', async () => {
    open({ driverStatus: [running()], driverTrace: trace() });
    await waitFor(() => expect(rows()).toHaveLength(5));
    fireEvent.change(screen.getByLabelText('notes trace channel'), { target: { value: 'notes:todo' } });
    expect([...rows()].map((r) => r.querySelectorAll('td')[4]!.textContent)).toEqual(['7', '7']);
    fireEvent.change(screen.getByLabelText('notes trace channel'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('notes trace op'), { target: { value: 'read' } });
    const shown = [...rows()];
    expect(shown.map((r) => r.querySelectorAll('td')[2]!.textContent)).toEqual(['error', 'request']);
    expect(shown[1]!.textContent).toContain('→');
    expect(shown[0]!.textContent).toContain('←');
    expect(traceTargets('notes', trace()).get(5)).toEqual({});
  });

  it('shows a masked arg masked, and never asks for more', async () => {
    open({ driverStatus: [running()], driverTrace: trace() });
    await waitFor(() => expect(rows()).toHaveLength(5));
    const write = [...rows()].find((r) => r.textContent!.includes('buy bread'))!;
    expect(write.textContent).toContain('"secret":"••••"');
    expect(fake.calls.map((c) => c.method).filter((m) => /reveal/i.test(m))).toEqual([]);
  });

  it('restarts a driver', async () => {
    open({ driverStatus: [running()], restartDriver: running({ restarts: 3 }) });
    fireEvent.click(within(await screen.findByRole('article', { name: 'driver notes' })).getByRole('button', { name: 'Restart driver' }));
    await waitFor(() => expect(fake.calls).toContainEqual({ method: 'restartDriver', params: { driver: 'notes' } }));
    const progress = within(card()).getByRole('status', { name: 'notes restart' });
    await waitFor(() => expect(progress.textContent).toBe('restarted: running, pid 4242'));
  });

  it('shows a driver not responding in words, with its last answer and since when, and its unanswered request marked in the trace', async () => {
    const since = new Date(2026, 0, 1, 12, 0, 5).getTime();
    const last = new Date(2026, 0, 1, 12, 0, 3).getTime();
    open({
      driverStatus: [
        running({
          state: 'not_responding',
          last_answer: { method: 'info', at: last },
          not_responding_since: since,
          error: 'notes is not responding: … — hint: restart it',
        }),
      ],
      driverTrace: [...trace(), entry({ dir: 'in', type: 'unanswered', method: 'invoke', id: 8, ms: 15000, bytes: 0, summary: 'no answer after 15000 ms' })],
    });
    const c = await screen.findByRole('article', { name: 'driver notes' });
    expect(within(c).getByText('not responding')).toBeTruthy();
    expect(within(c).getByText('Last answer').nextElementSibling!.textContent).toBe('info at 2026-01-01 12:00:03 · not responding since 2026-01-01 12:00:05');
    await waitFor(() => expect(rows()).toHaveLength(6));
    const mark = rows()[0]!;
    expect(mark.className).toBe('trace-unanswered');
    expect(mark.textContent).toContain('no answer after 15000 ms');
    // The mark follows its request in the filters.
    fireEvent.change(screen.getByLabelText('notes trace op'), { target: { value: 'read' } });
    expect([...rows()].map((r) => r.querySelectorAll('td')[2]!.textContent)).toEqual(['unanswered', 'error', 'request']);
  });
});

describe('trusting a driver', () => {
  it('shows the command, file and hash, and trusts with exactly the hash shown', async () => {
    open({ driverStatus: [untrusted()], trustDriver: running() });
    const prompt = await screen.findByRole('group', { name: 'Trust notes' });
    expect(prompt.textContent).toContain('/usr/bin/node /drivers/notes.mjs');
    expect(prompt.textContent).toContain('/drivers/notes.mjs');
    expect(within(prompt).getByTestId('trust-hash').textContent).toBe(HASH);
    fireEvent.click(within(prompt).getByRole('button', { name: 'Trust notes' }));
    await waitFor(() => expect(screen.queryByRole('group', { name: 'Trust notes' })).toBeNull());
    expect(fake.calls).toContainEqual({ method: 'trustDriver', params: { driver: 'notes', sha256: HASH } });
  });

  it("shows the hub's refusal when the file changed after it was shown, and then the hash it has now", async () => {
    let status = untrusted();
    const refusal = `uplink error [notes:Rejected]: /drivers/notes.mjs changed since you saw it: its sha256 is now ${NEW_HASH}, you were shown ${HASH} — hint: look at the driver again and trust the hash it has now`;
    open({
      driverStatus: () => [status],
      trustDriver: () => {
        status = { ...untrusted(), integrity: { file: '/drivers/notes.mjs', actual: NEW_HASH } };
        return new PanelCallError({ code: 'failed', message: refusal });
      },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Trust notes' }));
    await waitFor(() => {
      const prompt = screen.getByRole('group', { name: 'Trust notes' });
      expect(within(prompt).getByRole('alert').textContent).toContain('changed since you saw it');
      expect(within(prompt).getByTestId('trust-hash').textContent).toBe(NEW_HASH);
    });
  });

  it('an admitted driver not started yet is only "not started yet"; an idle one the config does not admit asks for trust', async () => {
    open({ driverStatus: [{ ...untrusted(), state: 'idle', admission: 'unchecked' }] });
    await waitFor(() => expect(card().textContent).toContain('not started yet'));
    expect(screen.queryByRole('group', { name: 'Trust notes' })).toBeNull();
  });

  it('a driver waiting for trust is asked about before anything started it', async () => {
    open({ driverStatus: [{ ...untrusted(), state: 'idle' }] });
    expect(await screen.findByRole('group', { name: 'Trust notes' })).toBeTruthy();
  });

  it('the Channels view points at a driver waiting for trust', async () => {
    open({ driverStatus: [untrusted()] });
    act(() => showView('channels'));
    const line = await screen.findByText(/notes waits for your trust/);
    fireEvent.click(within(line).getByRole('button', { name: 'Open Drivers' }));
    expect(screen.getByRole('heading', { name: 'Drivers' })).toBeTruthy();
  });
});
