/**
 * Realistic call outputs for memory benchmarks. Every call gets a fresh string with its own
 * storage, as a real screen read or screenshot does: a shared or sliced string would make retained
 * outputs look free. Strings are made the way a hub receives them from a driver: the reply arrives
 * as pipe reads of at most 64 KB, and the driver's line reader parses the line (`JSON.parse`), so
 * the output is a string on the JS heap. The raw bytes live in the driver's own process (the
 * desktop helper, tmux), never in the hub's: the fake driver keeps one raw buffer per size and
 * stamps each call's serial into it, so its own allocations are not counted as the hub's.
 */

const PIPE_READ = 48 * 1024; // raw bytes per 64 KB of base64 (a multiple of 3, so chunks join exactly)
const rawBuffers = new Map<string, Buffer>();

function raw(bytes: number, fill: string | number): Buffer {
  const key = `${bytes}:${fill}`;
  let buf = rawBuffers.get(key);
  if (!buf) rawBuffers.set(key, (buf = Buffer.alloc(bytes, fill)));
  return buf;
}

/** `buf` encoded in pipe-read-sized pieces and parsed from a JSON line, as a driver's reply is. */
function received(buf: Buffer, encoding: 'latin1' | 'base64'): string {
  let text = '';
  for (let i = 0; i < buf.length; i += PIPE_READ) text += buf.toString(encoding, i, Math.min(buf.length, i + PIPE_READ));
  return JSON.parse(JSON.stringify(text)) as string;
}

/** A screen read's text of `bytes` ASCII characters, unique to `serial`. */
export function screenText(bytes: number, serial: number): string {
  const buf = raw(bytes, 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n');
  buf.write(`${String(serial).padStart(10, '0')}:`, 0, 'latin1');
  return received(buf, 'latin1');
}

/** A screenshot's base64 PNG of `bytes` characters, unique to `serial`. */
export function screenshotBase64(bytes: number, serial: number): string {
  const buf = raw(Math.ceil((bytes * 3) / 4), 0);
  buf.writeUInt32LE(serial >>> 0, 0);
  return received(buf, 'base64');
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
