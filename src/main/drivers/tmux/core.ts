/**
 * The tmux driver's shared state and building blocks: server and own-pane discovery, pane
 * resolution (`%N` or a unique `@name` label), policy decisions with the driver's memory of
 * labels, the read guard, and verified delivery of one typed line.
 */
import { DriverError, type InvokeContext, type SendReceipt } from '../contract';
import type { TmuxConfig } from './config';
import { decide, paneName, requireReadable, requireTier, type PaneDecision, type PaneMarks, type Tier } from './policy';
import {
  GATE_FORMAT,
  gateValues,
  PANE_FORMAT,
  PANE_LOOKUP_FORMAT,
  PANE_MARKS_FORMAT,
  parseMarksLine,
  parsePaneLine,
  parsePaneList,
  unreadablePanes,
  type PaneInfo,
  type ReadMarks,
} from './panes';
import { formatLiteral, quoteArg } from './control-protocol';
import { TmuxTransport } from './transport';
import { waitForToken, type PaneProbe } from './watch';
import { nearestAncestor } from './process-tree';

/** Options of `createTmuxDriver`. */
export interface TmuxDriverOptions {
  /** Socket path of the server; default: config `socket`, else `$TMUX`'s first field, else tmux's default. */
  socket?: string;
  /** Where `TMUX`/`TMUX_PANE` are looked up (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * The live `tmux` config section (a `TmuxConfig`), read on every decision so edits apply
   * without restart. Typed loosely so the hub's section getter fits; junk is read defensively.
   */
  config?: () => TmuxConfig | unknown;
  /** Clock for the read guard and timestamps (ms since the epoch). */
  now?: () => number;
  /** The tmux binary (default `tmux` on PATH). */
  tmux?: string;
  /** false: one-shot tmux commands and polling only, never control mode (default true). */
  controlMode?: boolean;
}

/**
 * A caller outside the driver's own process, as the invoke context's `caller` says: `pid` is the
 * calling process as the hub established it (absent: the hub has no evidence of where it runs).
 * What a caller's environment claims (`$TMUX_PANE`) is never read. Absent altogether: the driver
 * process's own environment decides.
 */
export interface TmuxCaller {
  pid?: number;
}

function callerOf(ctx: InvokeContext | undefined): TmuxCaller | undefined {
  const caller = (ctx as { caller?: unknown } | undefined)?.caller;
  return caller && typeof caller === 'object' && !Array.isArray(caller) ? (caller as TmuxCaller) : undefined;
}

/** Where an envelope went (`to`) and the pane it named as its sender's (`from`, when known). */
export interface SentEnvelope {
  to: string;
  from?: string;
}

/**
 * A pane passed to `deliver` as this process last looked it up, not afresh: the typing waits on
 * tmux finding its gate fields (`gate`, as `lastLookup` gave them) unchanged; if they changed,
 * the fresh lookup is gated (`what`, `needed`, the caller's `ownPane`) before anything is typed.
 */
export interface LookupToConfirm {
  gate: string;
  what: string;
  needed: Tier;
  ownPane: string | undefined;
}

/** How long a `read` keeps `type`/`keys` unlocked. */
export const READ_GUARD_MS = 60_000;
const VERIFY_TIMEOUT_MS = 5000;
const MARK_REFRESH_MS = 5000;
const MEMORY_LIMIT = 10_000;

/** The last `n` (all, if `n` is 0) of captured lines, each trimmed at the end, trailing blank lines dropped. */
function lastLinesOf(captured: readonly string[], n: number): string[] {
  let end = captured.length;
  while (end > 0 && captured[end - 1]!.trimEnd() === '') end--;
  return captured.slice(n > 0 ? Math.max(0, end - n) : 0, end).map((l) => l.trimEnd());
}

/** Adds to a Set, evicting the oldest entries beyond the limit. */
export function remember<T>(set: Set<T>, value: T): void {
  set.add(value);
  if (set.size > MEMORY_LIMIT) set.delete(set.values().next().value as T);
}

/** State and helpers shared by the driver's methods. */
export class TmuxCore {
  readonly transport: TmuxTransport;
  readonly now: () => number;
  readonly #options: TmuxDriverOptions;
  readonly #env: NodeJS.ProcessEnv;
  readonly #lastRead = new Map<string, number>();
  /** When this process last wrote each pane's `@uplink_last_read`. */
  readonly #markedAt = new Map<string, number>();
  readonly #seenLabels = new Map<string, Set<string>>();
  /** The last lookup of each pane by id, with its gate fields as tmux printed them. */
  readonly #lookups = new Map<string, { pane: PaneInfo; gate: string }>();
  readonly #locks = new Map<string, Promise<void>>();
  #serverPid: string | undefined;
  /** Ids of envelopes we sent: an echo of them in some pane is not inbound. */
  readonly sentIds = new Set<string>();
  /** Where each id we sent went, and the pane it named as ours: a reply anywhere else is not the addressee's. */
  readonly sentTo = new Map<string, SentEnvelope>();

