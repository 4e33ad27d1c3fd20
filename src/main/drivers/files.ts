/**
 * The one atomic file write behind every small file Uplink keeps (config, agents, confirmed rules,
 * hub.json, the operator key, desktop bindings). It lives beside the driver contract because a
 * driver may import nothing of the hub, and src/shared does no I/O; the hub re-exports it from its
 * foundation (src/main/hub/files.ts), so everyone writes the same way.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `data` so that a reader, or the file after a crash or power loss, holds the
 * old contents or the new, never a part: a temp file in the same directory (a rename never crosses
 * file systems) is written and fsynced, renamed over the target, and the directory fsynced so the
 * rename itself is on disk. The file gets `mode` whatever the umask or an older file had.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  // Unique per write: two processes (or two writes of one) never share a temp file.
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let n = 0; n < bytes.byteLength;) n += writeSync(fd, bytes, n, bytes.byteLength - n);
      // The umask may have narrowed `mode` at creation; Windows knows no such modes.
      if (process.platform !== 'win32') fchmodSync(fd, mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  syncDir(dir);
}

/** Makes a rename in `dir` durable; best effort where directories cannot be opened or synced. */
function syncDir(dir: string): void {
  if (process.platform === 'win32') return;
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to fsync a directory (EINVAL); the file itself is already in place.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
