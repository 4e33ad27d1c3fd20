/**
 * Admission of an out-of-process driver runs exactly the bytes that were admitted: the hub hashes
 * the file once and runs its own private copy of those bytes, so a file swapped between the check
 * and the exec never runs. An `integrity` written into config.json by hand admits too, and says so:
 * in the audit ("admitted by config") and in the driver's status, apart from the operator's trust.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AuditEntry, Hub } from '../../../src/main/hub';
import { tmpDataDir } from '../../fixtures/hub-build';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external', 'notes-driver.mjs');
const ADMITTED_SUMMARY = 'Notes kept in memory';
const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');
const open: Hub[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await Promise.all(open.splice(0).map((h) => h.close()));
});

/** A driver file of its own (a copy of the notes fixture) in a fresh directory, and its hash. */
function driverFile(summary = ADMITTED_SUMMARY): { file: string; text: string; sha: string } {
  const text = readFileSync(FIXTURE, 'utf8').replaceAll(`'${ADMITTED_SUMMARY}'`, JSON.stringify(summary));
  const file = join(tmpDataDir('uplink-driver-'), 'driver.mjs');
  writeFileSync(file, text);
  return { file, text, sha: sha256(text) };
}

function hubFor(entry: Record<string, unknown>, options: { dir?: string; watchConfig?: boolean } = {}): { hub: Hub; dir: string } {
  const dir = options.dir ?? tmpDataDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [{ id: 'notes', ...entry }] }));
  const hub = createHub({ dataDir: dir, drivers: [], watchConfig: options.watchConfig ?? false });
  open.push(hub);
  return { hub, dir };
}

/** The audit's entries for one op (newest first). */
function auditOf(hub: Hub, op: string): AuditEntry[] {
  return hub.queryAudit({ op }).entries;
}

/**
 * Another process that swaps `file` between `a` and `b` every 2 ms: mostly a rename of a fresh copy
 * (a new inode), every third time a write in place (the same inode), so neither an open descriptor
 * nor a path read twice would pin the bytes.
 */
