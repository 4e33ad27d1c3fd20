/**
 * The host of an out-of-process driver on its own (no hub, no admission): what it does when the
 * driver misbehaves, how it waits between crashes, and how it stops one that will not stop.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ExternalDriver } from '../../../src/main/drivers';
import type { DriverError, ExternalDriverOptions } from '../../../src/main/drivers';
import { protocolCheck } from '../../../src/main/hub/driver-admin/external';
import { failure } from '../../fixtures/failure';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external', 'notes-driver.mjs');
const made: ExternalDriver[] = [];

afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => d.dispose()));
});

function host(args: string[] = [], options: Partial<ExternalDriverOptions> = {}): ExternalDriver {
  const d = new ExternalDriver({ id: 'notes', check: protocolCheck, command: [process.execPath, DRIVER, ...args], cwd: dirname(DRIVER), ...options });
  made.push(d);
  return d;
}

describe('ExternalDriver', () => {
  it('takes info, ops and extensions from the handshake, and binds only the extensions offered', async () => {
    const d = host();
    expect(d.ops()).toEqual([]);
    await d.ensureStarted();
    expect(d.info()).toEqual({ id: 'notes', kind: 'capability', summary: 'Notes kept in memory' });
    expect(d.ops().map((o) => o.op)).toContain('read');
    expect(d.preview).toBeUndefined();
    expect(d.precheck).toBeUndefined();
    expect(d.status()).toMatchObject({ state: 'running', admission: 'unchecked', extensions: ['shutdown'] });
  });

  it('fails the call in flight when the driver answers an id it was never asked', async () => {
    const d = host();
    const err = await failure<DriverError>(d.invoke('todo', 'stray', {}));
    expect(err.kind).toBe('Unavailable');
    expect(err.message).toBe('notes answered id 9999, which it was never asked');
    expect(await d.invoke('todo', 'read', {})).toEqual({ text: 'buy milk' });
  });

  it('keeps the last 200 stderr lines, each cut', async () => {
    const d = host();
    await d.invoke('todo', 'noise', {});
    await expect.poll(() => d.status().stderr.at(-1)).toMatch(/^line 299 /);
    const { stderr } = d.status();
    expect(stderr).toHaveLength(200);
    expect(stderr[0]).toMatch(/^line 100 /);
    expect(Math.max(...stderr.map((l) => l.length))).toBeLessThan(600);
  });

  it('waits 0.5 s after a crash, doubling per crash in a row, and says so at once when the wait is long', async () => {
    const d = host();
    await failure<DriverError>(d.invoke('todo', 'crash', {}));
    const first = d.status();
    expect(first.state).toBe('backoff');
    expect(first.next_start_at! - first.last_exit!.at).toBeGreaterThanOrEqual(400);
    expect(first.next_start_at! - first.last_exit!.at).toBeLessThanOrEqual(600);
    await failure<DriverError>(d.invoke('todo', 'crash', {}));
    const second = d.status();
    expect(second.next_start_at! - second.last_exit!.at).toBeGreaterThanOrEqual(900);
    expect(second.restarts).toBe(1);
    await failure<DriverError>(d.invoke('todo', 'crash', {}));
    const err = await failure<DriverError>(d.invoke('todo', 'read', {}));
    expect(err.message).toMatch(/^notes crashed 3 times in a row; it is started again in 2 s/);
  });

  it('ends a driver that ignores the end of stdin and SIGTERM with SIGKILL', async () => {
    const d = host(['--stubborn'], { stopGraceMs: 200 });
    await d.ensureStarted();
    const { pid } = d.status();
    await d.dispose();
    expect(() => process.kill(pid!, 0)).toThrow();
    expect(d.status().stderr).toContain('ignoring SIGTERM');
    expect(d.status().last_exit).toMatchObject({ signal: 'SIGKILL' });
  });

  it('leaves no timer behind once a driver that stops at once is stopped, so the process can exit', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const d = host();
    await d.ensureStarted();
    const before = timers();
    await d.dispose();
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('fails each hanging call at its own deadline, answers the others meanwhile, and leaves no timer running after', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const d = host([], { callTimeoutMs: 400 });
    await d.ensureStarted();
    const before = timers();
    const t0 = Date.now();
    const first = failure<DriverError>(d.invoke('todo', 'hang', {}));
    await new Promise((r) => setTimeout(r, 200));
    const second = failure<DriverError>(d.invoke('todo', 'hang', {}));
    expect(await d.invoke('todo', 'read', {})).toEqual({ text: 'buy milk' });
    expect((await first).message).toBe('notes did not answer invoke within 0.4 s');
    const firstAt = Date.now() - t0;
    expect((await second).kind).toBe('Timeout');
    const secondAt = Date.now() - t0;
    expect(firstAt).toBeGreaterThanOrEqual(400);
    // The second's deadline is its own, 200 ms after the first's.
    expect(secondAt).toBeGreaterThanOrEqual(600);
    expect(secondAt - firstAt).toBeGreaterThanOrEqual(150);
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('says which program could not be started', async () => {
    const d = new ExternalDriver({ id: 'notes', check: protocolCheck, command: ['/nonexistent/driver'], cwd: dirname(DRIVER) });
    made.push(d);
    const err = await failure<DriverError>(d.channels());
    expect(err.kind).toBe('Unavailable');
    expect(err.message).toBe('notes could not be started (ENOENT: /nonexistent/driver)');
    expect((await d.doctor()).ok).toBe(false);
  });

  it('checks what a driver answers against the protocol schema, and says where it differs', async () => {
    const broken = (name: string): string => join(dirname(DRIVER), 'broken', `${name}.mjs`);
    const doctorShape = new ExternalDriver({ id: 'probe', check: protocolCheck, command: [process.execPath, broken('doctor-shape')], cwd: dirname(DRIVER) });
    made.push(doctorShape);
    const err = await failure<DriverError>(doctorShape.doctor());
    expect([err.kind, err.message]).toEqual([
      'Upstream',
      'probe answered doctor with something other than a DoctorReport: / lacks the property "driver" (required)',
    ]);
    const recvShape = new ExternalDriver({
      id: 'probe',
      check: protocolCheck,
      command: [process.execPath, broken('recv-shape'), '--kind', 'both'],
      cwd: dirname(DRIVER),
    });
    made.push(recvShape);
    expect((await failure<DriverError>(recvShape.recv())).message).toBe(
      'probe answered recv with something other than a RecvBatch: / lacks the property "items" (required)',
    );
    // The same driver's good answers pass.
    expect(await doctorShape.channels()).toEqual([{ channel: 'probe:main', labels: ['main'], detail: {} }]);
  });

  it('reports the protocol version the running process agreed to, and none while no process that agreed runs', async () => {
    // The fixture driver, speaking the version a file names when it starts.
    const dir = mkdtempSync(join(tmpdir(), 'uplink-speaks-'));
    const speaks = join(dir, 'speaks');
    const wrapper = join(dir, 'driver.mjs');
    writeFileSync(
      wrapper,
      `import { readFileSync } from 'node:fs';\nprocess.argv.push('--speaks', readFileSync(${JSON.stringify(speaks)}, 'utf8'));\nawait import(${JSON.stringify(pathToFileURL(DRIVER).href)});\n`,
    );
    const d = new ExternalDriver({ id: 'notes', check: protocolCheck, command: [process.execPath, wrapper], cwd: dir, backoffMs: 10 });
    made.push(d);

    writeFileSync(speaks, '2');
    expect((await failure<DriverError>(d.ensureStarted())).message).toBe('notes is not used: it speaks driver protocol 2, this Uplink speaks 3');
    expect(d.status().state).toBe('incompatible');
    expect(d.status()).not.toHaveProperty('protocol_version');

    writeFileSync(speaks, '3');
    await d.restart();
    expect(d.status()).toMatchObject({ state: 'running', protocol_version: '3' });
    expect((await d.doctor()).lines.at(-1)).toMatch(/, protocol 3, /);

    await failure<DriverError>(d.invoke('todo', 'crash', {}));
    expect(d.status().state).toBe('backoff');
    expect(d.status()).not.toHaveProperty('protocol_version');

    writeFileSync(speaks, '2');
    await failure<DriverError>(d.restart());
    expect(d.status()).toMatchObject({ state: 'incompatible' });
    expect(d.status()).not.toHaveProperty('protocol_version');
  });

  it('masks args flagged sensitive in the trace', async () => {
    const d = host();
    await d.ensureStarted();
    await d.invoke('todo', 'read', { text: 'hunter2', sensitive: true });
    const out = d.trace({ method: 'invoke' }).find((t) => t.dir === 'out')!;
    expect(out.summary).not.toContain('hunter2');
    expect(d.trace({ method: 'invoke', limit: 1 })).toHaveLength(1);
  });

  it('with the ping on: not responding while stopped, calls failing at once, and running again when it answers, an error answer included', async () => {
    for (const args of [[], ['--no-info']]) {
      const d = host(args, { ping: { intervalMs: 100, timeoutMs: 400 } });
      await d.ensureStarted();
      await new Promise((r) => setTimeout(r, 600));
      expect(d.status().state).toBe('running');
      const pid = d.status().pid!;
      process.kill(pid, 'SIGSTOP');
      try {
        await expect.poll(() => d.status().state, { timeout: 3000, interval: 50 }).toBe('not_responding');
        expect(d.status().last_answer?.method).toBe('info');
        const started = Date.now();
        const err = await failure<DriverError>(d.invoke('todo', 'read', {}));
        expect(Date.now() - started).toBeLessThan(200);
        expect(err.kind).toBe('Unavailable');
        expect(err.message).toMatch(/^notes is not responding: /);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await expect.poll(() => d.status().state, { timeout: 3000, interval: 50 }).toBe('running');
      expect(await d.invoke('todo', 'read', {})).toEqual({ text: 'buy milk' });
      // The pings stay out of the trace.
      expect(d.trace({ method: 'info' })).toEqual([]);
    }
  });
});
