/**
 * The HTTP bearer token: a random value in `<data dir>/token`, mode 0600, created on first start.
 * Compared in constant time; never logged, and masked in whatever a driver returns (`mask.ts`).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { dataPaths, ensureDataDir } from '../data-dir';
import { HubError } from '../errors';
import { readSmallFile, writeFileAtomic } from '../files';
import { liveSecrets } from './mask';

/** A token file is one line of base64url; a larger one is not ours. */
const MAX_TOKEN_BYTES = 4096;

/** The token in the data directory, if there is one (registered with the hub's secrets); creates nothing. */
export function readToken(dataDir: string): string | undefined {
  const path = dataPaths(dataDir).token;
  if (!existsSync(path)) return undefined;
  let token: string;
  try {
    token = readSmallFile(path, MAX_TOKEN_BYTES).trim();
  } catch (e) {
    throw new HubError('core', 'Unavailable', `cannot read the MCP token file ${path}: ${(e as Error).message}`, {
      hint: 'remove it and start again (a new token is made)',
    });
  }
  if (token.length < 32) return undefined;
  liveSecrets(dataDir).add(token);
  return token;
}

/** Reads the token, creating it (0600) when missing or empty. */
export function ensureToken(dataDir: string): string {
  ensureDataDir(dataDir);
  const path = dataPaths(dataDir).token;
  const existing = readToken(dataDir);
  if (existing) {
    // Tighten permissions if someone loosened them.
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
    return existing;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileAtomic(path, `${token}\n`, 0o600);
  liveSecrets(dataDir).add(token);
  return token;
}
