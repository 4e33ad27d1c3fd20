/**
 * The data directory is private: 0700, and every file Uplink writes or holds there 0600 — the
 * audit (which holds read output) with its WAL and shared memory, the config, its saved copy —
 * also when an earlier run or the user left them readable by others.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AuditStore } from '../../../src/main/hub/audit/store';
import { tmpDataDir } from '../../fixtures/hub-build';
import { closeHubs, openHub } from './helpers';

const mode = (path: string): number => statSync(path).mode & 0o777;

afterEach(closeHubs);

describe('data directory modes', () => {
  it('a fresh data dir: the dir is 0700 and audit.sqlite, -wal, -shm are 0600', async () => {
    const old = process.umask(0o022);
    try {
      const dir = join(tmpDataDir(), 'fresh');
      const { hub } = openHub({ dir });
      await hub.invoke('test:alpha', 'noop', {}, { agent: { kind: 'mcp', name: 'a' } });
      hub.queryAudit({ limit: 1 });
      expect(mode(dir)).toBe(0o700);
      for (const f of ['audit.sqlite', 'audit.sqlite-wal', 'audit.sqlite-shm']) {
        expect(existsSync(join(dir, f))).toBe(true);
        expect(mode(join(dir, f)).toString(8)).toBe('600');
      }
    } finally {
      process.umask(old);
    }
  });

  it('files and a dir left readable by others are tightened when the hub opens them', () => {
    const dir = tmpDataDir();
    new AuditStore(join(dir, 'audit.sqlite')).close();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 5000 } }));
    for (const f of ['audit.sqlite', 'config.json']) chmodSync(join(dir, f), 0o644);
    chmodSync(dir, 0o755);
    openHub({ dir });
    expect(mode(dir).toString(8)).toBe('700');
    for (const f of ['audit.sqlite', 'audit.sqlite-wal', 'audit.sqlite-shm', 'config.json', 'config.last-good.json'])
      expect(mode(join(dir, f)).toString(8)).toBe('600');
  });
});
