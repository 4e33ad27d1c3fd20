/**
 * Realistic call outputs for memory benchmarks. Every call gets a fresh string with its own
 * storage, as a real screen read or screenshot does: a shared or sliced string would make retained
 * outputs look free. Strings are made the way the drivers make theirs (`Buffer#toString`), so a
 * ~1 MB base64 screenshot lands where Node puts it: outside the JS heap, as an external string.
 */

/** A screen read's text of `bytes` ASCII characters, unique to `serial`. */
export function screenText(bytes: number, serial: number): string {
  const buf = Buffer.alloc(bytes, 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n');
  buf.write(`${serial}:`, 0, 'latin1');
  return buf.toString('latin1');
}

/** A screenshot's base64 PNG of `bytes` characters, unique to `serial`. */
export function screenshotBase64(bytes: number, serial: number): string {
  const raw = Buffer.alloc(Math.ceil((bytes * 3) / 4), serial % 251);
  raw.writeUInt32LE(serial >>> 0, 0);
  return raw.toString('base64');
}

/** Heap, external (strings and buffers kept outside the heap) and RSS bytes after a full GC. */
export interface MemorySample {
  heap: number;
  external: number;
  rss: number;
}

/** Collects garbage (needs `--expose-gc`, which `scripts/bench.mjs` passes) and samples memory. */
export function sampleMemory(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc (node scripts/bench.mjs does)');
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}

export const MiB = 1024 * 1024;
