/**
 * Small files: reading those the hub trusts only so far (the config file, the credentials, the
 * fleet's secrets), and the one atomic write every service uses (it lives with the drivers, which
 * may not import the hub, and is re-exported here).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';

export { writeFileAtomic } from '../drivers';

/** A regular file's mode and size, and its bytes when it holds at most `limit` of them; else what it is ("a FIFO"). */
export type BoundedFile = { regular: false; type: string } | { regular: true; mode: number; size: number; bytes?: Buffer };

/** What a file that is not a regular one is, in words. */
function typeOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'a special file';
}

/**
 * Opened without blocking: opening a FIFO for reading waits for a writer, and a device may do
 * anything on open (a terminal becomes the controlling one). Reads of a regular file ignore it.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Reads at most `limit + 1` bytes of `path`, so an oversized file is refused without being read
 * whole (`bytes` absent, `size` what was seen, including growth between the stat and the read).
 * What is not a regular file (a FIFO, a device, a directory, or a symlink to one) is not read and
 * never blocks: it is refused by its stat before it is opened, and by the opened descriptor's stat
 * should it have been swapped in between. A symlink to a regular file is read. Throws what the
 * stat or open throws (ENOENT for a missing file).
 */
export function readBoundedFile(path: string, limit: number): BoundedFile {
  const before = statSync(path);
  if (!before.isFile()) return { regular: false, type: typeOf(before) };
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { regular: false, type: typeOf(st) };
    if (st.size > limit) return { regular: true, mode: st.mode, size: st.size };
    // Room for what the stat saw and one byte more; a file that grows meanwhile gets more, up to
    // one byte past the limit (then it is too large).
    let buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (let r; (r = readSync(fd, buf, n, buf.length - n, null)) > 0;) {
      n += r;
      if (n < buf.length) continue;
      if (n > limit) return { regular: true, mode: st.mode, size: n };
      const more = Buffer.alloc(Math.min(limit + 1, buf.length * 2));
      buf.copy(more);
      buf = more;
    }
    return { regular: true, mode: st.mode, size: n, bytes: buf.subarray(0, n) };
  } finally {
    closeSync(fd);
  }
}

/**
 * The UTF-8 text of a small regular file. Anything else is refused at once with an error whose
 * message says what it is ("it is a FIFO, not a regular file", "it is over 4096 bytes"), for the
 * caller to put after the path; a missing file throws ENOENT as `readFileSync` does.
 */
export function readSmallFile(path: string, limit: number): string {
  const file = readBoundedFile(path, limit);
  if (!file.regular) throw Object.assign(new Error(`it is ${file.type}, not a regular file`), { code: 'EFTYPE' });
  if (!file.bytes) throw Object.assign(new Error(`it is over ${limit} bytes`), { code: 'EFBIG' });
  return file.bytes.toString('utf8');
}
