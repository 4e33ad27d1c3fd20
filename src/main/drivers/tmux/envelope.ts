/**
 * The one-line envelopes agents exchange through panes (cc-uplink's format, byte for byte):
 * outbound `[uplink from:<from> pane:<own pane> id:<8 hex>] <message>` plus a reply hint, and
 * inbound `[reply id:<id>] <answer>` / `[uplink from:<x> … id:<id>] <message>` lines.
 */
import { randomUUID } from 'node:crypto';
import type { ReplyHint } from '../contract';

/** What the envelope says when the sender's own pane is unknown (not running inside tmux). */
export const UNKNOWN_PANE = 'none';

/**
 * A fresh correlation id: 8 lowercase hex digits, the first 32 random bits of a version 4 UUID.
 * `randomUUID` draws on random data Node fetches in batches; a `randomBytes` call of its own took
 * 30–50 µs of a send whenever the process had started a child since (2–5 µs otherwise).
 */
export function newCorrelationId(): string {
  return randomUUID().slice(0, 8);
}

/** An envelope `from:` token: one word (no spaces or brackets), at most 40 chars, default `uplink`. */
export function senderName(agent: string | undefined): string {
  const cleaned = (agent ?? '')
    .trim()
    // eslint-disable-next-line no-control-regex
    .replace(/[\s[\]\u0000-\u001f\u007f]+/g, '-')
    .slice(0, 40);
  return cleaned === '' ? 'uplink' : cleaned;
}

/**
 * The line `send` types. `full` gives a copy-paste recipe that types the reply into our pane;
 * `short` names our pane and the id; `none` adds nothing (what `ask` uses). When our own pane is
 * unknown there is nowhere a recipe could point, so `full` degrades to the `short` form.
 */
export function formatEnvelope(from: string, ownPane: string | undefined, id: string, message: string, hint: ReplyHint): string {
  const pane = ownPane ?? UNKNOWN_PANE;
  const head = `[uplink from:${from} pane:${pane} id:${id}] ${message}`;
  switch (hint) {
    case 'none':
      return head;
    case 'short':
      return `${head} (reply-to:${pane} id:${id})`;
    case 'full':
      if (!ownPane) return `${head} (reply-to:${pane} id:${id})`;
      return `${head} (reply: run \`tmux send-keys -t ${pane} '[reply id:${id}] <answer>' Enter\`)`;
    default: {
      const never: never = hint;
      throw new Error(`unknown reply hint ${String(never)}`);
    }
  }
}

/** An inbound envelope found in pane output. */
export interface Inbound {
  kind: 'reply' | 'uplink';
  id?: string;
  from?: string;
  body: string;
}

/** Leading prompt/TUI decoration a pane may draw before an echoed envelope. */
const DECORATION = new Set([' ', '\t', '\u00a0', '❯', '›', '>', '$', '#', '%', '|', '│', '┃', '▌', '▎', '⏺', '⎿', '●', '•', '*']);

/** Strips a LEADING run of decoration only, so the envelope match stays anchored. */
export function stripDecoration(line: string): string {
  let i = 0;
  const chars = [...line];
  while (i < chars.length && DECORATION.has(chars[i]!)) i++;
  return chars.slice(i).join('');
}

/** Placeholder bodies from our own reply recipe: an echo of the instruction is not a reply. */
const PLACEHOLDERS = ['<answer>', '<your answer>'];

/**
 * Parses one pane line. Anchored: after the decoration the line must START with the envelope, so
 * an echo of our own `tmux send-keys … '[reply id:…] <answer>'` recipe is never read as a reply.
 */
export function parseInbound(line: string): Inbound | undefined {
  const text = stripDecoration(line.trimEnd());
  if (text.startsWith('[reply id:')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const id = text.slice('[reply id:'.length, close).trim();
    const body = text.slice(close + 1).trim();
    if (!/^[0-9a-f]{8}$/i.test(id)) return undefined;
    if (PLACEHOLDERS.some((p) => body.startsWith(p))) return undefined;
    return { kind: 'reply', id: id.toLowerCase(), body };
  }
  if (text.startsWith('[uplink ')) {
    const close = text.indexOf(']');
    if (close < 0) return undefined;
    const inbound: Inbound = { kind: 'uplink', body: text.slice(close + 1).trim() };
    for (const token of text.slice('[uplink '.length, close).split(/\s+/)) {
      if (token.startsWith('from:')) inbound.from = token.slice(5);
      else if (token.startsWith('id:')) inbound.id = token.slice(3).toLowerCase();
    }
    if (!inbound.id || !/^[0-9a-f]{8}$/.test(inbound.id)) return undefined;
    return inbound;
  }
  return undefined;
}
