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
 * wraps), masked whole; and a secret's beginning or end at least half its length, wherever it
 * stands — so a secret broken once by anything else (a TUI's border drawn at each line's end) shows
 * at most its shorter piece, and one cut off by a read's own limit at most a short tail. What is
 * not: a secret the hub never saw in clear (a named agent's token created by another process and
 * never used here — only its hash is stored), pieces under half a secret's length and middle pieces
 * (a secret cut twice or more, in a pane narrower than half of it), a secret encoded (base64,
 * escaped, its letters spaced out) or only in pixels. Encoded images (a base64 PNG, JPEG, GIF or
 * WebP under an image-like key, as an op's result declares it) are not scanned: their letters are
 * no text.
 *
 * Cheap when nothing matches: strings shorter than half the shortest secret are skipped by length;
 * when every secret is base64url (all the hub issues are), short strings with no run of that many
 * base64url characters by one native RegExp test; the rest are searched for each secret's halves
 * (an intact secret holds both, one broken once at least one) with the engine's native substring
 * search. An unchanged value is returned as is, without a copy; small values are walked without
 * allocating. Only a hit pays for finding positions (one RegExp of the escaped secrets and halves)
 * and building the masked copy.
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

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/**
 * Longest string the base64url-run test is tried on first: it rules out a short string for less
 * than the substring searches cost, but on a long text the engine re-scans each run from every
 * start, many times slower than searching for the halves.
 */
const RUN_TEST_MAX = 512;
/** Nesting walked by recursion before the walk takes a stack. */
const SHALLOW = 32;
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
  shortestHalf: number;
  /**
   * When every secret is base64url (all the hub issues are): a run of that many such characters,
   * without which no half can be in a text — one native test rules out most strings at once.
   */
  run: RegExp | undefined;
  at: RegExp;
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

  /** Registers a secret; too short ones and ones holding whitespace are ignored. */
  add(secret: string | undefined): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || /\s/.test(secret) || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    this.#dirty = true;
  }

  /** Drops a secret that is no longer live (a used or expired code, an ended session). */
  delete(secret: string | undefined): void {
    if (secret !== undefined && this.#secrets.delete(secret)) this.#dirty = true;
  }

  /** How many secrets are registered. */
  get size(): number {
    return this.#secrets.size;
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
      const shortestHalf = Math.min(...halves.map((h) => h.length));
      // Longest first: at one position the alternation takes the longest pattern that starts there
      // (a whole secret before its halves).
      const patterns = [...new Set([...this.#secrets, ...halves])].sort((a, b) => b.length - a.length);
      this.#compiled = patterns.length
        ? {
            halves,
            shortestHalf,
            run: [...this.#secrets].every((s) => BASE64URL.test(s)) ? new RegExp(`[A-Za-z0-9_-]{${shortestHalf}}`) : undefined,
            at: new RegExp(`(?=(${patterns.map(escapeRegExp).join('|')}))`, 'g'),
            halfOf,
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
  #hit(c: Compiled, text: string, key: string | undefined): boolean {
    if (text.length < c.shortestHalf || (c.run && text.length <= RUN_TEST_MAX && !c.run.test(text)) || isEncodedImage(key, text)) return false;
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
   * the value itself when none occurs, else a masked copy. Walks with a stack, not recursion.
   */
  mask<T>(value: T): T {
    const c = this.#current();
    return c ? this.#mask(c, value) : value;
  }

  #mask<T>(c: Compiled, value: T): T {
    if (typeof value === 'string') return this.#maskText(c, value) as T;
    if (value === null || typeof value !== 'object') return value;
    return this.#occursIn(c, value, undefined) ? this.#maskedCopy(c, value) : value;
  }

  /** A record with each field's value masked (a copy only when one changed); fields in `skip` are left as they are. */
  maskFields<T extends object>(record: T, skip?: ReadonlySet<string>): T {
    const c = this.#current();
    if (!c) return record;
    let out = record;
    for (const key of Object.keys(record)) {
      if (skip?.has(key)) continue;
      const value = (record as Record<string, unknown>)[key];
      const masked = typeof value === 'string' ? this.#maskText(c, value, key) : this.#mask(c, value);
      if (masked === value) continue;
      if (out === record) out = { ...record };
      (out as Record<string, unknown>)[key] = masked;
    }
    return out;
  }

  /**
   * Whether any string (or key) in `v` may hold a secret; an array's items count under its key.
   * Recursive while shallow (no allocation for the usual small value), with a stack below that.
   */
  #occursIn(c: Compiled, v: unknown, key: string | undefined, depth = 0): boolean {
    if (typeof v === 'string') return this.#hit(c, v, key);
    if (v === null || typeof v !== 'object') return false;
    if (depth >= SHALLOW) return this.#occursInDeep(c, v, key);
    if (Array.isArray(v)) {
      for (const item of v) if (this.#occursIn(c, item, key, depth + 1)) return true;
      return false;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (this.#hit(c, k, undefined) || this.#occursIn(c, (v as Record<string, unknown>)[k], k, depth + 1)) return true;
    }
    return false;
  }

  #occursInDeep(c: Compiled, root: object, rootKey: string | undefined): boolean {
    const values: unknown[] = [root];
    const keys: Array<string | undefined> = [rootKey];
    while (values.length) {
      const v = values.pop();
      const key = keys.pop();
      if (typeof v === 'string') {
        if (this.#hit(c, v, key)) return true;
      } else if (Array.isArray(v)) {
        for (const item of v) {
          values.push(item);
          keys.push(key);
        }
      } else if (v !== null && typeof v === 'object') {
        for (const k of Object.keys(v)) {
          if (this.#hit(c, k, undefined)) return true;
          values.push((v as Record<string, unknown>)[k]);
          keys.push(k);
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
    const evidence = err.evidence === undefined ? undefined : this.#mask(c, err.evidence);
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
