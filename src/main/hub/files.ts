/**
 * Small files: reading those the hub trusts only so far (the config file, the fleet's secrets),
 * and the one atomic write every service uses (it lives with the drivers, which may not import
 * the hub, and is re-exported here).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export { writeFileAtomic } from '../drivers';

/** A regular file's mode and size, and its bytes when it holds at most `limit` of them. */
export type BoundedFile = { regular: false } | { regular: true; mode: number; size: number; bytes?: Buffer };

/**
 * Reads at most `limit + 1` bytes of `path`, so an oversized file is refused without being read
 * whole (`bytes` absent, `size` what was seen, including growth between the stat and the read).
 * What is not a regular file is not read at all.
 */
export function readBoundedFile(path: string, limit: number): BoundedFile {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { regular: false };
    if (st.size > limit) return { regular: true, mode: st.mode, size: st.size };
    const buf = Buffer.alloc(limit + 1);
    let n = 0;
    for (let r; n < buf.length && (r = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += r;
    if (n > limit) return { regular: true, mode: st.mode, size: n };
    return { regular: true, mode: st.mode, size: n, bytes: buf.subarray(0, n) };
  } finally {
    closeSync(fd);
  }
}
