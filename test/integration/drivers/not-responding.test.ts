/**
 * A driver whose process runs but answers nothing (SIGSTOP): the hub's ping notices within a few
 * seconds, calls fail at once instead of each waiting out its deadline, requests left unanswered
 * are marked in the trace, doctor stays quick, and the driver is running again once it answers.
 * A real hub and the plain Node notes driver (test/fixtures/external/notes-driver.mjs).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { tmpDataDir } from '../../fixtures/hub-build';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external', 'notes-driver.mjs');
const SHA = createHash('sha256').update(readFileSync(DRIVER)).digest('hex');
const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', version: '2.1.0' };
const open: Hub[] = [];
const stopped: number[] = [];

afterEach(async () => {
  // A stopped process would hold its hub's close until SIGKILL: let it run again first.
  for (const pid of stopped.splice(0)) signal(pid, 'SIGCONT');
  await Promise.all(open.splice(0).map((h) => h.close()));
});

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}

function hubWith(driverTimeoutMs?: number): Hub {
  const dir = tmpDataDir();
  const entry = { id: 'notes', command: [process.execPath, DRIVER], integrity: { file: DRIVER, sha256: SHA } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [entry] }));
  const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false, ...(driverTimeoutMs ? { driverTimeoutMs } : {}) });
  open.push(hub);
  return hub;
}

/** Starts the driver and stops its process with SIGSTOP; resolves with its pid. */
async function stopDriver(hub: Hub): Promise<number> {
  expect(await hub.invoke('notes:todo', 'read', {}, { agent })).toEqual({ text: 'buy milk' });
  const pid = (await hub.driverStatus())[0]!.pid!;
  signal(pid, 'SIGSTOP');
  stopped.push(pid);
  return pid;
}

const stateOf = async (hub: Hub): Promise<string> => (await hub.driverStatus())[0]!.state;

async function elapsed<T>(work: () => Promise<T>): Promise<{ ms: number; value?: T; error?: Error }> {
  const started = Date.now();
  try {
    const value = await work();
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error: error as Error };
  }
}

describe('a driver that stops answering', () => {
  it('is not responding within a few seconds, with its last answer and since when, and calls fail at once', async () => {
    const hub = hubWith();
    const stoppedAt = Date.now();
    await stopDriver(hub);
    await expect.poll(() => stateOf(hub), { timeout: 6000, interval: 100 }).toBe('not_responding');
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    const [status] = await hub.driverStatus();
    expect(status!.last_answer).toMatchObject({ method: expect.any(String) });
    expect(status!.last_answer!.at).toBeLessThanOrEqual(status!.not_responding_since!);
    expect(status!.error).toMatch(/^notes is not responding: .* — hint: .*uplink drivers restart notes/);

    const call = await elapsed(() => hub.invoke('notes:ideas', 'read', {}, { agent }));
    expect(call.ms).toBeLessThan(1000);
    expect((call.error as { rendered?: string }).rendered).toMatch(/^uplink error \[notes:Unavailable\]: notes is not responding.* — hint: /);
    const listed = await elapsed(() => hub.listChannels());
    expect(listed.ms).toBeLessThan(1000);
  });

  it('fails the call in flight once it is found not responding, marked unanswered in the trace', async () => {
    const hub = hubWith();
    await stopDriver(hub);
    const call = await elapsed(() => hub.invoke('notes:todo', 'read', {}, { agent }));
    expect(call.ms).toBeLessThan(6000);
    expect(call.error?.message).toMatch(/not responding/);
    const marks = hub.driverTrace('notes').filter((t) => t.type === 'unanswered');
    expect(marks).toHaveLength(1);
    expect(marks[0]).toMatchObject({ method: 'invoke', summary: expect.stringMatching(/^no answer after \d+ ms$/) });
    const request = hub.driverTrace('notes', { id: marks[0]!.id }).find((t) => t.dir === 'out');
    expect(request).toMatchObject({ type: 'request', method: 'invoke' });
  });

  it('keeps doctor within 3 s, reporting the stopped driver not responding, before and after it is found so', async () => {
    const hub = hubWith();
    await stopDriver(hub);
    const early = await elapsed(() => hub.doctor());
    expect(early.ms).toBeLessThan(3000);
    const report = early.value!.drivers.find((d) => d.driver === 'notes')!;
    expect(report.ok).toBe(false);
    expect(report.lines.join('\n')).toMatch(/not responding/);
    await expect.poll(() => stateOf(hub), { timeout: 6000, interval: 100 }).toBe('not_responding');
    const late = await elapsed(() => hub.doctor());
    expect(late.ms).toBeLessThan(3000);
    expect(late.value!.drivers.find((d) => d.driver === 'notes')!.lines.join('\n')).toMatch(/notes is not responding/);
  });

  it('is running again once it answers (SIGCONT), and its calls work', async () => {
    const hub = hubWith();
    const pid = await stopDriver(hub);
    await expect.poll(() => stateOf(hub), { timeout: 6000, interval: 100 }).toBe('not_responding');
    signal(pid, 'SIGCONT');
    await expect.poll(() => stateOf(hub), { timeout: 4000, interval: 100 }).toBe('running');
    const [status] = await hub.driverStatus();
    expect(status!.pid).toBe(pid);
    expect(status!.error).toBeUndefined();
    expect(await hub.invoke('notes:ideas', 'read', {}, { agent })).toEqual({ text: 'a driver per tool' });
  });

  it('restarts a stopped driver quickly, saying each step', async () => {
    const hub = hubWith();
    const pid = await stopDriver(hub);
    await expect.poll(() => stateOf(hub), { timeout: 6000, interval: 100 }).toBe('not_responding');
    const steps: string[] = [];
    const restart = await elapsed(() => hub.restartDriver('notes', 'alice', (s) => steps.push(s)));
    expect(restart.ms).toBeLessThan(3000);
    expect(restart.value).toMatchObject({ state: 'running' });
    expect(restart.value!.pid).not.toBe(pid);
    expect(steps).toEqual([
      `stopping notes (pid ${pid})…`,
      expect.stringMatching(/^stopped in [\d.]+ s: killed \(SIGKILL: it was not responding\)$/),
      'starting notes…',
    ]);
  });
});

describe('a request left unanswered', () => {
  it('is marked in the trace with how long the hub waited', async () => {
    const hub = hubWith(400);
    const call = await elapsed(() => hub.invoke('notes:todo', 'hang', {}, { agent }));
    expect(call.error).toBeDefined();
    const mark = hub.driverTrace('notes').find((t) => t.type === 'unanswered');
    expect(mark).toMatchObject({ dir: 'in', method: 'invoke', ms: 400, summary: 'no answer after 400 ms' });
    // The driver still answers its pings: it stays running.
    expect(await stateOf(hub)).toBe('running');
  });
});
