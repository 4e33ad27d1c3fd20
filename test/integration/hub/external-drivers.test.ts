/**
 * Out-of-process drivers in a real hub: a plain Node driver written from docs/driver-protocol.md
 * (test/fixtures/external/notes-driver.mjs) configured in `external_drivers`, admitted by its hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { dispatchCall } from '../../../src/main/edges/panel/dispatch';
import type { CallOutcome } from '../../../src/main/edges/panel/dispatch';
import { checkResponse } from '../../../src/main/edges/panel/validate';
import type { PanelMethod } from '../../../src/shared/panel-api';
import { tmpDataDir } from '../../fixtures/hub-build';
import { failure, nextPrompt } from './helpers';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external', 'notes-driver.mjs');
const SHA = createHash('sha256').update(readFileSync(DRIVER)).digest('hex');
const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', version: '2.1.0' };
const open: Hub[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

/** A hub whose config.json has the notes driver (admitted unless `integrity` says otherwise). */
function hubWith(
  options: { integrity?: { file: string; sha256: string } | null; args?: string[]; driverTimeoutMs?: number; extra?: Record<string, unknown> } = {},
): { hub: Hub; dir: string } {
  const dir = tmpDataDir();
  const integrity = options.integrity === undefined ? { file: DRIVER, sha256: SHA } : options.integrity;
  const entry = { id: 'notes', command: [process.execPath, DRIVER, ...(options.args ?? [])], ...(integrity ? { integrity } : {}) };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [entry], ...options.extra }));
  const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false, ...(options.driverTimeoutMs ? { driverTimeoutMs: options.driverTimeoutMs } : {}) });
  open.push(hub);
  return { hub, dir };
}

async function stderrOf(hub: Hub): Promise<string[]> {
  return (await hub.driverStatus())[0]!.stderr;
}

