/**
 * Another process holds the audit's write lock (BEGIN EXCLUSIVE, in a child process) for 6 s while
 * a hub answers 10 calls: every answer is in the audit once the lock is released — without a
 * restart, and after a kill -9 and a restart — in the order the calls were made, and no SQLite wait
 * blocks the hub's event loop meanwhile. Real SQLite files and a real kill -9.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { build } from 'esbuild';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { ROOT } from '../../fixtures/hub-build';
import { closeHubs, openHub } from './helpers';

const agent: AgentIdentity = { kind: 'mcp', name: 'lock-agent', version: '1' };
const LOCK_MS = 6000;

afterEach(closeHubs);

/** Holds BEGIN EXCLUSIVE on `path` from another process for `ms`; resolves once it holds it. */
async function lockFor(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const script = `const Database = require('better-sqlite3');
const db = new Database(${JSON.stringify(path)});
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
setTimeout(() => { db.exec('COMMIT'); db.close(); process.exit(0); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before locking`)));
  });
  return { released };
}

/**
 * The longest event-loop stall an idle process on this machine sees until `stop` (ms): the
 * scheduler's share of what the hub's probe measures (a loaded two-core machine stalls any
 * process for tens of ms now and then), which is not the hub blocking itself.
 */
function idleSibling(): { stop(): Promise<number> } {
  const script = `const { monitorEventLoopDelay } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
process.stdin.on('end', () => { h.disable(); process.stdout.write(String(h.max / 1e6)); });
process.stdin.resume();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.on('error', () => undefined);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    stop: async () => {
      child.stdin.end();
      await exited;
      return Number(out);
    },
  };
}

/** The texts of the `echo` calls the audit holds, in the order of their `accepted` rows. */
function audited(hub: Hub): string[] {
  return hub
    .queryAudit({ limit: 1000, op: 'echo' })
    .entries.reverse()
    .filter((e) => e.kind === 'accepted')
    .map((e) => (e.args as { text: string }).text);
}

/** Each call's entries: its invocation's kinds, for completeness (accepted … succeeded). */
function kindsOf(hub: Hub, text: string): string[] {
  const entries = hub.queryAudit({ limit: 1000, op: 'echo' }).entries.reverse();
  const inv = entries.find((e) => e.kind === 'accepted' && (e.args as { text: string }).text === text)?.invocation_id;
  return entries.filter((e) => e.invocation_id === inv).map((e) => e.kind);
}

const pendingFiles = (dir: string): string[] => {
  const pending = journalDir(join(dir, 'audit.sqlite'));
  return existsSync(pending) ? readdirSync(pending) : [];
};

describe('a 6 s exclusive lock on audit.sqlite', () => {
  it('10 calls answered during it are all in the audit once it is released, without a restart, and the event loop never blocks', async () => {
    const { hub, dir } = openHub();
    await hub.invoke('test:alpha', 'echo', { text: 'before' }, { agent });
    const { released } = await lockFor(join(dir, 'audit.sqlite'), LOCK_MS);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const sibling = idleSibling();
    const answered: string[] = [];
    const slowest: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      expect(await hub.invoke('test:alpha', 'echo', { text: `locked ${i}` }, { agent })).toEqual({ text: `locked ${i}` });
      slowest.push(performance.now() - t0);
      answered.push(`locked ${i}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    // The lock still holds: nothing of the 10 is in the table yet, all of it is in the journal.
    expect(audited(hub)).toEqual(['before']);
    await released;
    delay.disable();
    // Before, one commit held the event loop ~5 s waiting for the lock (and a call took as long).
    const stalls = await sibling.stop();
    expect(delay.max / 1e6, `the hub's longest stall (an idle process saw ${stalls} ms)`).toBeLessThan(50 + stalls);
    // A call may wait for the journal's fsync (off the event loop), never for the lock.
    expect(Math.max(...slowest)).toBeLessThan(1000);
    await vi.waitFor(() => expect(audited(hub)).toEqual(['before', ...answered]), { timeout: 5000, interval: 100 });
    for (const text of answered) expect(kindsOf(hub, text)).toEqual(['accepted', 'started', 'succeeded']);
    const report = (await hub.doctor()).audit;
    expect(report.ok, JSON.stringify(report)).toBe(true);
    await hub.close();
    expect(pendingFiles(dir)).toEqual([]);
    // Once, not twice, after a restart.
    const { hub: again } = openHub({ dir });
    expect(audited(again)).toEqual(['before', ...answered]);
  });

  describe('a hub killed (kill -9) while the lock holds, then restarted', () => {
    let fixture: string;
    const buildDir = join(ROOT, 'node_modules', '.cache', 'uplink-test-build', `audit-lock-${process.pid}`);
    let child: ChildProcess | undefined;

    beforeAll(async () => {
      mkdirSync(buildDir, { recursive: true });
      fixture = join(buildDir, 'audit-lock-hub.mjs');
      await build({
        entryPoints: [join(ROOT, 'test/fixtures/audit-lock-hub.ts')],
        outfile: fixture,
        bundle: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        external: ['electron'],
        banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
        logLevel: 'warning',
      });
    });
    afterAll(() => {
      child?.kill('SIGKILL');
      rmSync(buildDir, { recursive: true, force: true });
    });

    it('loses none of the 10 calls it answered: the restarted hub replays them, in order, once', async () => {
      const { dir } = openHub();
      await closeHubs();
      const proc = spawn(process.execPath, [fixture, dir], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
      child = proc;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      let out = '';
      const line = (prefix: string): Promise<string> =>
        new Promise((resolve, reject) => {
          const check = (): void => {
            const found = out.split('\n').find((l) => l.startsWith(prefix));
            if (found) {
              proc.stdout.off('data', onData);
              resolve(found);
            }
          };
          const onData = (d: Buffer): void => {
            out += d.toString();
            check();
          };
          proc.stdout.on('data', onData);
          proc.once('exit', (code) => reject(new Error(`the hub exited with ${code}: ${out}`)));
          check();
        });
      await line('open');
      const { released } = await lockFor(join(dir, 'audit.sqlite'), LOCK_MS);
      proc.stdin.write('go\n');
      const answered = JSON.parse((await line('answered ')).slice('answered '.length)) as string[];
      expect(answered).toHaveLength(10);
      proc.kill('SIGKILL');
      await exited;
      expect(pendingFiles(dir).length).toBeGreaterThan(0);
      await released;
      const { hub } = openHub({ dir });
      expect(audited(hub)).toEqual(['before', ...answered]);
      for (const text of answered) expect(kindsOf(hub, text)).toEqual(['accepted', 'started', 'succeeded']);
      expect(pendingFiles(dir)).toEqual([]);
    });
  });
});
