/**
 * Where Uplink keeps its files: `UPLINK_DATA_DIR`, else the platform's user data directory.
 * Paths of the files in it are named here once so every process agrees on them.
 */
import { mkdirSync } from 'node:fs';
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

/** Creates the data directory (0700) if needed and returns it. */
export function ensureDataDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
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
