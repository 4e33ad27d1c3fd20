/**
 * Operator authority for the browser panel, kept apart from the agents' MCP token: nothing an
 * agent is handed opens the panel. `uplink serve` prints a URL with a one-time code; the page
 * trades it (`POST /panel/session`) for a session — an HttpOnly, SameSite=Strict cookie scoped to
 * `/panel` plus a key the page keeps in its origin's storage and proves in its first WebSocket
 * frame. Cookies are shared by every port of a host, so a cookie alone could leak to another local
 * server the operator's browser visits; the key cannot. `uplink panel-url` mints new codes with
 * `<data dir>/operator.key` (rotated at every start, mode 0600), which is neither the token nor in
 * the token file.
 *
 * Sessions survive a restart of the hub: `<data dir>/panel-sessions.json` (0600) keeps, per
 * session, the SHA-256 of its id and of its key (never either secret), its label and its times,
 * so a restarted hub accepts a browser that signed in before. A session ends when idle for
 * SESSION_IDLE_MS, SESSION_TTL_MS after sign-in whatever its use, when the panel signs out, and
 * for every session at once with `uplink panel-url --revoke-all` (which rotates the operator key
 * too, so a copy of the old one mints no link). The code, the session's id and
 * its key are registered with the hub's secret mask while the hub knows them (a restarted hub
 * learns them again when the browser presents them), so none reaches an agent through what a
 * driver reads.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readSmallFile, writeFileAtomic } from '../files';
import { secretEquals } from './secret';
import { liveSecrets } from './mask';

/** A one-time code is good for this long. */
export const CODE_TTL_MS = 10 * 60_000;
/** A panel session unused this long (no panel connected, no call) ends. */
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
/** A panel session ends this long after its sign-in, however much it is used. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;
/** How often a used session's `seen_at` is written down (at most). */
const SEEN_WRITE_MS = 60_000;
/** Outstanding codes and live sessions are bounded: the oldest goes first. */
const MAX_CODES = 16;
const MAX_SESSIONS = 32;
/** A sessions file larger than this is not ours. */
const MAX_SESSIONS_FILE = 256 * 1024;

/** Where the hub keeps the key `uplink panel-url` presents. */
export function operatorKeyPath(dataDir: string): string {
  return join(dataDir, 'operator.key');
}

/** Where the hub keeps the hashes of the panel sessions it accepts. */
export function panelSessionsPath(dataDir: string): string {
  return join(dataDir, 'panel-sessions.json');
}

/** Ends every panel session of a data directory whose hub is not running (the file is all there is). */
export function revokePanelSessionsAt(dataDir: string): boolean {
  const path = panelSessionsPath(dataDir);
  if (!existsSync(path)) return false;
  rmSync(path, { force: true });
  return true;
}

/** An operator's panel session. */
export interface OperatorSession {
  /** Short, non-secret name for the audit (`panel-session:<label>`). */
  label: string;
  /** A non-secret handle of the session (a prefix of its id's hash), the same across restarts. */
  handle: string;
  /** Whether `candidate` is the session's key (which proves, with the cookie, that the page holding the session opened it). */
  keyMatches(candidate: unknown): boolean;
  /** When a panel of this session was last connected or used (ms); its sign-in time if never. */
  seenAt: number;
}

/** What the hub's HTTP server keeps for operator access. */
export interface OperatorAuth {
  /** The cookie's name (per port: cookies do not separate ports). */
  cookieName(): string;
  mintCode(): string;
  /** Trades a live code for a new session; undefined when the code is unknown, used or expired. */
  redeem(code: unknown): { id: string; key: string; session: OperatorSession } | undefined;
  /** The session a request's cookie names, if live. */
  sessionOf(cookieHeader: string | undefined): OperatorSession | undefined;
  /** Notes that a session is in use now (a connected panel), so its idle clock restarts. */
  touch(handle: string): void;
  /** Ends the session a cookie names (sign-out); true when there was one. */
  signOut(cookieHeader: string | undefined): boolean;
  /** Ends every session and every outstanding code, and rotates the operator key; returns how many sessions ended. */
  revokeAll(): number;
  /** Called after sessions are revoked, so open panels of them are closed. */
  onRevoke(listener: () => void): () => void;
  keyMatches(candidate: string | undefined): boolean;
}

/** One session as the hub keeps it (and writes it down): hashes only. */
interface StoredSession {
  id_sha256: string;
  key_sha256: string;
  label: string;
  created_at: number;
  seen_at: number;
}

const random = (bytes: number): string => randomBytes(bytes).toString('base64url');
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Reads one cookie from a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The sessions written down by an earlier hub, the broken or foreign ones skipped. */
function loadSessions(path: string): StoredSession[] {
  if (!existsSync(path)) return [];
  try {
    const parsed = JSON.parse(readSmallFile(path, MAX_SESSIONS_FILE)) as { sessions?: unknown };
    if (!Array.isArray(parsed.sessions)) return [];
    const hex = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
    const time = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
    return (parsed.sessions as Array<Partial<StoredSession>>).filter(
      (s): s is StoredSession =>
        !!s && hex(s.id_sha256) && hex(s.key_sha256) && typeof s.label === 'string' && s.label.length <= 16 && time(s.created_at) && time(s.seen_at),
    );
  } catch {
    // A broken file signs every browser out, which is safe; the next sign-in writes a good one.
    return [];
  }
}

