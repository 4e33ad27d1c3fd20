/**
 * Operator authority for the browser panel, kept apart from the agents' MCP token: nothing an
 * agent is handed opens the panel. `uplink serve` prints a URL with a one-time code; the page
 * trades it (`POST /panel/session`) for a session — an HttpOnly cookie plus a key the page keeps
 * in its origin's storage and proves in its first WebSocket frame. Cookies are shared by every
 * port of a host, so a cookie alone could leak to another local server the operator's browser
 * visits; the key cannot. `uplink panel-url` mints new codes with `<data dir>/operator.key`
 * (rotated at every start, mode 0600), which is neither the token nor in the token file. The key,
 * each live code and each session's id and key are registered with the hub's secret mask while they
 * live, so none of them reaches an agent through what a driver reads.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomic } from '../files';
import { secretEquals } from './secret';
import { liveSecrets } from './mask';

/** A one-time code is good for this long. */
export const CODE_TTL_MS = 10 * 60_000;
/** A panel session lasts this long; then the operator asks for a fresh URL. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;
/** Outstanding codes and live sessions are bounded: the oldest goes first. */
const MAX_CODES = 16;
const MAX_SESSIONS = 32;

/** Where the hub keeps the key `uplink panel-url` presents. */
export function operatorKeyPath(dataDir: string): string {
  return join(dataDir, 'operator.key');
}

/** An operator's panel session. */
export interface OperatorSession {
  /** Short, non-secret name for the audit (`panel-session:<label>`). */
  label: string;
  /** Proves, with the cookie, that the page holding the session opened it. */
  key: string;
}

/** What the hub's HTTP server keeps for operator access. */
export interface OperatorAuth {
  /** The cookie's name (per port: cookies do not separate ports). */
  cookieName(): string;
  mintCode(): string;
  /** Trades a live code for a new session; undefined when the code is unknown, used or expired. */
  redeem(code: unknown): { id: string; session: OperatorSession } | undefined;
  /** The session a request's cookie names, if live. */
  sessionOf(cookieHeader: string | undefined): OperatorSession | undefined;
  keyMatches(candidate: string | undefined): boolean;
}

const random = (bytes: number): string => randomBytes(bytes).toString('base64url');

/** Reads one cookie from a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Writes a fresh operator key (0600) and returns the state that checks codes and sessions; `port` once listening. */
export function createOperatorAuth(dataDir: string, port: () => number, now: () => number = Date.now): OperatorAuth {
  const key = random(32);
  const path = operatorKeyPath(dataDir);
  const secrets = liveSecrets(dataDir);
  secrets.add(key);
  writeFileAtomic(path, `${key}\n`, 0o600);

  // Maps keep insertion order, so the first entry is the oldest.
  const codes = new Map<string, number>();
  const sessions = new Map<string, OperatorSession & { expires: number }>();
  const forgetSession = (id: string): void => {
    secrets.delete(id);
    secrets.delete(sessions.get(id)?.key);
    sessions.delete(id);
  };
  const forgetCode = (code: string): void => {
    secrets.delete(code);
    codes.delete(code);
  };
  const prune = <V>(map: Map<string, V>, expired: (v: V) => boolean, max: number, forget: (k: string) => void): void => {
    for (const [k, v] of map) if (expired(v)) forget(k);
    while (map.size > max) forget(map.keys().next().value as string);
  };
  const cookieName = (): string => `uplink_panel_${port()}`;
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
      const session = { label: random(6), key: random(32), expires: now() + SESSION_TTL_MS };
      sessions.set(id, session);
      secrets.add(id);
      secrets.add(session.key);
      prune(sessions, (s) => s.expires <= now(), MAX_SESSIONS, forgetSession);
      return { id, session: { label: session.label, key: session.key } };
    },
    sessionOf(cookieHeader) {
      const id = cookieValue(cookieHeader, cookieName());
      const s = id ? sessions.get(id) : undefined;
      if (!s) return undefined;
      if (s.expires <= now()) {
        forgetSession(id!);
        return undefined;
      }
      return { label: s.label, key: s.key };
    },
    keyMatches: (candidate) => secretEquals(key, candidate),
  };
}