  constructor(options: TmuxDriverOptions) {
    this.#options = options;
    this.#env = options.env ?? process.env;
    this.now = options.now ?? Date.now;
    this.transport = new TmuxTransport({ socket: () => this.socket(), env: this.#env, tmux: options.tmux, controlMode: options.controlMode });
  }

  config(): TmuxConfig {
    try {
      const section = this.#options.config?.();
      return section && typeof section === 'object' && !Array.isArray(section) ? (section as TmuxConfig) : {};
    } catch {
      return {};
    }
  }

  /** The socket path in effect (undefined: tmux's default socket). */
  socket(): string | undefined {
    const configured = this.config().socket;
    return this.#options.socket ?? (typeof configured === 'string' && configured ? configured : undefined) ?? this.#envSocket();
  }

  #envSocket(): string | undefined {
    const field = this.#env.TMUX?.split(',')[0];
    return field ? field : undefined;
  }

  /**
   * The caller's own pane: for a call from outside this process (the context has a `caller`), the
   * pane it proved it runs in; otherwise our environment's (`envPane`).
   */
  async ownPane(ctx?: InvokeContext): Promise<string | undefined> {
    const caller = callerOf(ctx);
    // A caller from elsewhere is someone else than this process: never fall back to our env.
    if (caller) return this.#callerPane(caller);
    return this.envPane();
  }

  /**
   * This process's own pane: `$TMUX_PANE`, but only when `$TMUX` (if set) names the server we talk
   * to — a pane id of another server would point at a stranger's pane.
   */
  envPane(): string | undefined {
    const pane = this.#env.TMUX_PANE;
    if (!pane || !/^%\d+$/.test(pane)) return undefined;
    const envSocket = this.#envSocket();
    if (envSocket && envSocket !== this.socket()) return undefined;
    return pane;
  }

  /**
   * The pane a caller runs in, from evidence only: on our server, the pane whose process is the
   * calling process the hub established (`pid`) or its nearest ancestor. No pid, no pane: any
   * process can put any `$TMUX_PANE` in its environment or a header, so a claim proves nothing.
   */
  async #callerPane(caller: TmuxCaller): Promise<string | undefined> {
    const pid = caller.pid;
    if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 1) return undefined;
    const panes = await this.listPanes().catch(() => [] as PaneInfo[]);
    const byPid = new Map<number, string>();
    for (const p of panes) if (p.pid !== undefined) byPid.set(p.pid, p.id);
    const holder = await nearestAncestor(pid, byPid);
    return holder === undefined ? undefined : byPid.get(holder);
  }

  run(args: readonly string[], replied?: () => void): Promise<string[]> {
    return this.transport.run(args, replied);
  }

  /** Every pane of the server, remembering the labels seen. */
  async listPanes(): Promise<PaneInfo[]> {
    const panes = parsePaneList(await this.run(['list-panes', '-a', '-F', PANE_FORMAT]));
    for (const pane of panes) this.#observe(pane);
    return panes;
  }

  /**
   * Resolves `%N` or a label to a fresh view of the pane. A pane id is looked up without what no
   * op decides on (`PANE_LOOKUP_FORMAT`: no command, pid, target or title) unless `full`.
   */
  async pane(addr: string, full = false): Promise<PaneInfo> {
    if (typeof addr !== 'string' || addr === '') throw new DriverError('Invalid', 'empty tmux address', { hint: 'address a pane as tmux:%N or tmux:<label>' });
    if (/^%\d+$/.test(addr)) {
      const lines = await this.run(['display-message', '-p', '-t', addr, full ? PANE_FORMAT : PANE_LOOKUP_FORMAT]).catch((error: unknown) => {
        throw this.#lookupFailure(error, addr);
      });
      return this.#looked(addr, lines[0] ?? '');
    }
    const matches = (await this.listPanes()).filter((p) => p.label === addr);
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0)
      throw new DriverError('NotFound', `no pane is labelled "${addr}"`, { hint: 'list channels to see panes and labels, or address the pane as tmux:%N' });
    throw new DriverError('Invalid', `label "${addr}" is ambiguous: ${matches.map((p) => `${p.id} (${p.target})`).join(', ')}`, {
      hint: `address one pane by id, e.g. tmux:${matches[0]!.id}`,
    });
  }

  /**
   * A pane id's read marks, fresh (`PANE_MARKS_FORMAT`): all a read decides on, and less work for
   * tmux than a full lookup.
   */
  async readMarks(paneId: string): Promise<ReadMarks> {
    const lines = await this.run(['display-message', '-p', '-t', paneId, PANE_MARKS_FORMAT]).catch((error: unknown) => {
      throw this.#lookupFailure(error, paneId);
    });
    return this.#marked(paneId, lines[0] ?? '');
  }

  /**
   * A pane id's read marks and its last `n` lines (as `captureId`), taken in the same instant: one
   * command sequence over control mode (one line, one reply to wait for), else one after the other.
   * Whoever reads the lines must first let the marks allow it.
   */
  async readMarksAndCapture(paneId: string, n: number): Promise<{ marks: ReadMarks; lines: string[] }> {
    let replies: string[][] | undefined;
    try {
      replies = await this.transport.runSequence([
        ['display-message', '-p', '-t', paneId, PANE_MARKS_FORMAT],
        ['capture-pane', '-p', '-J', '-t', paneId, ...(n > 0 ? ['-S', `-${n}`] : [])],
      ]);
    } catch (error) {
      throw this.#lookupFailure(error, paneId);
    }
    if (!replies) {
      const marks = await this.readMarks(paneId);
      return { marks, lines: await this.captureId(paneId, n) };
    }
    return { marks: this.#marked(paneId, replies[0]![0] ?? ''), lines: lastLinesOf(replies[1]!, n) };
  }

  #marked(paneId: string, line: string): ReadMarks {
    const marks = parseMarksLine(line);
    if (!marks && /^%\d/.test(line)) throw unreadablePanes(1);
    if (!marks || marks.id !== paneId) throw this.#noPane(paneId);
    this.#observe(marks);
    return marks;
  }

  /** A lookup line of pane `addr`, parsed, observed and remembered; the error when it is none. */
  #looked(addr: string, line: string): PaneInfo {
    const pane = parsePaneLine(line);
    // A missing pane prints the format with empty pane fields; a pane id followed by no
    // separator means the line came back rewritten.
    if (!pane && /^%\d/.test(line)) throw unreadablePanes(1);
    if (!pane || pane.id !== addr) throw this.#noPane(addr);
    this.#observe(pane);
    const gate = gateValues(line);
    if (gate !== undefined) {
      this.#lookups.delete(addr);
      this.#lookups.set(addr, { pane, gate });
      if (this.#lookups.size > MEMORY_LIMIT) this.#lookups.delete(this.#lookups.keys().next().value as string);
    }
    return pane;
  }

  #lookupFailure(error: unknown, addr: string): unknown {
    return error instanceof DriverError && error.kind === 'NotFound' ? this.#noPane(addr) : error;
  }

  /** The pane as this process last looked it up by id (`pane`), with its gate fields, if it did. */
  lastLookup(paneId: string): { pane: PaneInfo; gate: string } | undefined {
    return this.#lookups.get(paneId);
  }

  #noPane(addr: string): DriverError {
    return new DriverError('NotFound', `no pane ${addr} on the tmux server`, { hint: 'list channels to see the panes that exist' });
  }

  #observe(pane: ReadMarks): void {
    // A new server (restart, another socket) reuses pane ids: what we remember is about panes
    // that no longer exist.
    if (pane.serverPid !== this.#serverPid) {
      this.#serverPid = pane.serverPid;
      this.#seenLabels.clear();
      this.#lastRead.clear();
      this.#markedAt.clear();
      this.#lookups.clear();
      this.sentTo.clear();
    }
    let labels = this.#seenLabels.get(pane.id);
    if (!labels) this.#seenLabels.set(pane.id, (labels = new Set()));
    for (const l of [pane.label, pane.firstLabel, pane.agentLabel]) if (l) labels.add(l);
  }

  /** Records a label the driver itself just gave a pane. */
  noteLabel(paneId: string, label: string): void {
    const labels = this.#seenLabels.get(paneId) ?? new Set<string>();
    labels.add(label);
    this.#seenLabels.set(paneId, labels);
  }

  decide(pane: PaneMarks): PaneDecision {
    return decide(pane, this.config(), this.#seenLabels.get(pane.id) ?? []);
  }

  /** The common gate of a writing op: not our pane, readable, tier, usable. */
  async gate(pane: PaneInfo, what: string, needed: Tier, ctx?: InvokeContext): Promise<PaneDecision> {
    return this.gateOwn(pane, what, needed, await this.ownPane(ctx));
  }

  /** `gate` with the caller's own pane already found (`ownPane`). */
  gateOwn(pane: PaneInfo, what: string, needed: Tier, ownPane: string | undefined): PaneDecision {
    if (pane.id === ownPane) {
      throw new DriverError('Rejected', `${what} to our own pane ${pane.id} is refused (it would loop back to us)`, {
        hint: 'address another pane; list channels to see them',
      });
    }
    const decision = this.decide(pane);
    requireReadable(decision, what, pane);
    requireTier(decision, needed, what, pane);
    if (pane.dead) throw new DriverError('Unavailable', `pane ${paneName(pane)} is dead (its program exited)`, { hint: 'respawn it or address another pane' });
    if (pane.inMode) {
      throw new DriverError('Rejected', `pane ${paneName(pane)} is in copy mode, where typed keys would drive the mode instead of the program`, {
        hint: 'a human can leave copy mode (press q in the pane); then try again',
      });
    }
    return decision;
  }

  /**
   * Records a read, in memory and in the pane option `@uplink_last_read`, so the read-first
   * guard also holds across processes (each CLI command is a fresh driver). Returns the promise
   * of the option's write when one was due, else nothing to wait for.
   */
  markRead(paneId: string): Promise<void> | undefined {
    const at = this.now();
    this.#lastRead.set(paneId, at);
    // An agent polling a pane need not rewrite the option on every read: a mark up to
    // MARK_REFRESH_MS old only makes other processes' guard expire that much sooner (stricter,
    // never looser), while this process keeps the exact time in memory.
    const marked = this.#markedAt.get(paneId);
    if (marked !== undefined && at >= marked && at - marked < MARK_REFRESH_MS) return undefined;
    this.#markedAt.set(paneId, at);
    return this.run(['set-option', '-p', '-t', paneId, '@uplink_last_read', String(at)]).then(
      () => undefined,
      () => undefined,
    );
  }

  /** `Rejected` unless the pane was read within the last 60 s. */
  requireRecentRead(pane: PaneInfo, what: string): void {
    const at = Math.max(this.#lastRead.get(pane.id) ?? -Infinity, pane.lastRead ?? -Infinity);
    const age = this.now() - at;
    if (age >= 0 && age <= READ_GUARD_MS) return;
    throw new DriverError('Rejected', `${what} needs a read of ${paneName(pane)} within the last 60 s (look before you type)`, {
      hint: `read first: invoke the read op on tmux:${pane.id}, then retry`,
    });
  }

  /**
   * Runs `fn` alone for this pane: injections into one pane never interleave, so a verified
   * send cannot press Enter on a line another call is half-way through typing.
   */
  async exclusive<T>(paneId: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(paneId);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const mine = previous ? previous.then(() => held) : held;
    this.#locks.set(paneId, mine);
    if (previous) await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.#locks.get(paneId) === mine) this.#locks.delete(paneId);
    }
  }

  /** Capture, state and `%output` subscription for one pane. */
  probe(pane: PaneInfo): PaneProbe {
    return {
      capture: (lines) => this.run(['capture-pane', '-p', '-J', '-t', pane.id, ...(lines > 0 ? ['-S', `-${lines}`] : [])]),
      captureAndSubmit: (token) => this.#captureAndSubmit(pane.id, token),
      state: async () => (await this.run(['display-message', '-p', '-t', pane.id, '#{history_size}:#{cursor_x},#{cursor_y}:#{pane_in_mode}'])).join(''),
      watch: (listener) => this.transport.watch(pane.sessionId, pane.id, () => listener()),
    };
  }

  /**
   * One step of a verified send over control mode: the capture that verifies, and Enter pressed
   * by tmux itself only if the token is on a row of the visible screen (`#{C:}`: a substring of
   * one row, which the capture holds too), in one command sequence, so no output of the pane
   * comes in between. A token the capture holds but no single row does (a wrapped line, scrolled
   * into the history) is left to the caller's own Enter. The nested command of the `if-shell`
   * prints one block of its own: empty for the Enter, the marker for the else branch.
   */
  async #captureAndSubmit(paneId: string, token: string): Promise<{ lines: string[]; submitted: boolean } | undefined> {
    if (!/^id:[0-9a-f]{8}$/.test(token) || !/^%\d+$/.test(paneId)) return undefined;
    const replies = await this.transport.runSequence(
      [
        ['capture-pane', '-p', '-J', '-t', paneId, '-S', '-5'],
        ['if-shell', '-F', '-t', paneId, `#{C:${token}}`, `send-keys -t ${paneId} Enter`, 'display-message -p not-submitted'],
      ],
      3,
    );
    if (!replies) return undefined;
    return { lines: replies[0]!, submitted: replies[2]!.length === 0 };
  }

  /**
   * Types one line literally, waits until its `id:` token is on the pane's screen, and only then
   * presses Enter. No retry: on failure the text stays in the input line, and the error carries
   * what the screen showed.
   */
  deliver(pane: PaneInfo, line: string, id: string, ownPane?: string, confirm?: LookupToConfirm): Promise<SendReceipt> {
    return this.exclusive(pane.id, () => this.#deliver(pane, line, id, ownPane, confirm));
  }

  async #deliver(pane: PaneInfo, line: string, id: string, ownPane: string | undefined, confirm: LookupToConfirm | undefined): Promise<SendReceipt> {
    this.#rememberSent(id, { to: pane.id, ...(ownPane ? { from: ownPane } : {}) });
    let injectedAt = '';
    const inject = async (replied: () => void): Promise<void> => {
      if (!confirm || !(await this.#typeIfUnchanged(pane.id, line, confirm, replied))) await this.run(['send-keys', '-t', pane.id, '-l', '--', line], replied);
      injectedAt = new Date(this.now()).toISOString();
      remember(this.sentIds, id);
    };
    const result = await waitForToken(this.probe(pane), `id:${id}`, VERIFY_TIMEOUT_MS, this.transport.mode === 'control' ? 10 : 50, inject);
    if (!result.found) {
      throw new DriverError('Timeout', `could not verify delivery to ${paneName(pane)}: id:${id} never appeared on its screen, so Enter was not pressed`, {
        hint: 'the text may still sit unsubmitted in the input line — read the pane to see why (a TUI hiding input, a raw console: use type); nothing was retried',
        evidence: result.tail,
      });
    }
    if (!result.submitted) await this.run(['send-keys', '-t', pane.id, 'Enter']);
    return {
      delivered: true,
      correlation_id: id,
      verify_excerpt: result.line.length > 300 ? `${result.line.slice(0, 297)}...` : result.line,
      injected_at: injectedAt,
    };
  }

  /**
   * Types `line` only if the pane's gate fields are still what `confirm` was decided on: tmux
   * compares (`#{==:}`) the fields with the values of the earlier lookup, written in as format
   * literals, and types in the same step, so nothing about the pane can change in between. True
   * when typed. Otherwise tmux looks the pane up instead (the else branch), the fresh lookup is
   * gated, throwing its refusal, and false tells the caller to type the plain way; so does a
   * server without control mode, where nothing ran.
   */
  async #typeIfUnchanged(paneId: string, line: string, confirm: LookupToConfirm, replied: () => void): Promise<boolean> {
    const type = ['send-keys', '-t', paneId, '-l', '--', line].map(quoteArg).join(' ');
    const lookup = ['display-message', '-p', '-t', paneId, PANE_LOOKUP_FORMAT].map(quoteArg).join(' ');
    const replies = await this.transport
      .runSequence([['if-shell', '-F', '-t', paneId, `#{==:${GATE_FORMAT},${formatLiteral(confirm.gate)}}`, type, lookup]], 2, replied)
      .catch((error: unknown) => {
        throw this.#lookupFailure(error, paneId);
      });
    if (!replies) {
      this.gateOwn(await this.pane(paneId), confirm.what, confirm.needed, confirm.ownPane);
      return false;
    }
    // The typing prints nothing; the lookup, one line.
    if (replies[1]!.length === 0) return true;
    this.gateOwn(this.#looked(paneId, replies[1]![0] ?? ''), confirm.what, confirm.needed, confirm.ownPane);
    return false;
  }

  #rememberSent(id: string, sent: SentEnvelope): void {
    this.sentTo.delete(id);
    this.sentTo.set(id, sent);
    if (this.sentTo.size > MEMORY_LIMIT) this.sentTo.delete(this.sentTo.keys().next().value as string);
  }

  /** The last `n` lines of a pane (wrapped lines joined, trailing blank lines dropped). */
  async capture(pane: PaneInfo, n: number): Promise<string[]> {
    return this.captureId(pane.id, n);
  }

  /** `capture` by pane id, for a caller that has not looked the pane up yet. */
  async captureId(paneId: string, n: number): Promise<string[]> {
    return lastLinesOf(await this.run(['capture-pane', '-p', '-J', '-t', paneId, ...(n > 0 ? ['-S', `-${n}`] : [])]), n);
  }
}
