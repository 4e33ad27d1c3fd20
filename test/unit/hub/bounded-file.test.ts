/**
 * The hub's one bounded read refuses what is not a regular file — a FIFO, a device, a directory,
 * or a symlink to one — at once, without opening it to wait for a writer; a symlink to a regular
 * file is read.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readBoundedFile, readSmallFile } from '../../../src/main/hub/files';
import { tmpDataDir } from '../../fixtures/hub-build';

const rescuers: Array<ReturnType<typeof spawn>> = [];
afterEach(() => {
  for (const r of rescuers.splice(0)) r.kill();
});

/**
 * A FIFO at `path`, and a writer that opens it after 3 s: should a read block on it (the bug), the
 * writer ends the wait so the test fails on its duration instead of hanging the worker.
 */
function fifo(path: string): void {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  const rescuer = spawn('sh', ['-c', `sleep 3; echo '{}' > '${path}'`], { stdio: 'ignore' });
  rescuers.push(rescuer);
}

/** How long `work` took, in ms, and what it returned or threw. */
function timed<T>(work: () => T): { ms: number; value?: T; error?: Error } {
  const start = performance.now();
  try {
    const value = work();
    return { ms: performance.now() - start, value };
  } catch (e) {
    return { ms: performance.now() - start, error: e as Error };
  }
}

describe('readBoundedFile and readSmallFile', () => {
  it('refuse a FIFO at once, also behind a symlink, without waiting for a writer', () => {
    const dir = tmpDataDir('uplink-files-');
    const path = join(dir, 'config.json');
    fifo(path);
    const direct = timed(() => readBoundedFile(path, 1024));
    expect(direct.ms).toBeLessThan(1000);
    expect(direct.value).toEqual({ regular: false, type: 'a FIFO' });
    symlinkSync(path, join(dir, 'link.json'));
    const linked = timed(() => readSmallFile(join(dir, 'link.json'), 1024));
    expect(linked.ms).toBeLessThan(1000);
    expect(linked.error?.message).toBe('it is a FIFO, not a regular file');
  });

  it('refuse a directory and a device (a symlink to /dev/zero) by what they are', () => {
    const dir = tmpDataDir('uplink-files-');
    mkdirSync(join(dir, 'd'));
    expect(readBoundedFile(join(dir, 'd'), 1024)).toEqual({ regular: false, type: 'a directory' });
    symlinkSync('/dev/zero', join(dir, 'zero'));
    expect(readBoundedFile(join(dir, 'zero'), 1024)).toEqual({ regular: false, type: 'a character device' });
    expect(() => readSmallFile(join(dir, 'zero'), 1024)).toThrow(/^it is a character device, not a regular file$/);
  });

  it('read a regular file, also through a symlink, and refuse one over the limit without reading it whole', () => {
    const dir = tmpDataDir('uplink-files-');
    writeFileSync(join(dir, 'a.json'), '{"ok":true}\n');
    symlinkSync(join(dir, 'a.json'), join(dir, 'b.json'));
    expect(readSmallFile(join(dir, 'b.json'), 1024)).toBe('{"ok":true}\n');
    expect(readBoundedFile(join(dir, 'a.json'), 1024)).toMatchObject({ regular: true, size: 12, bytes: Buffer.from('{"ok":true}\n') });
    writeFileSync(join(dir, 'big'), 'x'.repeat(5000));
    expect(readBoundedFile(join(dir, 'big'), 4096)).toMatchObject({ regular: true, size: 5000 });
    expect(readBoundedFile(join(dir, 'big'), 4096)).not.toHaveProperty('bytes');
    expect(() => readSmallFile(join(dir, 'big'), 4096)).toThrow(/^it is over 4096 bytes$/);
    // An empty file, and one whose size the stat does not tell (procfs), are read whole.
    writeFileSync(join(dir, 'empty'), '');
    expect(readSmallFile(join(dir, 'empty'), 16)).toBe('');
    expect(readSmallFile('/proc/self/status', 1024 * 1024)).toMatch(/^Name:/);
  });

  it('a missing file throws ENOENT, as readFileSync does', () => {
    expect(() => readSmallFile(join(tmpDataDir('uplink-files-'), 'absent'), 16)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });
});