/** Writes a fresh operator key (0600) and returns the state that checks codes and sessions; `port` once listening. */
export function createOperatorAuth(dataDir: string, port: () => number, now: () => number = Date.now): OperatorAuth {
  const path = operatorKeyPath(dataDir);
  const secrets = liveSecrets(dataDir);
  let key = '';
  const rotateKey = (): void => {
    const next = random(32);
    secrets.add(next);
    writeFileAtomic(path, `${next}\n`, 0o600);
    secrets.delete(key);
    key = next;
  };
  rotateKey();
  const sessionsPath = panelSessionsPath(dataDir);
  // Maps keep insertion order, so the first entry is the oldest.
  const codes = new Map<string, number>();
  const sessions = new Map<string, StoredSession>();
  for (const s of loadSessions(sessionsPath)) sessions.set(s.id_sha256, s);
  /** The secrets of each session this hub has seen, to forget from the mask when it ends. */
  const known = new Map<string, string[]>();
  const revokeListeners = new Set<() => void>();
  const save = (): void => {
    try {
      writeFileAtomic(sessionsPath, `${JSON.stringify({ sessions: [...sessions.values()] }, null, 1)}\n`, 0o600);
    } catch {
      // Not written: the sessions still work until the hub stops; a restart then asks for a new link.
    }
  };
  const expired = (s: StoredSession): boolean => s.seen_at + SESSION_IDLE_MS <= now() || s.created_at + SESSION_TTL_MS <= now();
  const forgetSession = (hash: string): void => {
    for (const secret of known.get(hash) ?? []) secrets.delete(secret);
    known.delete(hash);
    sessions.delete(hash);
  };
  const forgetCode = (code: string): void => {
    secrets.delete(code);
    codes.delete(code);
  };
  const prune = <V>(map: Map<string, V>, isExpired: (v: V) => boolean, max: number, forget: (k: string) => void): boolean => {
    const before = map.size;
    for (const [k, v] of map) if (isExpired(v)) forget(k);
    while (map.size > max) forget(map.keys().next().value as string);
    return map.size !== before;
  };
  if (prune(sessions, expired, MAX_SESSIONS, forgetSession)) save();
  const cookieName = (): string => `uplink_panel_${port()}`;
  const view = (s: StoredSession): OperatorSession => ({
    label: s.label,
    handle: s.id_sha256.slice(0, 16),
    seenAt: s.seen_at,
    keyMatches: (candidate) => {
      if (typeof candidate !== 'string' || candidate.length > 128 || !secretEquals(s.key_sha256, sha256(candidate))) return false;
      // A restarted hub learns the key here: mask it from now on.
      const secretsOf = known.get(s.id_sha256) ?? [];
      if (!secretsOf.includes(candidate)) {
        secrets.add(candidate);
        known.set(s.id_sha256, [...secretsOf, candidate]);
      }
      return true;
    },
  });
  const lookup = (cookieHeader: string | undefined): { id: string; s: StoredSession } | undefined => {
    const id = cookieValue(cookieHeader, cookieName());
    if (!id || id.length > 128) return undefined;
    const hash = sha256(id);
    const s = sessions.get(hash);
    if (!s) return undefined;
    if (expired(s)) {
      forgetSession(hash);
      save();
      return undefined;
    }
    if (!known.get(hash)?.includes(id)) {
      secrets.add(id);
      known.set(hash, [...(known.get(hash) ?? []), id]);
    }
    return { id, s };
  };
  const revoked = (): void => {
    for (const l of [...revokeListeners]) l();
  };
  return {
    cookieName,
    mintCode() {
      const code = random(24);
      codes.set(code, now() + CODE_TTL_MS);
      secrets.add(code);
      prune(codes, (expires) => expires <= now(), MAX_CODES, forgetCode);
      return code;
    },
    redeem(code) {
      if (typeof code !== 'string' || code.length > 64) return undefined;
      // Map lookup by the secret itself: a timing side channel needs a guess per probe, and
      // each code lives ten minutes and dies on first use.
      const expires = codes.get(code);
      if (expires === undefined) return undefined;
      forgetCode(code);
      if (expires <= now()) return undefined;
      const id = random(32);
      const sessionKey = random(32);
      const s: StoredSession = { id_sha256: sha256(id), key_sha256: sha256(sessionKey), label: random(6), created_at: now(), seen_at: now() };
      sessions.set(s.id_sha256, s);
      known.set(s.id_sha256, [id, sessionKey]);
      secrets.add(id);
      secrets.add(sessionKey);
      prune(sessions, expired, MAX_SESSIONS, forgetSession);
      save();
      return { id, key: sessionKey, session: view(s) };
    },
    sessionOf(cookieHeader) {
      const found = lookup(cookieHeader);
      return found && view(found.s);
    },
    touch(handle) {
      const s = [...sessions.values()].find((x) => x.id_sha256.startsWith(handle));
      if (!s || now() - s.seen_at < SEEN_WRITE_MS) return;
      s.seen_at = now();
      save();
    },
    signOut(cookieHeader) {
      const found = lookup(cookieHeader);
      if (!found) return false;
      forgetSession(found.s.id_sha256);
      save();
      revoked();
      return true;
    },
    revokeAll() {
      const n = sessions.size;
      for (const hash of [...sessions.keys()]) forgetSession(hash);
      for (const code of [...codes.keys()]) forgetCode(code);
      save();
      // A copy of the old key (which mints links) opens nothing from now on either.
      try {
        rotateKey();
      } catch {
        // Not rotated (the disk refused): the sessions are gone all the same; the next start rotates it.
      }
      revoked();
      return n;
    },
    onRevoke(listener) {
      revokeListeners.add(listener);
      return () => void revokeListeners.delete(listener);
    },
    keyMatches: (candidate) => secretEquals(key, candidate),
  };
}