describe('external drivers', () => {
  it('lists its channels and runs its read-only ops', async () => {
    const { hub } = hubWith();
    expect((await hub.listChannels()).map((c) => c.channel)).toEqual(['notes:todo', 'notes:ideas']);
    expect(await hub.invoke('notes:todo', 'read', {}, { agent, expect: 'read_only' })).toEqual({ text: 'buy milk' });
    const [status] = await hub.driverStatus();
    expect(status).toMatchObject({ id: 'notes', state: 'running', admission: 'admitted', protocol_version: '3', restarts: 0, extensions: ['shutdown'] });
    expect(status!.pid).toBeGreaterThan(0);
  });

  it('runs an op on the first call, before anything listed its channels', async () => {
    const { hub } = hubWith();
    expect(await hub.invoke('notes:ideas', 'read', {}, { agent })).toEqual({ text: 'a driver per tool' });
  });

  it('makes mutating ops wait for the operator', async () => {
    const { hub } = hubWith();
    await hub.listChannels();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('notes:todo', 'write', { text: 'buy bread', secret: 'hunter2' }, { agent, expect: 'mutating' });
    const p = await prompt;
    expect(p).toMatchObject({ channel: 'notes:todo', op: 'write' });
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ written: 9 });
    // The trace keeps the op's sensitive_args masked.
    const sent = hub.driverTrace('notes', { method: 'invoke' }).filter((t) => t.dir === 'out');
    expect(sent.at(-1)!.summary).toContain('buy bread');
    expect(sent.at(-1)!.summary).not.toContain('hunter2');
  });

  it("shows the driver's preview in the prompt, and its precheck refuses a call before anyone is asked", async () => {
    const { hub } = hubWith({ args: ['--checks'] });
    await hub.listChannels();
    hub.attachPanel();
    const refused = await failure(hub.invoke('notes:todo', 'write', { text: 'forbidden' }, { agent }));
    expect(refused.rendered).toBe('uplink error [notes:Rejected]: that text is not allowed here — hint: write something else');
    const prompt = nextPrompt(hub);
    const call = hub.invoke('notes:todo', 'write', { text: 'fine' }, { agent });
    const p = await prompt;
    expect(p.preview).toEqual({ text: 'write note todo' });
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ written: 4 });
  });

  it("renders the driver's own errors with the configured id", async () => {
    const { hub } = hubWith();
    const err = await failure(hub.invoke('notes:todo', 'missing', {}, { agent }));
    expect(err.rendered).toBe('uplink error [notes:NotFound]: no such page — hint: ask for another page');
  });

  it('fails only the call in flight when the driver crashes, and the next call starts it again', async () => {
    const { hub } = hubWith();
    await hub.listChannels();
    const err = await failure(hub.invoke('notes:todo', 'crash', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[notes:Unavailable\]: notes exited with code 3; its last stderr line: about to fall over — hint: /);
    expect(await hub.invoke('notes:todo', 'read', {}, { agent })).toEqual({ text: 'buy milk' });
    const [status] = await hub.driverStatus();
    expect(status).toMatchObject({ state: 'running', restarts: 1, last_exit: { code: 3, reason: 'exited with code 3' } });
  });

  it('fails a call past its deadline as Timeout and sends the driver cancel', async () => {
    const { hub } = hubWith({ driverTimeoutMs: 400 });
    // Starting node may take longer than the 400 ms bound of one listing on a busy machine: wait until it is up.
    await expect.poll(async () => (await hub.listChannels()).length, { timeout: 15_000, interval: 200 }).toBeGreaterThan(0);
    const err = await failure(hub.invoke('notes:todo', 'hang', {}, { agent }));
    expect(err.kind).toBe('Timeout');
    expect(err.rendered).toMatch(/^uplink error \[notes:Timeout\]/);
    const [, hung, deadline] = /^hanging on (\d+) \(deadline_ms (\d+)\)$/.exec((await stderrOf(hub)).find((l) => l.startsWith('hanging on '))!)!;
    expect(deadline).toBe('400');
    await expect.poll(() => stderrOf(hub)).toContain(`cancel ${hung}`);
    expect(await hub.invoke('notes:todo', 'read', {}, { agent })).toEqual({ text: 'buy milk' });
  });

  it('treats a line that is not JSON-RPC as a broken driver: the call fails, the next one works', async () => {
    const { hub } = hubWith();
    await hub.listChannels();
    const err = await failure(hub.invoke('notes:todo', 'garbage', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[notes:Unavailable\]: notes wrote a line that is not JSON: "this is not json"/);
    expect(await hub.invoke('notes:todo', 'read', {}, { agent })).toEqual({ text: 'buy milk' });
  });

  it('refuses a driver whose file changed, naming integrity and both hashes in doctor', async () => {
    const wrong = '0'.repeat(64);
    const { hub } = hubWith({ integrity: { file: DRIVER, sha256: wrong } });
    expect(await hub.listChannels()).toEqual([]);
    const doctor = await hub.doctor();
    expect(doctor.ok).toBe(false);
    const report = doctor.drivers.find((d) => d.driver === 'notes')!;
    expect(report.ok).toBe(false);
    expect(report.lines.join('\n')).toMatch(/integrity/);
    expect(report.lines.join('\n')).toContain(wrong);
    expect(report.lines.join('\n')).toContain(SHA);
    const err = await failure(hub.invoke('notes:todo', 'read', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[notes:Unavailable\]: notes is not started: integrity check failed/);
    expect((await hub.driverStatus())[0]).toMatchObject({ admission: 'mismatch', state: 'refused' });
  });

  it('does not start an untrusted driver; trusting it in the panel with the hash the operator saw admits it', async () => {
    const { hub, dir } = hubWith({ integrity: null });
    expect(await hub.listChannels()).toEqual([]);
    const report = (await hub.doctor()).drivers.find((d) => d.driver === 'notes')!;
    expect(report.ok).toBe(false);
    expect(report.lines[0]).toMatch(/waits for the operator to trust it/);
    // The operator's side, as the panel calls it: status shows the file and its hash, trust admits it.
    const session = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
    const call = async (method: PanelMethod, params: unknown): Promise<CallOutcome> => {
      const out = await dispatchCall(session.handlers, method, params);
      if (out.ok) expect(checkResponse(method, out.result)).toMatchObject({ ok: true });
      return out;
    };
    const listed = await call('driverStatus', {});
    expect(listed).toMatchObject({ ok: true, result: [{ id: 'notes', admission: 'untrusted', integrity: { file: DRIVER, actual: SHA } }] });
    expect((listed as { result: Array<{ pid?: number }> }).result[0]!.pid).toBeUndefined();

    const refused = await call('trustDriver', { driver: 'notes', sha256: '1'.repeat(64) });
    expect(refused).toMatchObject({ ok: false, error: { message: expect.stringMatching(/changed since you saw it/) } });
    const trusted = await call('trustDriver', { driver: 'notes', sha256: SHA });
    expect(trusted).toMatchObject({ ok: true, result: { admission: 'admitted', state: 'running' } });
    expect(await call('driverTrace', { driver: 'notes', method: 'initialize' })).toMatchObject({
      ok: true,
      result: [
        { dir: 'out', type: 'request', method: 'initialize' },
        { dir: 'in', type: 'response', method: 'initialize' },
      ],
    });
    session.close();
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).external_drivers[0].integrity).toEqual({ file: DRIVER, sha256: SHA });
    expect((await hub.listChannels()).map((c) => c.channel)).toEqual(['notes:todo', 'notes:ideas']);
  });

  it('says an entry waits for trust before anything started it, and never calls an admitted idle one untrusted', async () => {
    const { hub } = hubWith({ integrity: null });
    expect(await hub.driverStatus()).toMatchObject([{ id: 'notes', state: 'idle', admission: 'untrusted', integrity: { file: DRIVER, actual: SHA } }]);
    const admitted = hubWith({});
    expect(await admitted.hub.driverStatus()).toMatchObject([{ id: 'notes', state: 'idle', admission: 'unchecked' }]);
  });

  it('reports a driver that speaks another protocol version, with both versions', async () => {
    const { hub } = hubWith({ args: ['--speaks', '2'] });
    const report = (await hub.doctor()).drivers.find((d) => d.driver === 'notes')!;
    expect(report.ok).toBe(false);
    expect(report.lines[0]).toMatch(/notes is not used: it speaks driver protocol 2, this Uplink speaks 3/);
    expect((await hub.driverStatus())[0]).toMatchObject({ state: 'incompatible' });
  });

  it('reports the versions a driver lists in its refusal of initialize', async () => {
    const { hub } = hubWith({ args: ['--unsupported'] });
    const err = await failure(hub.invoke('notes:todo', 'read', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[notes:Unavailable\]: notes is not used: it speaks driver protocol 2, this Uplink speaks 3/);
  });

  it('refuses a driver whose info.id is not the configured id', async () => {
    const { hub } = hubWith({ args: ['--id', 'other'] });
    const report = (await hub.doctor()).drivers.find((d) => d.driver === 'notes')!;
    expect(report.lines[0]).toMatch(/calls itself "other", but the config names it "notes"/);
  });

  it('refuses an external driver with a built-in id as a config error', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [{ id: 'tmux', command: ['x'] }] }));
    const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false });
    open.push(hub);
    const { config } = await hub.doctor();
    expect(config.ok).toBe(false);
    expect(config.error).toMatch(/\/external_drivers\/0\/id "tmux" is a built-in driver's id — hint: /);
    expect(await hub.driverStatus()).toEqual([]);
  });

  it('runs only the drivers hub.drivers lists, external ones included', async () => {
    const { hub } = hubWith({ extra: { hub: { drivers: ['tmux'] } } });
    // Listed as off (never started), so an operator sees why its channels are missing.
    expect(await hub.driverStatus()).toEqual([expect.objectContaining({ id: 'notes', state: 'off', restarts: 0 })]);
    expect((await hub.doctor()).disabled).toEqual(['notes']);
    expect((await hub.listChannels()).some((c) => c.channel.startsWith('notes:'))).toBe(false);
  });

  it('offers the ops a driver declares after a restart', async () => {
    const extra = join(tmpDataDir(), 'extra-op');
    const { hub } = hubWith({ args: ['--extra-op-file', extra] });
    await hub.listChannels();
    expect((await failure(hub.invoke('notes:todo', 'shout', {}, { agent }))).rendered).toMatch(/^uplink error \[notes:NotFound\]: notes has no op "shout"/);
    writeFileSync(extra, 'shout');
    await hub.restartDriver('notes', 'alice');
    expect(await hub.invoke('notes:todo', 'shout', {}, { agent })).toEqual({ op: 'shout' });
    expect(hub.providers().find((p) => p.driver === 'notes')!.capabilities).toContain('notes.shout');
  });

  it('restarts a driver for the operator and stops it with the hub', async () => {
    const { hub } = hubWith();
    await hub.listChannels();
    const before = (await hub.driverStatus())[0]!.pid!;
    const after = await hub.restartDriver('notes', 'alice');
    expect(after).toMatchObject({ state: 'running', restarts: 1 });
    expect(after.pid).not.toBe(before);
    await hub.close();
    expect(() => process.kill(after.pid!, 0)).toThrow();
  });
});

describe('the environment an external driver gets', () => {
  it("is the hub's, without an agent token or the conformance kit's switch", async () => {
    const { driverEnv } = await import('../../../src/main/hub/driver-admin/external');
    expect(driverEnv({ PATH: '/bin', HOME: '/h', UPLINK_AGENT_TOKEN: 'secret', UPLINK_DRIVER_CHECK: '1', UPLINK_DATA_DIR: '/d' })).toEqual({
      PATH: '/bin',
      HOME: '/h',
      UPLINK_DATA_DIR: '/d',
    });
  });
});
