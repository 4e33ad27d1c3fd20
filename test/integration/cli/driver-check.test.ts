/**
 * `uplink driver check` as a person runs it: one line per check on stdout, the exit code says
 * whether any failed, and no hub is started (the data dir stays untouched).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildForTests, runCli, tmpDataDir } from '../../fixtures/hub-build';
import { CHECK_NAMES } from '../../../src/main/hub/driver-admin/check';

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'external');

describe('uplink driver check', () => {
  it('prints one line per check and exits 0 for a conforming driver, without starting a hub', { timeout: 60_000 }, async () => {
    const b = await buildForTests();
    const dataDir = tmpDataDir('uplink-driver-check-');
    const r = await runCli(b, dataDir, ['driver', 'check', '--timeout', '3000', '--', process.execPath, join(FIXTURES, 'notes-driver.mjs')]);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.split(/[ :]/)[1])).toEqual([...CHECK_NAMES]);
    expect(lines[0]).toBe('pass handshake (notes, protocol 3, extensions: shutdown)');
    expect(r.code).toBe(0);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('exits 1 when a check fails, and 2 without a command', { timeout: 60_000 }, async () => {
    const b = await buildForTests();
    const dataDir = tmpDataDir('uplink-driver-check-');
    const r = await runCli(b, dataDir, ['driver', 'check', '--', process.execPath, join(FIXTURES, 'broken', 'mutating-missing.mjs')]);
    expect(r.stdout).toMatch(/^fail mutating: set does not declare "mutating" .* — hint: /m);
    expect(r.code).toBe(1);
    const usage = await runCli(b, dataDir, ['driver', 'check']);
    expect(usage.stderr).toMatch(/^uplink error \[core:Invalid\]: driver check needs the command that starts the driver — hint: put it after `--`/);
    expect(usage.code).toBe(2);
  });
});
