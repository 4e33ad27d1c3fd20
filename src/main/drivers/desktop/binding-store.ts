/**
 * Bindings outlive the Uplink process that made them: every `uplink invoke` runs its own hub, so
 * an address a person or agent read from an earlier `uplink channels` must stay bound to the
 * process they saw, not to whatever owns that window id by the time they act. The table is kept
 * in one small JSON file per display-server run (the helper's `session`), in a private directory
 * of the user's runtime dir.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../files';
import type { Binding } from './binding';
import { parseStartTime } from './proc';

/** The persisted part of a binding table. */
export interface StoredBindings {
  bindings: Record<string, Binding>;
  /** Window id → its newest address. */
  current: Record<string, string>;
  /** Window id → how many processes it was bound to. */
  generations: Record<string, number>;
}

/** Reads and writes the binding table of one display-server run. */
export interface BindingStore {
  load(session: string): StoredBindings | undefined;
  save(session: string, data: StoredBindings): void;
}

/** `$XDG_RUNTIME_DIR/uplink`, else a private `uplink-<uid>` directory in the temp dir. */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'uplink');
  return join(tmpdir(), `uplink-${process.getuid?.() ?? 'user'}`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validBinding(v: unknown): v is Binding {
  return (
    isObject(v) &&
    typeof v.window === 'string' &&
    Number.isSafeInteger(v.pid) &&
    Number.isSafeInteger(v.start_time) &&
    typeof v.title === 'string' &&
    Array.isArray(v.class) &&
    typeof v.bound_at === 'string'
  );
}

/** Keeps only well-formed entries: the file is ours, but a torn or hand-edited one must not crash a call. */
function parse(raw: string): StoredBindings | undefined {
  const data: unknown = JSON.parse(raw);
  if (!isObject(data) || !isObject(data.bindings) || !isObject(data.current) || !isObject(data.generations)) return undefined;
  const out: StoredBindings = { bindings: {}, current: {}, generations: {} };
  for (const [addr, b] of Object.entries(data.bindings)) if (validBinding(b)) out.bindings[addr] = b;
  for (const [w, a] of Object.entries(data.current)) if (typeof a === 'string') out.current[w] = a;
  for (const [w, n] of Object.entries(data.generations)) if (Number.isSafeInteger(n)) out.generations[w] = n as number;
  return out;
}

/** Removes the tables of X server runs that have ended (their ids can never come back). */
function pruneEnded(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = /^desktop-bindings-x11-([0-9]+)-([0-9]+)\.json$/.exec(name);
    if (!m) continue;
    let start: number | undefined;
    try {
      start = parseStartTime(readFileSync(`/proc/${m[1]}/stat`, 'utf8'));
    } catch {
      start = undefined;
    }
    if (start !== Number(m[2])) {
      try {
        unlinkSync(join(dir, name));
      } catch {
        // another process pruned it first
      }
    }
  }
}

/**
 * A store in `dir` (created 0700). The directory must be the user's own and private, else the
 * store stays off (a shared temp dir could be pre-created by someone else).
 */
export function fileBindingStore(dir: string): BindingStore {
  let usable: boolean | undefined;
  const ready = (): boolean => {
    if (usable !== undefined) return usable;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const st = lstatSync(dir);
      usable = st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid()) && (st.mode & 0o077) === 0;
      if (usable) pruneEnded(dir);
    } catch {
      usable = false;
    }
    return usable;
  };
  const fileOf = (session: string): string => join(dir, `desktop-bindings-${session.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`);
  return {
    load(session) {
      if (!ready()) return undefined;
      try {
        return parse(readFileSync(fileOf(session), 'utf8'));
      } catch {
        return undefined; // no file yet, or unreadable: this process's own bindings still hold
      }
    },
    save(session, data) {
      if (!ready()) return;
      const file = fileOf(session);
      try {
        writeFileAtomic(file, JSON.stringify(data), 0o600); // a concurrent reader sees the old or the new table, never half
      } catch {
        // Best effort: a full disk loses cross-process memory, not this process's bindings.
      }
    },
  };
}
