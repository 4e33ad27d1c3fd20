import { chmodSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BindingTable, mismatchOf } from '../../../src/main/drivers/desktop/binding';
import { fileBindingStore } from '../../../src/main/drivers/desktop/binding-store';
import { linuxProc } from '../../../src/main/drivers/desktop/proc';
import type { ProcReader } from '../../../src/main/drivers/desktop/proc';
import type { HelperWindow } from '../../../src/main/drivers/desktop/protocol';

/** /proc as a map: pid → start time (a reused pid is simulated by changing the value). */
function procOf(starts: Map<number, number>): ProcReader {
  return { startTime: async (pid) => starts.get(pid), processName: async () => 'app' };
}
const win = (over: Partial<HelperWindow> = {}): HelperWindow => ({
  window: '0x200003',
  title: 'App',
  class: ['app', 'App'],
  geometry: { x: 0, y: 0, width: 10, height: 10 },
  net_wm_pid: 100,
  xres_pid: 100,
  pid: 100,
  start_time: 5000,
  process_name: 'app',
  focused: false,
  interactions: ['semantic_ui', 'visual_ui'],
  ...over,
});

describe('desktop binding table', () => {
  it('binds a window at first sight to its pid and process start time', async () => {
    const table = new BindingTable(procOf(new Map([[100, 5000]])));
    const seen = await table.sight(win());
    expect(seen.binding).toMatchObject({ window: '0x200003', pid: 100, start_time: 5000 });
    expect(seen.mismatch).toBeUndefined();
  });

  it('keeps the binding and reports a mismatch while the bound process lives and the window claims another pid', async () => {
    const table = new BindingTable(
      procOf(
        new Map([
          [100, 5000],
          [200, 7000],
        ]),
      ),
    );
    await table.sight(win());
    const seen = await table.sight(win({ net_wm_pid: 200, pid: 100 }));
    expect(seen.addr).toBe('0x200003');
    expect(seen.binding?.pid).toBe(100);
    expect(seen.mismatch).toBe('window 0x200003: _NET_WM_PID is 200, bound pid is 100');
  });

  it('gives a reused window id a fresh address once the bound process has exited; the old address never moves', async () => {
    const starts = new Map([
      [100, 5000],
      [200, 7000],
    ]);
    const table = new BindingTable(procOf(starts));
    await table.sight(win());
    starts.delete(100);
    const seen = await table.sight(win({ net_wm_pid: 200, xres_pid: 200, pid: 200 }));
    expect(seen.addr).toBe('0x200003-2');
    expect(seen.binding).toMatchObject({ window: '0x200003', pid: 200, start_time: 7000 });
    expect(table.get('0x200003')).toMatchObject({ pid: 100 });
    expect(await table.checkProcess(table.get('0x200003')!)).toBe('process 100 no longer exists');
    expect((await table.sight(win({ net_wm_pid: 200, xres_pid: 200, pid: 200 }))).addr).toBe('0x200003-2');
    expect(table.currentAddr('0x200003')).toBe('0x200003-2');
  });

  it('reports a reused pid (same pid, new start time) as a changed target', async () => {
    const starts = new Map([[100, 5000]]);
    const table = new BindingTable(procOf(starts));
    const { binding } = await table.sight(win());
    starts.set(100, 5001);
    expect(await table.checkProcess(binding!)).toBe('process 100 start time is 5001, bound start time is 5000 (pid reused)');
    starts.delete(100);
    expect(await table.checkProcess(binding!)).toBe('process 100 no longer exists');
  });

  it('does not bind a window without a local process', async () => {
    const table = new BindingTable(procOf(new Map()));
    const seen = await table.sight(win({ pid: null, net_wm_pid: null, xres_pid: null }));
    expect(seen.binding).toBeUndefined();
    expect(table.get('0x200003')).toBeUndefined();
  });

  it('compares both pid sources against the binding', () => {
    const binding = { window: '0x1', pid: 100, start_time: 1, title: 'a', class: [], bound_at: '' };
    expect(mismatchOf(binding, win({ xres_pid: 300 }))).toBe('window 0x200003: X-Resource client pid is 300, bound pid is 100');
    expect(mismatchOf(binding, win({ xres_pid: null }))).toBeUndefined();
  });

  it('a binding made by one Uplink process holds in the next: the reused id gets a fresh address there too', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'uplink-bind-')), 'state');
    const starts = new Map([
      [100, 5000],
      [200, 7000],
    ]);
    const first = new BindingTable(procOf(starts), fileBindingStore(dir));
    first.load('run-a');
    await first.sight(win());
    first.save('run-a');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    // The bound process exits and another gets the same window id; a later `uplink` process looks.
    starts.delete(100);
    const next = new BindingTable(procOf(starts), fileBindingStore(dir));
    next.load('run-a');
    const seen = await next.sight(win({ net_wm_pid: 200, xres_pid: 200, pid: 200 }));
    expect(seen.addr).toBe('0x200003-2');
    expect(next.get('0x200003')).toMatchObject({ pid: 100, start_time: 5000 });
    expect(await next.checkProcess(next.get('0x200003')!)).toBe('process 100 no longer exists');
    next.save('run-a');
    // Another display-server run is another namespace: its ids start plain.
    const other = new BindingTable(procOf(starts), fileBindingStore(dir));
    other.load('run-b');
    expect((await other.sight(win({ net_wm_pid: 200, xres_pid: 200, pid: 200 }))).addr).toBe('0x200003');
    // A third process sees both generations.
    const third = new BindingTable(procOf(starts), fileBindingStore(dir));
    third.load('run-a');
    expect(third.currentAddr('0x200003')).toBe('0x200003-2');
    expect(third.previousAddr('0x200003')).toBe('0x200003');
  });

  it('ignores a torn or foreign binding file instead of failing the listing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-bind-'));
    writeFileSync(join(dir, 'desktop-bindings-s1.json'), '{"bindings": {"0x200003": {"window": 5}}, "current": {}, "generations": {}}');
    writeFileSync(join(dir, 'desktop-bindings-s2.json'), '{not json');
    for (const session of ['s1', 's2']) {
      const table = new BindingTable(procOf(new Map([[100, 5000]])), fileBindingStore(dir));
      table.load(session);
      expect((await table.sight(win())).addr).toBe('0x200003');
      table.save(session);
    }
    expect(readdirSync(dir).sort()).toEqual(['desktop-bindings-s1.json', 'desktop-bindings-s2.json']);
  });

  it('refuses a state directory others can read (a pre-created shared dir): bindings stay in-process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-bind-'));
    chmodSync(dir, 0o755);
    const table = new BindingTable(procOf(new Map([[100, 5000]])), fileBindingStore(dir));
    table.load('s1');
    await table.sight(win());
    table.save('s1');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('drops the tables of X server runs that have ended, keeping the live one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-bind-'));
    const live = (await linuxProc.startTime(process.pid))!;
    const table = '{"bindings": {}, "current": {}, "generations": {}}';
    writeFileSync(join(dir, `desktop-bindings-x11-${process.pid}-${live}.json`), table);
    writeFileSync(join(dir, `desktop-bindings-x11-${process.pid}-${live + 1}.json`), table);
    fileBindingStore(dir).load('anything');
    expect(readdirSync(dir)).toEqual([`desktop-bindings-x11-${process.pid}-${live}.json`]);
  });

  it('an address whose binding was evicted from a full table is never re-bound to another process', async () => {
    const starts = new Map([
      [100, 5000],
      [200, 7000],
    ]);
    const table = new BindingTable(procOf(starts));
    await table.sight(win());
    for (let i = 1; i <= 10_000; i++) await table.sight(win({ window: `0x${(0x300000 + i).toString(16)}` }));
    expect(table.get('0x200003')).toBeUndefined();
    starts.delete(100);
    const seen = await table.sight(win({ net_wm_pid: 200, xres_pid: 200, pid: 200 }));
    expect(seen.addr).toBe('0x200003-2');
  });
});
