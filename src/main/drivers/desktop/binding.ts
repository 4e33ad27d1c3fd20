/**
 * The binding table: each channel is bound, at first sight, to (window id, pid, process start
 * time), and that binding never changes. Listings run implicitly (the hub resolves channels
 * before invoking), so moving an address to another process would let a blind retry land in a
 * window nobody approved.
 */
import type { BindingStore, StoredBindings } from './binding-store';
import type { HelperTarget, HelperWindow } from './protocol';
import type { ProcReader } from './proc';

/** What a channel is bound to, and how it was seen. */
export interface Binding extends HelperTarget {
  start_time: number;
  /** The process's image path, when the helper reports one (Win32). */
  image?: string;
  title: string;
  class: string[];
  bound_at: string;
}

/** A listed window with its address and binding state. */
export interface SeenWindow {
  /** The channel address: the window id, or `<id>-<n>` once the id was reused by another process. */
  addr: string;
  window: HelperWindow;
  binding?: Binding;
  /** Why the window no longer matches its binding (actions will be refused). */
  mismatch?: string;
}

const MAX_BINDINGS = 10_000;

/** The generation an address names: `0x200003` is 1, `0x200003-3` is 3. */
function generationOf(addr: string): number {
  const m = /^(?:0x[0-9a-f]+|a11y-[0-9]+-[A-Za-z0-9_]+)-([0-9]+)$/.exec(addr);
  return m ? Number(m[1]) : 1;
}

/**
 * Bindings by address. An address is never re-bound: when the X server hands a window id to a
 * new process after the bound one exited, the newcomer gets a fresh address (`0x200003-2`), so a
 * caller holding the old address can never reach the new window by retrying.
 */
export class BindingTable {
  #byAddr = new Map<string, Binding>();
  /** The newest address of each window id. */
  #current = new Map<string, string>();
  #generations = new Map<string, number>();
  #proc: ProcReader;
  #store: BindingStore | undefined;
  #dirty = false;

  /** With a store, bindings are shared with earlier and concurrent Uplink processes (see binding-store.ts). */
  constructor(proc: ProcReader, store?: BindingStore) {
    this.#proc = proc;
    this.#store = store;
  }

  /**
   * Takes in the bindings other Uplink processes made on this display-server run (`session`):
   * an address one of them handed out keeps meaning the process it was bound to. Entries this
   * process already holds win; a window id's newest generation wins.
   */
  load(session: string | null | undefined): void {
    const stored = session ? this.#store?.load(session) : undefined;
    if (!stored) return;
    for (const [addr, b] of Object.entries(stored.bindings)) if (!this.#byAddr.has(addr)) this.#byAddr.set(addr, b);
    for (const [w, n] of Object.entries(stored.generations)) if (n > (this.#generations.get(w) ?? 1)) this.#generations.set(w, n);
    for (const [w, a] of Object.entries(stored.current)) {
      const mine = this.#current.get(w);
      if (mine === undefined || generationOf(a) > generationOf(mine)) this.#current.set(w, a);
    }
  }

  /** Writes new bindings back (merged with what others wrote meanwhile). */
  save(session: string | null | undefined): void {
    if (!this.#dirty || !session || !this.#store) return;
    this.load(session);
    const data: StoredBindings = {
      bindings: Object.fromEntries(this.#byAddr),
      current: Object.fromEntries(this.#current),
      generations: Object.fromEntries(this.#generations),
    };
    this.#store.save(session, data);
    this.#dirty = false;
  }

  get(addr: string): Binding | undefined {
    return this.#byAddr.get(addr);
  }

  /** The newest address of a window id, if it was ever bound (for hints). */
  currentAddr(window: string): string | undefined {
    return this.#current.get(window);
  }

  /**
   * The address a reused window id had before its current one (bound to a process that exited),
   * so a listing can show it as stale and an action on it gets "target changed" with evidence.
   */
  previousAddr(window: string): string | undefined {
    const n = this.#generations.get(window);
    if (n === undefined) return undefined;
    const prev = n === 2 ? window : `${window}-${n - 1}`;
    return this.#byAddr.has(prev) ? prev : undefined;
  }

  /** Records one sighting from a listing and reports the window's address and binding state. */
  async sight(win: HelperWindow): Promise<SeenWindow> {
    const addr = this.#current.get(win.window) ?? win.window;
    const current = this.#byAddr.get(addr);
    if (current) {
      const mismatch = mismatchOf(current, win);
      const gone = await this.checkProcess(current);
      if (!mismatch && !gone) return { addr, window: win, binding: current };
      // A live bound process keeps its address; the window is refused until it matches again.
      if (!gone) return { addr, window: win, binding: current, mismatch };
    }
    // An id seen before whose binding is gone from the table (evicted) must not be re-bound under
    // its old address either: a caller may still hold it.
    const fresh = current || this.#current.has(win.window) ? this.#nextAddr(win.window) : addr;
    const binding = await this.#bind(win, fresh);
    return binding ? { addr: fresh, window: win, binding } : { addr: fresh, window: win, mismatch: 'the window has no local process id' };
  }

  /** Refuses (with evidence) when the bound process has exited or its pid was reused. */
  async checkProcess(binding: Binding): Promise<string | undefined> {
    const now = await this.#proc.startTime(binding.pid);
    if (now === undefined) return `process ${binding.pid} no longer exists`;
    if (now !== binding.start_time) return `process ${binding.pid} start time is ${now}, bound start time is ${binding.start_time} (pid reused)`;
    return undefined;
  }

  #nextAddr(window: string): string {
    const n = (this.#generations.get(window) ?? 1) + 1;
    this.#generations.set(window, n);
    return `${window}-${n}`;
  }

  async #bind(win: HelperWindow, addr: string): Promise<Binding | undefined> {
    if (win.pid === null) return undefined;
    const start = await this.#proc.startTime(win.pid);
    if (start === undefined) return undefined;
    const binding: Binding = { window: win.window, pid: win.pid, start_time: start, title: win.title, class: win.class, bound_at: new Date().toISOString() };
    if (typeof win.image === 'string' && win.image !== '') binding.image = win.image;
    if (this.#byAddr.size >= MAX_BINDINGS) this.#byAddr.delete(this.#byAddr.keys().next().value as string);
    this.#byAddr.set(addr, binding);
    this.#current.set(win.window, addr);
    this.#dirty = true;
    return binding;
  }
}

/** Why a listed window's pid differs from its binding (start times are checked through /proc). */
export function mismatchOf(binding: Binding, win: HelperWindow): string | undefined {
  for (const [source, pid] of [
    ['_NET_WM_PID', win.net_wm_pid],
    ['X-Resource client pid', win.xres_pid],
  ] as const) {
    if (pid !== null && pid !== binding.pid) return `window ${win.window}: ${source} is ${pid}, bound pid is ${binding.pid}`;
  }
  if (win.pid === null) return `window ${win.window} has no process id`;
  return undefined;
}
