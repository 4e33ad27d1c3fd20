/** The one atomic write: fsynced before and after the rename, and all or nothing. */
import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../../../src/main/drivers/files';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return { ...real, fsyncSync: vi.fn(real.fsyncSync), renameSync: vi.fn(real.renameSync), openSync: vi.fn(real.openSync) };
});

const fsyncSync = vi.mocked(fs.fsyncSync);
const renameSync = vi.mocked(fs.renameSync);
const openSync = vi.mocked(fs.openSync);

afterEach(() => vi.clearAllMocks());

const dir = (): string => mkdtempSync(join(tmpdir(), 'uplink-atomic-'));

describe('writeFileAtomic', () => {
  it('fsyncs the file before the rename and the directory after it', () => {
    const d = dir();
    const target = join(d, 'config.json');
    writeFileAtomic(target, '{"a":1}\n');
    expect(readFileSync(target, 'utf8')).toBe('{"a":1}\n');
    expect(fsyncSync).toHaveBeenCalledTimes(2);
    expect(renameSync).toHaveBeenCalledTimes(1);
    const [fileSync, dirSync] = fsyncSync.mock.invocationCallOrder;
    const rename = renameSync.mock.invocationCallOrder[0]!;
    expect(fileSync).toBeLessThan(rename);
    expect(dirSync).toBeGreaterThan(rename);
    // The second fsync is of a descriptor opened on the directory itself.
    const dirOpen = openSync.mock.calls.findIndex(([p]) => p === d);
    expect(dirOpen).toBeGreaterThanOrEqual(0);
    expect(fsyncSync.mock.calls[1]![0]).toBe(openSync.mock.results[dirOpen]!.value);
  });

  it('a crash between the write and the rename leaves the old file whole', () => {
    const d = dir();
    const target = join(d, 'agents.json');
    writeFileSync(target, 'old\n', { mode: 0o600 });
    let seen: { target: string; temp: string } | undefined;
    renameSync.mockImplementationOnce((from) => {
      // At the rename the new text is complete in the temp file and the target is untouched.
      seen = { target: readFileSync(target, 'utf8'), temp: readFileSync(from, 'utf8') };
      throw new Error('killed');
    });
    expect(() => writeFileAtomic(target, 'new\n')).toThrow('killed');
    expect(seen).toEqual({ target: 'old\n', temp: 'new\n' });
    expect(readFileSync(target, 'utf8')).toBe('old\n');
    expect(readdirSync(d)).toEqual(['agents.json']);
  });

  it.skipIf(process.platform === 'win32')('gives the file the mode asked for, whatever the umask or the old file had', () => {
    const d = dir();
    const target = join(d, 'token');
    writeFileSync(target, 'old\n', { mode: 0o644 });
    writeFileAtomic(target, 'secret\n', 0o600);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    const old = process.umask(0o077);
    try {
      writeFileAtomic(target, 'shared\n', 0o644);
    } finally {
      process.umask(old);
    }
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });
});
