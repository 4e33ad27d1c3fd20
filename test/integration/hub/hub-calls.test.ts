/**
 * The hub in-process with the fixture driver and a real SQLite audit store: routing, op ↔
 * capability mapping, error mapping, bad input, timeouts, sensitive args.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity, AuditEntry } from '../../../src/main/hub';
import { DriverError } from '../../../src/main/drivers/contract';
import { createHub } from '../../../src/main/hub/hub-core';
import { journalDir } from '../../../src/main/hub/audit/journal';
import { formatDoctor } from '../../../src/main/edges/cli/format';
import { createTestDriver } from '../../fixtures/test-driver';
import { closeHubs, failure, openHub } from './helpers';
import { auditFiles, tmpDataDir, waitFor } from '../../fixtures/hub-build';

const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', version: '2.1.0' };

const open = (options: { driverTimeoutMs?: number } = {}): ReturnType<typeof openHub> => openHub(options);

afterEach(closeHubs);

describe('hub calls', () => {
  it('runs a read-only op as a kernel invocation and records enriched events', async () => {
    const { hub } = open();
    const seen: AuditEntry[] = [];
    hub.subscribe((e) => seen.push(e));
    expect(await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent })).toEqual({ text: 'hi' });
    await waitFor(() => seen.length >= 3 || undefined, 5000, 'live entries');
    const events = seen.filter((e) => e.type === 'event');
    expect(events.map((e) => e.kind)).toEqual(['accepted', 'started', 'succeeded']);
    for (const e of events) {
      expect(e).toMatchObject({ channel: 'test:alpha', op: 'echo', capability_id: 'test.echo', provider_id: 'uplink/test', interaction: 'typed', agent });
    }
    expect(events[2]!.duration_ms).toBeGreaterThanOrEqual(0);
    // A read-only permit is recorded on the accepted entry: authorized by the default policy.
    expect(events[0]).toMatchObject({ authorized: 'default_policy', granted: true, args: { text: 'hi' } });
    expect(hub.queryAudit({ invocation_id: events[0]!.invocation_id }).entries).toHaveLength(3);
  });

  it('maps every op to a capability <driver>.<op>@1.0.0 with the {channel, args} input schema', async () => {
    const { hub } = open();
    const providers = hub.providers();
    expect(providers.map((p) => p.provider_id).sort()).toEqual(['uplink/test', 'uplink/test-semantic', 'uplink/test-visual']);
    const typed = providers.find((p) => p.provider_id === 'uplink/test')!;
    expect(typed.capabilities).toContain('test.noop');
    expect(typed.capabilities).toContain('test.send');
    const explained = (await hub.explainSelection('test.pick')) as { selected?: { provider: { id: string }; interaction: string } };
    expect(explained.selected?.provider.id).toBe('uplink/test-semantic');
    const ops = await hub.ops('test:alpha');
    expect(ops.find((o) => o.op === 'implicit')).toMatchObject({ mutating: true, tool: 'channel_act' });
    expect(ops.find((o) => o.op === 'send')).toMatchObject({ mutating: true, tool: 'channel_send' });
  });

  it('an op without mutating counts as mutating (denied without a panel, when_no_panel "deny")', async () => {
    const { hub, driver } = openHub({ denyWithoutPanel: true });
    const err = await failure(hub.invoke('test:alpha', 'implicit', {}, { agent }));
    expect(err.kind).toBe('Rejected');
    expect(driver.state.invoked).toHaveLength(0);
  });

  it('selection picks the preferred interaction, and constraints are hard', async () => {
    const { hub } = open();
    expect(await hub.invoke('test:alpha', 'pick', {}, { agent })).toEqual({ interaction: 'semantic_ui' });
    expect(await hub.invoke('test:alpha', 'pick', {}, { agent, interaction: 'visual_ui' })).toEqual({ interaction: 'visual_ui' });
    expect(await hub.invoke('test:alpha', 'pick', {}, { agent, provider: 'uplink/test-visual' })).toEqual({ interaction: 'visual_ui' });
    const err = await failure(hub.invoke('test:alpha', 'pick', {}, { agent, interaction: 'typed' }));
    expect(err.rendered).toBe(
      'uplink error [test:Invalid]: pick is not offered under interaction typed — hint: drop the interaction/provider constraint, or pick one listed by channel_describe',
    );
  });

  it('the selection preview honours a version requirement, defaulting to the ^1 calls use', async () => {
    const { hub } = openHub();
    const picked = (await hub.explainSelection('test.echo')) as { selected?: { provider: { id: string }; capability: { version: string } } };
    expect(picked.selected).toMatchObject({ provider: { id: 'uplink/test' }, capability: { version: '1.0.0' } });
    const none = (await hub.explainSelection('test.echo', {}, '^2')) as { selected?: unknown; error?: { code: string } };
    expect(none.selected).toBeUndefined();
    expect(none.error?.code).toBe('capability_unavailable');
  });

  it('hub.drivers runs only the listed drivers, and doctor names what is off and what is unknown', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ hub: { drivers: ['test'] } }));
    const hub = createHub({ dataDir: dir, drivers: [createTestDriver('test'), createTestDriver('other')], watchConfig: false });
    try {
      expect((await hub.listChannels()).map((c) => c.channel.split(':')[0])).not.toContain('other');
      const err = await failure(hub.invoke('other:alpha', 'noop', {}, { agent }));
      expect(err.kind).toBe('NotFound');
      const doctor = await hub.doctor();
      expect(doctor).toMatchObject({ ok: true, disabled: ['other'] });
      expect(formatDoctor(doctor)).toContain('off  other (left out by hub.drivers in the config file)');
    } finally {
      await hub.close();
    }
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ hub: { drivers: ['test', 'tmxu'] } }));
    const typo = createHub({ dataDir: dir, drivers: [createTestDriver('test')], watchConfig: false });
    try {
      const doctor = await typo.doctor();
      expect(doctor.ok).toBe(false);
      expect(doctor.config.error).toBe('hub.drivers names tmxu, which no driver is (known: test)');
    } finally {
      await typo.close();
    }
  });

  it('a refusal before the call keeps the driver evidence for the operator in the audit', async () => {
    const changed = new DriverError('Rejected', 'target changed', { hint: 'list channels again', evidence: 'pid 4242 is now 4243' });
    const { hub } = openHub({ driver: Object.assign(createTestDriver(), { interactionsFor: async () => Promise.reject(changed) }) });
    const err = await failure(hub.invoke('test:alpha', 'pick', {}, { agent }));
    expect(err.rendered).toBe('uplink error [test:Rejected]: target changed — hint: list channels again');
    const [row] = hub.queryAudit({ state: 'rejected' }).entries;
    expect(row).toMatchObject({ op: 'pick', error_kind: 'Rejected', detail: 'evidence: pid 4242 is now 4243' });
  });

  it('a driver that says which kinds can serve a channel now (interactionsFor) restricts selection', async () => {
    let available: string[] = ['visual_ui'];
    const { hub } = openHub({ driver: Object.assign(createTestDriver(), { interactionsFor: async () => available }) });
    expect(await hub.invoke('test:alpha', 'pick', {}, { agent })).toEqual({ interaction: 'visual_ui' });
    const forced = await failure(hub.invoke('test:alpha', 'pick', {}, { agent, interaction: 'semantic_ui' }));
    expect(forced.rendered).toBe(
      'uplink error [test:Unavailable]: test:alpha cannot be driven through semantic_ui now (available: visual_ui) — hint: use interaction visual_ui',
    );
    available = [];
    const none = await failure(hub.invoke('test:alpha', 'pick', {}, { agent }));
    expect(none.kind).toBe('Unavailable');
    // Single-kind ops are not affected.
    expect(await hub.invoke('test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });
  });

  it('a label resolves to its channel', async () => {
    const { hub, driver } = open();
    await hub.invoke('test:a', 'noop', {}, { agent });
    expect(driver.state.invoked[0]!.addr).toBe('a');
  });

  it('CLI calls are authorized as cli with the OS user, still through the kernel and audit', async () => {
    const { hub } = open();
    const cli: AgentIdentity = { kind: 'cli', name: 'uplink-cli', user: 'alice' };
    expect(await hub.invoke('test:alpha', 'write', { text: 'abc' }, { agent: cli })).toEqual({ written: 3 });
    const decision = hub.queryAudit({ type: 'decision' }).entries[0]!;
    expect(decision).toMatchObject({ authorized: 'cli', by: 'alice', granted: true, op: 'write' });
    expect(hub.queryAudit({ state: 'succeeded' }).entries).toHaveLength(1);
  });

  it('send is a mutating capability returning the SendReceipt', async () => {
    const { hub, driver } = open();
    const receipt = await hub.send('test:alpha', { message: 'hello' }, { agent: { kind: 'cli', name: 'uplink-cli' } });
    expect(receipt).toMatchObject({ delivered: true, correlation_id: 'c1' });
    expect(driver.state.sent).toEqual([{ addr: 'alpha', message: 'hello', reply_hint: 'full' }]);
    const batch = await hub.recv(undefined, { agent });
    expect(batch.items).toHaveLength(1);
    expect(batch.next_cursor).toBe(1);
  });
});

describe('bad input', () => {
  it('args failing params_schema are Invalid naming the pointer and keyword; the driver is not called', async () => {
    const { hub, driver } = open();
    const err = await failure(hub.invoke('test:alpha', 'echo', { text: 5 }, { agent }));
    expect(err.kind).toBe('Invalid');
    expect(err.rendered).toMatch(/^uplink error \[test:Invalid\]: args for echo do not match its params_schema: .*\/args\/text.*type/);
    expect(err.rendered).toContain(' — hint: ');
    expect(driver.state.invoked).toHaveLength(0);
    expect(hub.queryAudit({ state: 'rejected' }).entries[0]).toMatchObject({ op: 'echo', error_kind: 'Invalid' });
  });

  it('a default of the op schema reaches the driver for an omitted arg; the audit keeps what the agent sent', async () => {
    const { hub, driver } = open();
    expect(await hub.invoke('test:alpha', 'slow', { ms: 0 }, { agent })).toEqual({ waited: 0 });
    expect(driver.state.invoked.at(-1)!.args).toEqual({ ms: 0, timeout_ms: 1000 });
    const entries = hub.queryAudit({ op: 'slow' }).entries;
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) if (e.args !== undefined) expect(e.args).toEqual({ ms: 0 });
  });

  it('args that are not an object are Invalid', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:alpha', 'echo', [1, 2] as never, { agent }));
    expect(err.rendered).toContain('[test:Invalid]: args for echo must be a JSON object');
  });

  it('an unknown channel is NotFound with the hint to list channels', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:nope', 'noop', {}, { agent }));
    expect(err.rendered).toBe('uplink error [test:NotFound]: no channel test:nope — hint: list channels with the channel_list tool or `uplink channels`');
    expect(hub.queryAudit({ type: 'rejected' }).entries[0]).toMatchObject({ channel: 'test:nope', error_kind: 'NotFound' });
  });

  it('an unknown driver is NotFound rendered with the channel prefix', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('ghost:1', 'noop', {}, { agent }));
    expect(err.rendered).toBe(
      'uplink error [ghost:NotFound]: no driver named ghost (enabled drivers: test) — hint: list channels with the channel_list tool or `uplink channels`',
    );
    const bare = await failure(hub.invoke('nocolon', 'noop', {}, { agent }));
    expect(bare.rendered).toMatch(/^uplink error \[core:NotFound\]: "nocolon" is not a channel address/);
  });

  it('an op that does not exist is NotFound naming the valid ops', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:alpha', 'frobnicate', {}, { agent }));
    expect(err.kind).toBe('NotFound');
    expect(err.message).toContain('test has no op "frobnicate" (ops: noop, echo');
  });

  it('the wrong class is Invalid naming the right tool', async () => {
    const { hub } = open();
    const a = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, expect: 'read_only' }));
    expect(a.rendered).toBe('uplink error [test:Invalid]: write is mutating; call it with channel_act, not channel_observe — hint: use the channel_act tool');
    const b = await failure(hub.invoke('test:alpha', 'noop', {}, { agent, expect: 'mutating' }));
    expect(b.rendered).toBe(
      'uplink error [test:Invalid]: noop is read-only; call it with channel_observe, not channel_act — hint: use the channel_observe tool',
    );
  });

  it('a message over 64 KiB is Invalid and never reaches the driver', async () => {
    const { hub, driver } = open();
    const err = await failure(hub.send('test:alpha', { message: 'x'.repeat(64 * 1024 + 1) }, { agent: { kind: 'cli', name: 'cli' } }));
    expect(err.kind).toBe('Invalid');
    expect(err.message).toContain('the limit is 65536 bytes (64 KiB)');
    expect(driver.state.sent).toHaveLength(0);
    expect(await hub.send('test:alpha', { message: 'x'.repeat(64 * 1024) }, { agent: { kind: 'cli', name: 'cli' } })).toMatchObject({ delivered: true });
  });

  it("a driver's own DriverError reaches the agent as is; evidence goes to the audit only", async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:alpha', 'fail', {}, { agent }));
    expect(err.rendered).toBe('uplink error [test:Rejected]: the fixture refuses — hint: do something else');
    const failed = hub.queryAudit({ state: 'failed' }).entries[0]!;
    expect(failed).toMatchObject({ error_code: 'provider_failed', error_kind: 'Rejected' });
    expect(failed.detail).toContain('fixture evidence');
  });

  it('a driver that throws unexpectedly is a fixed Upstream line; the detail is for the operator only', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:alpha', 'crash', {}, { agent }));
    expect(err.rendered).toBe(
      'uplink error [test:Upstream]: the driver failed unexpectedly — hint: the operator can see the detail in `uplink log`; retry, or run `uplink doctor`',
    );
    expect(err.rendered).not.toContain('secret');
    expect(hub.queryAudit({ state: 'failed' }).entries[0]!.detail).toContain('secret internal detail 42');
  });

  it('a driver that hangs past its deadline is Timeout, its signal is aborted, and the hub keeps serving', async () => {
    const { hub, driver } = open({ driverTimeoutMs: 200 });
    const err = await failure(hub.invoke('test:alpha', 'hang', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[test:Timeout\]: test\.hang did not finish within \d+ s — hint: /);
    expect(driver.state.signals[0]?.aborted).toBe(true);
    expect(await hub.invoke('test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });
  });

  it("an op's own timeout_ms default extends the driver deadline (ask is not cut off)", async () => {
    const { hub } = open({ driverTimeoutMs: 200 });
    // `slow` declares timeout_ms default 1000: its deadline is that plus a margin, not the 200 ms.
    expect(await hub.invoke('test:alpha', 'slow', { ms: 600 }, { agent })).toEqual({ waited: 600 });
  });

  it('a hanging channel listing is a Timeout, not a stuck hub', async () => {
    const { hub, driver } = open({ driverTimeoutMs: 200 });
    driver.state.hangChannels = true;
    const err = await failure(hub.invoke('test:alpha', 'noop', {}, { agent }));
    expect(err.kind).toBe('Timeout');
    const overview = await hub.overview();
    expect(overview[0]!.error).toContain('Timeout');
  });

  it('output that breaks result_schema is Invalid and no result is reported', async () => {
    const { hub } = open();
    const err = await failure(hub.invoke('test:alpha', 'bad-output', {}, { agent }));
    expect(err.kind).toBe('Invalid');
    expect(err.message).toContain('result for bad-output breaks its result_schema');
    expect(err.message).toContain('/ok');
    expect(hub.queryAudit({ state: 'failed' }).entries[0]).toMatchObject({ error_code: 'output_schema_violation' });
  });

  it('progress is reported while a long op runs', async () => {
    const { hub } = open();
    const progress: string[] = [];
    await hub.invoke('test:alpha', 'slow', { ms: 300 }, { agent, onProgress: (p) => progress.push(p.message) });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toContain('test.slow running');
  });

  it('cancelling through the signal ends the invocation cancelled', async () => {
    const { hub } = open();
    const ac = new AbortController();
    const p = failure(hub.invoke('test:alpha', 'slow', { ms: 10_000 }, { agent, signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    const err = await p;
    expect(err.kind).toBe('Rejected');
    expect(err.message).toContain('cancelled');
  });

  it('a signal aborted while the call is still being checked cancels it too', async () => {
    const { hub, driver } = open();
    const ac = new AbortController();
    const p = failure(hub.invoke('test:alpha', 'slow', { ms: 10_000 }, { agent, signal: ac.signal }));
    ac.abort();
    const err = await p;
    expect(err.kind).toBe('Rejected');
    expect(err.message).toContain('cancelled');
    expect(driver.state.signals[0]?.aborted).toBe(true);
  });

  it("the driver's signal is aborted by a cancel and by nothing else", async () => {
    const { hub, driver } = open();
    await hub.invoke('test:alpha', 'noop', {}, { agent });
    const ac = new AbortController();
    const p = failure(hub.invoke('test:alpha', 'slow', { ms: 10_000 }, { agent, signal: ac.signal }));
    await waitFor(() => driver.state.signals[1], 5000, 'slow started');
    expect(driver.state.signals[1]!.aborted).toBe(false);
    ac.abort();
    await p;
    expect(driver.state.signals.map((s) => s?.aborted)).toEqual([false, true]);
  });
});

describe('sensitive text', () => {
  it('never writes sensitive args to SQLite (sensitive: true and sensitive_args)', async () => {
    const { hub, dir } = open();
    const cli: AgentIdentity = { kind: 'cli', name: 'uplink-cli' };
    await hub.invoke('test:alpha', 'write', { text: 'hunter2-secret-text', sensitive: true }, { agent: cli });
    await hub.invoke('test:alpha', 'login', { user: 'bob', password: 'pa55-secret-word' }, { agent: cli });
    const entries = hub.queryAudit({ text: 'sensitive' }).entries;
    expect(entries.some((e) => JSON.stringify(e.args).includes('•••• (sensitive, 19 chars)'))).toBe(true);
    const check = (): void => {
      const files = auditFiles(dir);
      expect(files.some((f) => f.file.startsWith(journalDir(join(dir, 'audit.sqlite'))))).toBe(true);
      for (const { file, bytes } of files) {
        const text = bytes.toString('latin1');
        expect(text, file).not.toContain('hunter2-secret-text');
        expect(text, file).not.toContain('pa55-secret-word');
      }
      expect(files.some((f) => f.bytes.toString('latin1').includes('bob'))).toBe(true);
    };
    check(); // journals included: the calls' rows were journaled before their replies
    await hub.close();
    for (const { file, bytes } of auditFiles(dir)) {
      expect(bytes.toString('latin1'), file).not.toContain('hunter2-secret-text');
      expect(bytes.toString('latin1'), file).not.toContain('pa55-secret-word');
    }
  });
});
