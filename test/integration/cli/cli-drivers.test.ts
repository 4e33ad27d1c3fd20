/**
 * `uplink drivers` through the running hub: status lines, trust (confirmed on a terminal, or with
 * the checked hash in a script; a hash the file no longer has is refused) and restart, each in the
 * audit. The notes fixture is a real out-of-process driver in `external_drivers`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildForTests, cliEnv, ROOT, runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

const DRIVER = join(ROOT, 'test', 'fixtures', 'external', 'notes-driver.mjs');
const SHA = createHash('sha256').update(readFileSync(DRIVER)).digest('hex');

let b: TestBuild;
let served: Served;
let dir: string;
const cli = (...args: string[]) => runCli(b, dir, args);

beforeAll(async () => {
  b = await buildForTests();
  dir = tmpDataDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [{ id: 'notes', command: [process.execPath, DRIVER] }] }));
  served = await startServe(b, dir);
}, 60_000);

afterAll(async () => {
  await served?.stop();
});

/** `uplink <args>` on a pseudo-terminal (util-linux `script`), typing `input`. */
function onTerminal(args: string[], input: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, b.launcher, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: cliEnv(b, dir), cwd: ROOT });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('[y/N]') && input) {
        child.stdin.write(input);
        input = '';
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

describe('uplink drivers', () => {
  it('lists an untrusted driver with how to trust it, before and after something tried to start it', async () => {
    const fresh = await cli('drivers');
    expect(fresh.stdout).toMatch(/^notes\s+idle\s+restarts 0\s+untrusted/m);
    expect(fresh.stdout).toContain('trust it with `uplink drivers trust notes`');
    await cli('channels');
    const r = await cli('drivers');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^notes\s+refused\s+restarts 0\s+untrusted/m);
    expect(r.stdout).toContain(`command  ${process.execPath} ${DRIVER}`);
    expect(r.stdout).toContain('trust it with `uplink drivers trust notes`');
    const json = JSON.parse((await cli('drivers', '--json')).stdout) as Array<{ id: string; admission: string; integrity: { file?: string; actual?: string } }>;
    expect(json[0]).toMatchObject({ id: 'notes', admission: 'untrusted', integrity: { file: DRIVER, actual: SHA } });
  });

  it('will not trust without a confirmation: off a terminal a script must pass --yes and the hash it checked', async () => {
    const asked = await cli('drivers', 'trust', 'notes');
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain('drivers trust asks for confirmation on a terminal — hint: in a script pass --yes --sha256 <hex>');
    const blind = await cli('drivers', 'trust', 'notes', '--yes');
    expect(blind.code).toBe(2);
    expect(blind.stderr).toContain('drivers trust --yes needs --sha256 <hex>');
    const bad = await cli('drivers', 'trust', 'notes', '--yes', '--sha256', 'nothex');
    expect(bad.code).toBe(2);
  });

  it('refuses a hash the file does not have, naming both', async () => {
    const stale = 'f'.repeat(64);
    const r = await cli('drivers', 'trust', 'notes', '--yes', '--sha256', stale);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`uplink error [notes:Rejected]: ${DRIVER} changed since you saw it: its sha256 is now ${SHA}, you were shown ${stale}`);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).external_drivers[0].integrity).toBeUndefined();
  });

  it('a restart that leaves the driver not running says so, and exits 1', async () => {
    const r = await cli('drivers', 'restart', 'notes');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^notes restarted, but it is not running \(refused\):\nnotes\s+refused/);
  });

  it('on a terminal shows the command, file and hash, and "no" trusts nothing', async () => {
    const r = await onTerminal(['drivers', 'trust', 'notes'], 'n\n');
    expect(r.out).toContain(`file     ${DRIVER}`);
    expect(r.out).toContain(`sha256   ${SHA}`);
    expect(r.out).toContain('notes not trusted');
    expect(r.code).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).external_drivers[0].integrity).toBeUndefined();
  });

  it('on a terminal "y" trusts the hash shown; the driver starts and its channels appear', async () => {
    const r = await onTerminal(['drivers', 'trust', 'notes'], 'y\n');
    expect(r.out).toContain('notes trusted, running:');
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).external_drivers[0].integrity).toEqual({ file: DRIVER, sha256: SHA });
    const status = await cli('drivers');
    expect(status.stdout).toMatch(/^notes\s+running\s+pid \d+\s+protocol 3\s+restarts \d+\s+admitted by the operator$/m);
    expect((await cli('channels')).stdout).toContain('notes:todo');
  });

  it('restarts a driver: a new process, recorded in the audit with who did it', async () => {
    const before = (JSON.parse((await cli('drivers', '--json')).stdout) as Array<{ pid: number }>)[0]!.pid;
    const r = await cli('drivers', 'restart', 'notes');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^notes restarted, running:\nnotes\s+running\s+pid (\d+)/);
    expect(Number(/pid (\d+)/.exec(r.stdout)![1])).not.toBe(before);
    // Each step on stderr as it happens; stdout keeps the result alone.
    expect(r.stderr).toMatch(new RegExp(`^stopping notes \\(pid ${before}\\)…\nstopped in [\\d.]+ s: it exited\nstarting notes…\n$`));
    const log = (await cli('log', '--op', 'driver-restart')).stdout;
    expect(log).toContain('driver-restart');
    expect((await cli('log', '--op', 'driver-trust')).stdout).toContain(SHA);
    const unknown = await cli('drivers', 'restart', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no external driver nope runs in this hub');
  });
  it('lists a stopped driver as not responding with its last answer, and restarts it at once', async () => {
    const { pid } = (JSON.parse((await cli('drivers', '--json')).stdout) as Array<{ pid: number }>)[0]!;
    process.kill(pid, 'SIGSTOP');
    try {
      await expect.poll(async () => (await cli('drivers')).stdout, { timeout: 8000, interval: 300 }).toMatch(/^notes\s+not responding\s+pid \d+/m);
      const r = await cli('drivers');
      expect(r.stdout).toMatch(/^ {4}answered \d{4}-\d\d-\d\dT[\d:.]+Z {2}\w+ \(its last answer\)$/m);
      expect(r.stdout).toMatch(/^ {4}error {4}notes is not responding: .* — hint: /m);
      // doctor bounds each driver's check: the stopped one is reported, not waited for.
      const asked = Date.now();
      const doctor = await cli('doctor');
      expect(Date.now() - asked).toBeLessThan(3000);
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toContain('notes is not responding');
      const started = Date.now();
      const restart = await cli('drivers', 'restart', 'notes');
      expect(Date.now() - started).toBeLessThan(5000);
      expect(restart.code).toBe(0);
      expect(restart.stderr).toContain(`stopping notes (pid ${pid})…\nstopped in`);
      expect(restart.stderr).toContain('killed (SIGKILL: it was not responding)\nstarting notes…');
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // killed by the restart
      }
    }
  });
});

describe('uplink drivers with hub.drivers', () => {
  it('lists a configured driver that hub.drivers leaves out as off, saying how to turn it on', async () => {
    const d = tmpDataDir();
    writeFileSync(
      join(d, 'config.json'),
      JSON.stringify({ hub: { drivers: ['tmux'] }, external_drivers: [{ id: 'notes', command: [process.execPath, DRIVER] }] }),
    );
    const r = await runCli(b, d, ['drivers']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('no out-of-process drivers');
    expect(r.stdout).toMatch(/^notes\s+off\s+restarts 0/m);
    expect(r.stdout).toContain('left out by hub.drivers in config.json — hint: add "notes" to hub.drivers and restart the hub');
  });
});
