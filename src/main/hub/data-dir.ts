/**
 * Where Uplink keeps its files: `UPLINK_DATA_DIR`, else the platform's user data directory.
 * Paths of the files in it are named here once so every process agrees on them.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Resolves the data directory (not created). */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.UPLINK_DATA_DIR) return env.UPLINK_DATA_DIR;
  const home = env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Uplink');
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'Uplink');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'uplink');
}

/**
 * Creates the data directory (0700) if needed and returns it. One that already exists is tightened
 * to 0700 too: it holds the token, the audit (read output) and the config. A shared sticky
 * directory (`/tmp`) or one owned by someone else is left as it is.
 */
export function ensureDataDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    const st = statSync(dir);
    const ours = typeof process.getuid !== 'function' || st.uid === process.getuid();
    if ((st.mode & 0o077) !== 0 && (st.mode & 0o1000) === 0 && ours) chmodSync(dir, 0o700);
  } catch {
    // Not ours to change: the files in it are still created 0600.
  }
  return dir;
}

/** Tightens existing files to 0600 (best effort; a missing file is skipped). */
export function tightenFiles(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    } catch {
      // Missing, or not ours: nothing to tighten.
    }
  }
}

/**
 * Creates `path` empty with mode 0600 unless it exists, so a file another library then opens
 * (SQLite, which gives its -wal and -shm the database's mode) is never born readable by others.
 */
export function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch {
    // Already there (tightened after opening), or a read-only dir the open will report.
  }
}

/** The files of a data directory. */
export function dataPaths(dir: string): { config: string; token: string; audit: string; hubJson: string } {
  return {
    config: join(dir, 'config.json'),
    token: join(dir, 'token'),
    audit: join(dir, 'audit.sqlite'),
    hubJson: join(dir, 'hub.json'),
  };
}

/**
 * Whether a process with this pid exists (EPERM: it does, as another user). Only positive pids:
 * `kill(0)` would signal our own process group and read as alive.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
