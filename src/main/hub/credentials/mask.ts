/**
 * Masking, as CI systems mask registered secrets in logs: the hub's live secrets (the MCP token,
 * named agents' tokens it has seen in clear, the operator key, one-time sign-in codes, panel session
 * ids and keys) are registered here as they are issued and dropped as they die, and every text a
 * driver hands back is scanned for them before an agent, the audit or the panel sees it; each
 * occurrence becomes `SECRET_MARKER`.
 *
 * What is caught: every occurrence of a registered secret in any string of a JSON value (object keys
 * too), overlapping ones merged into one marker; one broken across lines with only whitespace and
 * the line break between its pieces (a hard wrap; tmux's `capture-pane -J` already joins soft
 * wraps), masked whole; and any piece of a secret at least half its length, wherever it stands — so
 * a secret broken once by anything else (a TUI's border drawn at each line's end) shows at most
 * the shorter piece. What is not: a secret the hub never saw in clear (a named agent's token created
 * by another process and never used here — only its hash is stored), pieces shorter than half a
 * secret (a secret cut into three or more, in a pane narrower than half of it; the tail cut off by
 * a read's own limit shows only if it is shorter than half), a secret encoded (base64, escaped,
 * letters spaced out) or only in pixels. Encoded images (a base64 PNG, JPEG, GIF or WebP under an
 * image-like key, as an op's result declares it) are not scanned: their letters are no text.
 *
 * Cheap when nothing matches: strings shorter than half the shortest secret are skipped by length,
 * the rest searched for each secret's halves (an intact secret holds both, one broken once at least
 * one) with the engine's native substring search, and an unchanged value is returned as is, without
 * a copy. Only a hit pays for finding positions (one RegExp of the escaped secrets and halves) and
 * building the masked copy.
 */
import { resolve } from 'node:path';
import { HubError } from '../errors';

/** What replaces each secret. */
export const SECRET_MARKER = '•••• (uplink secret)';
/**
 * Shorter strings are never registered: masking must not hide ordinary words (nor a half of a
 * secret, 12 characters or more, be one). Every secret the hub issues is 32+ random base64url characters.
 */
export const MIN_SECRET_LENGTH = 24;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** Fields whose name says they may hold an encoded image (as the MCP edge lifts them). */
const IMAGE_KEY = /base64|png|jpe?g|gif|webp|image|screenshot/i;
/** How PNG, JPEG, GIF and WebP files begin, base64-encoded. */
const IMAGE_STARTS = ['iVBORw0KGgo', '/9j/', 'R0lGOD', 'UklGR'];
const isEncodedImage = (key: string | undefined, s: string): boolean =>
  key !== undefined && s.length >= 64 && IMAGE_KEY.test(key) && IMAGE_STARTS.some((p) => s.startsWith(p));

/** The registered secrets compiled: each one's halves for the quick search, one RegExp that finds each start. */
interface Compiled {
  halves: string[];
  at: RegExp;
  shortestHalf: number;
  /** For each half: its secret and where in it the half begins. */
  halfOf: Map<string, { secret: string; offset: number }>;
}

/** Kept pieces of a text broken into lines: where each sits in the original and in the joined text. */
interface Piece {
  from: number;
  to: number;
  joinedAt: number;
}

/** The text with each line break and the whitespace around it taken out, and where its pieces came from. */
function joinLines(text: string): { joined: string; pieces: Piece[] } {
  const pieces: Piece[] = [];
  let joined = '';
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    let from = start;
    let to = end;
    if (start > 0) while (from < to && (text[from] === ' ' || text[from] === '\t')) from++;
    if (nl >= 0) while (to > from && (text[to - 1] === ' ' || text[to - 1] === '\t' || text[to - 1] === '\r')) to--;
    if (to > from) {
      pieces.push({ from, to, joinedAt: joined.length });
      joined += text.slice(from, to);
    }
    if (nl < 0) return { joined, pieces };
    start = nl + 1;
  }
}

/** A position of the joined text in the original. */
function original(pieces: Piece[], at: number): number {
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pieces[mid]!.joinedAt <= at) lo = mid;
    else hi = mid - 1;
  }
  const p = pieces[lo]!;
  return p.from + (at - p.joinedAt);
}