function swapper(file: string, a: string, b: string): ChildProcess {
  const script = `
    const { readFileSync, renameSync, writeFileSync } = require('node:fs');
    const [file, a, b] = process.argv.slice(1);
    const bytes = [readFileSync(a), readFileSync(b)];
    let i = 0;
    setInterval(() => {
      const next = bytes[i % 2];
      if (i % 3 === 2) writeFileSync(file, next);
      else { writeFileSync(file + '.swap', next); renameSync(file + '.swap', file); }
      i += 1;
    }, 2);
    process.stdout.write('swapping\\n');`;
  const child = spawn(process.execPath, ['-e', script, file, a, b], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return child;
}

describe('an admitted driver runs the bytes that were admitted', () => {
  it('while another process swaps its file for code never admitted, 25 restarts never run that code', async () => {
    const good = driverFile();
    const evil = driverFile('NOT ADMITTED');
    const goodCopy = `${good.file}.admitted`;
    writeFileSync(goodCopy, good.text);
    const { hub } = hubFor({ command: [process.execPath, good.file], integrity: { file: good.file, sha256: good.sha } });
    const swap = swapper(good.file, goodCopy, evil.file);
    await new Promise((r) => swap.stdout!.once('data', r));

    const summaries: string[] = [];
    let refused = 0;
    for (let i = 0; i < 25; i++) {
      const status = await hub.restartDriver('notes', 'alice');
      if (status.state === 'running') summaries.push(hub.drivers().find((d) => d.id === 'notes')!.summary);
      else {
        expect(status).toMatchObject({ state: 'refused', admission: 'mismatch' });
        expect(status.error).toMatch(/integrity check failed|cannot be read/);
        refused += 1;
      }
    }
    swap.kill('SIGKILL');
    // Both kinds of start happened (the swap was live), and every run was the admitted code.
    expect(refused).toBeGreaterThan(0);
    expect(summaries.length).toBeGreaterThan(0);
    expect(new Set(summaries)).toEqual(new Set([ADMITTED_SUMMARY]));
  });

  it("runs a private copy in the hub's data dir, readable by the hub alone, whose bytes are the admitted ones", async () => {
    const good = driverFile();
    const { hub, dir } = hubFor({ command: [process.execPath, good.file], integrity: { file: good.file, sha256: good.sha } });
    await hub.listChannels();
    const copy = join(dir, 'admitted-drivers', 'notes', 'driver.mjs');
    expect(sha256(readFileSync(copy))).toBe(good.sha);
    expect(statSync(copy).mode & 0o777).toBe(0o400);
    expect(statSync(dirname(copy)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(copy))).mode & 0o777).toBe(0o700);
    const { pid } = (await hub.driverStatus())[0]!;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain(copy);
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(`UPLINK_DRIVER_FILE=${good.file}`);
  });

  it('runs a program admitted as the command itself from its private copy, executable by the hub alone', async () => {
    const good = driverFile();
    const program = join(dirname(good.file), 'notes-driver');
    writeFileSync(program, good.text.replace(/^#!.*\n/, `#!${process.execPath}\n`), { mode: 0o755 });
    const { hub, dir } = hubFor({ command: [program], integrity: { file: program, sha256: sha256(readFileSync(program)) } });
    expect((await hub.listChannels()).map((c) => c.channel)).toEqual(['notes:todo', 'notes:ideas']);
    const copy = join(dir, 'admitted-drivers', 'notes', 'notes-driver');
    expect(statSync(copy).mode & 0o777).toBe(0o500);
  });

  it('refuses to start when integrity.file is not in the command: the hub could not run the bytes it checked', async () => {
    const good = driverFile();
    const other = driverFile();
    const { hub } = hubFor({ command: [process.execPath, other.file], integrity: { file: good.file, sha256: good.sha } });
    expect(await hub.listChannels()).toEqual([]);
    const [status] = await hub.driverStatus();
    expect(status).toMatchObject({ state: 'refused' });
    expect(status!.error).toBe(
      `notes is not started: its integrity file ${good.file} is not in its command, so the hub cannot run the bytes it checked — hint: set integrity.file in config.json to the program or script the command runs`,
    );
  });
});

describe('admission by config', () => {
  it('is recorded in the audit once per start of the hub, with the file and hash, and shown apart from the operator', async () => {
    const good = driverFile();
    const { hub, dir } = hubFor({ command: [process.execPath, good.file], integrity: { file: good.file, sha256: good.sha } });
    expect(auditOf(hub, 'driver-admit')).toEqual([]);
    await hub.listChannels();
    await hub.restartDriver('notes', 'alice');
    expect(await hub.driverStatus()).toMatchObject([{ admission: 'admitted', admitted_by: 'config', state: 'running' }]);
    const [entry, ...more] = auditOf(hub, 'driver-admit');
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      type: 'decision',
      by: 'config',
      granted: true,
      args: { driver: 'notes', file: good.file, sha256: good.sha },
      reason: `external driver notes admitted by config: ${good.file} with sha256 ${good.sha} (written into config.json, not trusted by the operator)`,
    });
    expect(entry!.authorized).toBeUndefined();
    await hub.close();

    // The next hub on the same data dir records it again: each start of the hub says what it admitted.
    const again = createHub({ dataDir: dir, drivers: [], watchConfig: false });
    open.push(again);
    await again.listChannels();
    expect(auditOf(again, 'driver-admit')).toHaveLength(2);
  });

  it('is recorded again when the config admits other bytes', async () => {
    const good = driverFile();
    const { hub, dir } = hubFor({ command: [process.execPath, good.file], integrity: { file: good.file, sha256: good.sha } }, { watchConfig: true });
    await hub.listChannels();
    const changed = `${good.text}\n// changed\n`;
    writeFileSync(good.file, changed);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ external_drivers: [{ id: 'notes', command: [process.execPath, good.file], integrity: { file: good.file, sha256: sha256(changed) } }] }),
    );
    await expect.poll(async () => (await hub.restartDriver('notes', 'alice')).state, { timeout: 10_000 }).toBe('running');
    expect(auditOf(hub, 'driver-admit').map((e) => (e.args as { sha256: string }).sha256)).toEqual([sha256(changed), good.sha]);
  });

  it("is not what the operator's trust is: a trusted driver is admitted by the operator, in this hub and the next", async () => {
    const good = driverFile();
    const { hub, dir } = hubFor({ command: [process.execPath, good.file] });
    expect(await hub.trustDriver('notes', good.sha, 'alice')).toMatchObject({ admission: 'admitted', admitted_by: 'operator', state: 'running' });
    expect(auditOf(hub, 'driver-admit')).toEqual([]);
    await hub.close();
    const again = createHub({ dataDir: dir, drivers: [], watchConfig: false });
    open.push(again);
    await again.listChannels();
    expect(await again.driverStatus()).toMatchObject([{ admission: 'admitted', admitted_by: 'operator' }]);
    expect(auditOf(again, 'driver-admit')).toEqual([]);
  });
});
