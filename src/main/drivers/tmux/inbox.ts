/**
 * `recv` for tmux: finds inbound envelopes (`[reply id:…]`, `[uplink from:… id:…]`) in pane
 * output and hands each out once, with per-driver cursors. It scans our own pane when we know it
 * (where peers type replies); otherwise every readable pane, skipping the envelopes we sent.
 * Read-blocked panes are never scanned.
 */
import type { RecvBatch, RecvItem } from '../contract';
import { remember, type TmuxCore } from './core';
import { parseInbound } from './envelope';
import type { PaneInfo } from './panes';

const OWN_PANE_HISTORY = 2000;
const OTHER_PANE_HISTORY = 200;
const INBOX_LIMIT = 1000;

/** Collected inbound items and the cursor counter. */
export class Inbox {
  #core: TmuxCore;
  #items: RecvItem[] = [];
  #next = 0;
  #seen = new Set<string>();

  constructor(core: TmuxCore) {
    this.#core = core;
  }

  /** Items with `cursor >= cursor` (all retained items when omitted); `next_cursor` continues. */
  async recv(cursor?: number): Promise<RecvBatch> {
    await this.#scan();
    const from = typeof cursor === 'number' && Number.isFinite(cursor) ? Math.max(0, Math.floor(cursor)) : 0;
    const items = this.#items.filter((i) => i.cursor >= from);
    const last = items[items.length - 1];
    return { items, next_cursor: last ? last.cursor + 1 : Math.min(from, this.#next) };
  }

  async #scan(): Promise<void> {
    const own = this.#core.envPane();
    let panes: PaneInfo[];
    if (own) {
      const pane = await this.#core.pane(own).catch(() => undefined);
      panes = pane ? [pane] : [];
    } else panes = await this.#core.listPanes();
    for (const pane of panes) {
      if (this.#core.decide(pane).readBlock) continue;
      const lines = await this.#core
        .probe(pane)
        .capture(own ? OWN_PANE_HISTORY : OTHER_PANE_HISTORY)
        .catch(() => [] as string[]);
      for (const line of lines) this.#consider(pane, line);
    }
  }

  #consider(pane: PaneInfo, line: string): void {
    const inbound = parseInbound(line);
    if (!inbound) return;
    if (inbound.kind === 'uplink' && inbound.id && this.#core.sentIds.has(inbound.id)) return;
    const raw = line.trim();
    const key = `${pane.id}\u0000${raw}`;
    if (this.#seen.has(key)) return;
    remember(this.#seen, key);
    const item: RecvItem = { cursor: this.#next++, at: new Date(this.#core.now()).toISOString(), raw, channel: `tmux:${pane.id}` };
    if (inbound.from) item.from = inbound.from;
    const sent = inbound.kind === 'reply' && inbound.id ? this.#core.sentTo.get(inbound.id) : undefined;
    if (sent) {
      item.sent_to = `tmux:${sent.to}`;
      // A genuine answer shows where the question went (the peer printed it) or in the pane the
      // question named as ours (the peer typed it there, as the recipe says). Anywhere else a third
      // party wrote it: it is kept, marked, without the id a reader would match it by.
      if (pane.id !== sent.to && pane.id !== sent.from) item.not_from_addressee = true;
      else item.id = inbound.id!;
    } else if (inbound.id) item.id = inbound.id;
    this.#items.push(item);
    if (this.#items.length > INBOX_LIMIT) this.#items.shift();
  }
}