/** The live secrets of one hub and the masking of what its drivers return. */
export class SecretMask {
  #secrets = new Set<string>();
  #compiled: Compiled | undefined;
  #dirty = false;
  /** Bumped on every change: a cached result is good for one generation. */
  #generation = 0;
  /** What `maskResult` made of each value (a call's output is masked for the audit, then for the agent). */
  #cache = new WeakMap<object, { generation: number; value: unknown }>();

  /** Registers a secret; too short ones and ones holding whitespace are ignored. */
  add(secret: string | undefined): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || /\s/.test(secret) || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    this.#changed();
  }

  /** Drops a secret that is no longer live (a used or expired code, an ended session). */
  delete(secret: string | undefined): void {
    if (secret !== undefined && this.#secrets.delete(secret)) this.#changed();
  }

  /** How many secrets are registered. */
  get size(): number {
    return this.#secrets.size;
  }

  #changed(): void {
    this.#dirty = true;
    this.#generation++;
  }

  #current(): Compiled | undefined {
    if (this.#dirty) {
      this.#dirty = false;
      const halfOf = new Map<string, { secret: string; offset: number }>();
      for (const secret of this.#secrets) {
        const mid = secret.length >> 1;
        halfOf.set(secret.slice(0, mid), { secret, offset: 0 });
        halfOf.set(secret.slice(mid), { secret, offset: mid });
      }
      const halves = [...halfOf.keys()];
      // Longest first: at one position the alternation takes the longest pattern that starts there
      // (a whole secret before its halves).
      const patterns = [...new Set([...this.#secrets, ...halves])].sort((a, b) => b.length - a.length);
      this.#compiled = patterns.length
        ? {
            halves,
            halfOf,
            at: new RegExp(`(?=(${patterns.map(escapeRegExp).join('|')}))`, 'g'),
            shortestHalf: Math.min(...halves.map((h) => h.length)),
          }
        : undefined;
    }
    return this.#compiled;
  }

  /** `text` with every registered secret replaced by the marker (the same string when none occurs). */
  maskText(text: string): string {
    const c = this.#current();
    return c ? this.#maskText(c, text) : text;
  }

  /** Whether a secret, or a piece of one at least half its length, may be in `text`. */
  #hit(c: Compiled, text: string, key?: string): boolean {
    if (text.length < c.shortestHalf || isEncodedImage(key, text)) return false;
    for (const half of c.halves) if (text.includes(half)) return true;
    return false;
  }

  #maskText(c: Compiled, text: string, key?: string): string {
    if (!this.#hit(c, text, key)) return text;
    const lines = text.includes('\n') ? joinLines(text) : undefined;
    const scanned = lines ? lines.joined : text;
    const spans: Array<[number, number]> = [];
    c.at.lastIndex = 0;
    for (let m = c.at.exec(scanned); m; m = c.at.exec(scanned)) {
      let start = m.index;
      let end = start + m[1]!.length;
      // A half stands for the whole piece of its secret around it: the beginning it starts, or the end it ends.
      const half = this.#secrets.has(m[1]!) ? undefined : c.halfOf.get(m[1]!);
      if (half?.offset === 0) while (end < scanned.length && end - start < half.secret.length && scanned[end] === half.secret[end - start]) end++;
      else if (half) while (start > 0 && end - start < half.secret.length && scanned[start - 1] === half.secret[half.offset - (m.index - start) - 1]) start--;
      const last = spans[spans.length - 1];
      if (last && start < last[1]) last[1] = Math.max(last[1], end);
      else spans.push([start, end]);
      c.at.lastIndex = m.index + 1;
    }
    let out = '';
    let at = 0;
    for (const [start, end] of spans) {
      const from = lines ? original(lines.pieces, start) : start;
      const to = lines ? original(lines.pieces, end - 1) + 1 : end;
      out += text.slice(at, from) + SECRET_MARKER;
      at = to;
    }
    return out + text.slice(at);
  }

  /**
   * `value` with every registered secret in its strings (and object keys) replaced by the marker:
   * the value itself when none occurs, else a masked copy. Walks with a stack, not recursion. A
   * value `maskResult` masked before (and the secrets unchanged since) is not scanned again.
   */
  mask<T>(value: T): T {
    return this.#mask(value, false);
  }

  /**
   * `mask` for a value nobody changes afterwards — a call's output, the kernel's own copy — and
   * remembered: masked for the audit, it is not scanned again for the agent.
   */
  maskResult<T>(value: T): T {
    return this.#mask(value, true);
  }

  #mask<T>(value: T, remember: boolean): T {
    const c = this.#current();
    if (!c || value === null || value === undefined) return value;
    if (typeof value === 'string') return this.#maskText(c, value) as T;
    if (typeof value !== 'object') return value;
    const cached = this.#cache.get(value);
    if (cached && cached.generation === this.#generation) return cached.value as T;
    const masked = this.#occursIn(c, value) ? this.#maskedCopy(c, value) : value;
    if (remember) {
      const entry = { generation: this.#generation, value: masked };
      this.#cache.set(value, entry);
      if (masked !== value) this.#cache.set(masked, entry);
    }
    return masked;
  }

  /**
   * A record with each field's value masked (a copy only when one changed). Each field is a value of
   * its own: one `maskResult` masked before — a call's output — is not scanned again.
   */
  maskFields<T extends object>(record: T): T {
    if (!this.#current()) return record;
    let out = record;
    for (const key of Object.keys(record)) {
      const value = (record as Record<string, unknown>)[key];
      const masked = this.mask(value);
      if (masked === value) continue;
      if (out === record) out = { ...record };
      (out as Record<string, unknown>)[key] = masked;
    }
    return out;
  }

  /** Whether any string (or key) in `root` may hold a secret; an array's items count under its key. */
  #occursIn(c: Compiled, root: object): boolean {
    const stack: Array<[unknown, string | undefined]> = [[root, undefined]];
    while (stack.length) {
      const [v, key] = stack.pop()!;
      if (typeof v === 'string') {
        if (this.#hit(c, v, key)) return true;
      } else if (Array.isArray(v)) {
        for (const item of v) stack.push([item, key]);
      } else if (v !== null && typeof v === 'object') {
        for (const k of Object.keys(v)) {
          if (this.#hit(c, k)) return true;
          stack.push([(v as Record<string, unknown>)[k], k]);
        }
      }
    }
    return false;
  }

  /** A copy of `root` (JSON data) with every string masked, built with a stack, not recursion. */
  #maskedCopy<T extends object>(c: Compiled, root: T): T {
    const container = (v: object): object => (Array.isArray(v) ? [] : {});
    const copy = container(root);
    const stack: Array<[object, Record<string, unknown> | unknown[], string | undefined]> = [[root, copy as Record<string, unknown>, undefined]];
    const copied = (item: unknown, key: string | undefined): unknown => {
      if (typeof item === 'string') return this.#maskText(c, item, key);
      if (item === null || typeof item !== 'object') return item;
      const child = container(item);
      stack.push([item, child as Record<string, unknown>, key]);
      return child;
    };
    while (stack.length) {
      const [source, target, parentKey] = stack.pop()!;
      if (Array.isArray(source)) {
        source.forEach((item: unknown, i) => ((target as unknown[])[i] = copied(item, parentKey)));
        continue;
      }
      for (const key of Object.keys(source))
        (target as Record<string, unknown>)[this.#maskText(c, key)] = copied((source as Record<string, unknown>)[key], key);
    }
    return copy as T;
  }

  /** A HubError with its message, hint and evidence masked (the same error when none holds a secret). */
  maskError(err: HubError): HubError {
    const c = this.#current();
    if (!c) return err;
    const message = this.#maskText(c, err.message);
    const hint = err.hint === undefined ? undefined : this.#maskText(c, err.hint);
    const evidence = err.evidence === undefined ? undefined : this.#maskText(c, err.evidence);
    if (message === err.message && hint === err.hint && evidence === err.evidence) return err;
    return new HubError(err.driver, err.kind, message, {
      ...(hint !== undefined ? { hint } : {}),
      ...(evidence !== undefined ? { evidence } : {}),
      ...(err.code !== undefined ? { code: err.code } : {}),
      ...(err.outcome !== undefined ? { outcome: err.outcome } : {}),
    });
  }
}

/** One mask per data directory in this process: its hub, its HTTP server and its CLI route share it. */
const masks = new Map<string, SecretMask>();

/** The live secrets of the hub of `dataDir` in this process. */
export function liveSecrets(dataDir: string): SecretMask {
  const key = resolve(dataDir);
  let mask = masks.get(key);
  if (!mask) masks.set(key, (mask = new SecretMask()));
  return mask;
}
