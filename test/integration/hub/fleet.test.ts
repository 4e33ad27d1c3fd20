/**
 * Three hubs (separate data dirs, one fixture driver each) in one fleet on a real nats-server with
 * token auth: remote reads, a remote mutating call approved on the owning hub, messages that fail
 * authentication or validation ignored, and a NATS outage that remote calls see at once and
 * recover from.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, createInbox } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigStore } from '../../../src/main/hub/config/store';
import { createHub } from '../../../src/main/hub/hub-core';
import { joinFleet } from '../../../src/main/hub/fleet';
import type { FleetHub } from '../../../src/main/hub/fleet';
import { readFleetToken } from '../../../src/main/hub/fleet/auth';
import type { AgentIdentity, HubError } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { DriverError } from '../../../src/main/drivers';
import { tmpDataDir } from '../../fixtures/hub-build';
import { failure, nextPrompt } from './helpers';
import { freePort, NATS_SERVER as NATS, startNatsServer, stopNatsServer, until } from '../../fixtures/nats-server';
import { prerequisite } from '../../fixtures/prerequisite';

const TOKEN = 'fleet-test-token-4f1c';
const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'claude', session: 's1' };
const natsServer = prerequisite(`nats-server (${NATS})`, existsSync(NATS), 'apt-get install nats-server (or bash scripts/install-system-deps.sh)');

let port = 0;
let server: ChildProcess | undefined;
const storeDir = tmpDataDir('uplink-nats-');

async function startNats(): Promise<void> {
  server = await startNatsServer(port, ['-js', '-sd', storeDir, '--auth', TOKEN]);
}

const stopNats = (): Promise<void> => stopNatsServer(server);

function openMember(name: string, tokenMode = 0o600): { hub: FleetHub; driver: ReturnType<typeof createTestDriver>; dir: string } {
  const dir = tmpDataDir(`uplink-fleet-${name}-`);
  writeFileSync(join(dir, 'fleet.token'), `${TOKEN}\n`, { mode: tokenMode });
  const fleet = { url: `nats://127.0.0.1:${port}`, name, token_file: 'fleet.token' };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ fleet }), { mode: 0o600 });
  const driver = createTestDriver('test', name);
  const core = createHub({ dataDir: dir, drivers: [driver], watchConfig: false, panelGraceMs: 0, progressIntervalMs: 100 });
  return { hub: joinFleet(core, fleet, { heartbeatMs: 150, listTimeoutMs: 1000 }), driver, dir };
}

describe.skipIf(natsServer.skip)('a fleet of three hubs on NATS', () => {
  let a: ReturnType<typeof openMember>;
  let b: ReturnType<typeof openMember>;
  let c: ReturnType<typeof openMember>;
  const connected = (m: ReturnType<typeof openMember>, ...hubs: string[]) =>
    until(`${hubs.join(', ')} to be seen`, () => hubs.every((h) => m.hub.fleetStatus().members.some((x) => x.hub === h && x.state === 'connected')));

  beforeAll(natsServer.check);
  beforeAll(async () => {
    port = await freePort();
    await startNats();
    [a, b, c] = [openMember('a'), openMember('b'), openMember('c')];
    await Promise.all([connected(a, 'b', 'c'), connected(b, 'a', 'c'), connected(c, 'a', 'b')]);
  });

  afterAll(async () => {
    await Promise.all([a, b, c].filter(Boolean).map((m) => m.hub.close()));
    await stopNats();
  });

  it('lists every connected hub’s channels, prefixed with the hub’s name', async () => {
    const channels = (await a.hub.listChannels()).map((x) => x.channel);
    expect(channels).toEqual(expect.arrayContaining(['test:alpha', 'b/test:alpha', 'b/test:beta', 'c/test:alpha']));
    const described = await a.hub.describe('b/test:alpha', 'echo', agent);
    expect(described.channel).toMatchObject({ channel: 'b/test:alpha', detail: { mark: 'b' } });
    expect(described.ops.map((o) => o.op)).toEqual(['echo']);
    // The panel's channel list comes from the overview: another hub's driver is `<hub>/<driver>`.
    const overview = await a.hub.overview();
    expect(overview.find((d) => d.driver === 'b/test')?.channels.map((x) => x.channel)).toEqual(['b/test:alpha', 'b/test:beta']);
  });

  it('runs a remote read on the owning hub, which records the caller as an agent of the calling hub', async () => {
    expect(await a.hub.invoke('b/test:alpha', 'echo', { text: 'over the fleet' }, { agent })).toEqual({ text: 'over the fleet' });
    // The driver hears the calling agent's authenticated id, never its declared client name (claude-code).
    expect(b.driver.state.invoked.at(-1)).toMatchObject({ addr: 'alpha', op: 'echo', agent: 'a/claude' });
    expect(a.driver.state.invoked.some((x) => x.op === 'echo')).toBe(false);
    const rows = b.hub.queryAudit({ limit: 50 }).entries.filter((e) => e.op === 'echo');
    expect(rows.at(-1)?.agent).toMatchObject({ kind: 'mcp', name: 'a/claude-code', agent_id: 'a/claude' });
    // The own hub's name is just a longer way to say a local channel.
    expect(await a.hub.invoke('a/test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });
  });

  it('brings a remote driver error back with the driver’s id, named as this hub names that hub’s driver', async () => {
    const err = await failure(a.hub.invoke('b/test:alpha', 'fail', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[b\/test:/);
    const unknown = await failure(a.hub.invoke('b/test:nope', 'noop', {}, { agent }));
    expect(unknown.kind).toBe('NotFound');
  });

  it('a remote error says how the call ended there and names that hub’s channels as this hub names them', async () => {
    b.driver.precheck = async (addr) => {
      throw new DriverError('Rejected', `write needs a read of test:${addr} first`, { hint: `read first: invoke the read op on test:${addr}, then retry` });
    };
    try {
      const refused = await failure(a.hub.invoke('b/test:alpha', 'write', { text: 'x' }, { agent }));
      expect(refused.outcome).toBe('rejected');
      expect(refused.rendered).toBe(
        'uplink error [b/test:Rejected]: write needs a read of b/test:alpha first — hint: read first: invoke the read op on b/test:alpha, then retry',
      );
    } finally {
      delete b.driver.precheck;
    }
    expect((await failure(a.hub.invoke('b/test:alpha', 'fail', {}, { agent }))).outcome).toBe('failed');
  });

  it('makes a remote mutating call wait for the operator on the owning hub, and runs it once approved there', async () => {
    const detach = b.hub.attachPanel();
    const aPanel = a.hub.attachPanel();
    try {
      const prompt = nextPrompt(b.hub);
      // A CLI user on hub a has no authority on hub b: the call still waits for b's operator.
      const call = a.hub.invoke('b/test:alpha', 'write', { text: 'hello b' }, { agent: { kind: 'cli', name: 'uplink-cli', user: 'me' } });
      const p = await prompt;
      expect(p).toMatchObject({ channel: 'test:alpha', op: 'write', agent: { kind: 'mcp', name: 'a/uplink-cli' } });
      // Hub a's panel shows b's prompt as b's: its id and channel prefixed, the hub named.
      await until('a to show b’s prompt', () => a.hub.pendingApprovals().some((x) => x.approval_id === `b/${p.approval_id}`));
      expect(a.hub.pendingApprovals().find((x) => x.hub === 'b')).toMatchObject({ channel: 'b/test:alpha', op: 'write' });
      expect(b.driver.state.invoked.some((x) => x.op === 'write')).toBe(false);
      await b.hub.decide(p.approval_id, { kind: 'once', by: 'operator-b' });
      expect(await call).toEqual({ written: 7 });
      expect(b.driver.state.invoked.filter((x) => x.op === 'write')).toHaveLength(1);
    } finally {
      detach();
      aPanel();
    }
  });

  it('shows a prompt on every panel of the fleet, and the first decision wins wherever it is given', async () => {
    // Only hub c has an operator watching: hub b asks (rather than denying for want of a panel).
    const cPanel = c.hub.attachPanel();
    try {
      await until('b to count c’s panel', () => b.hub.panelsAttached() > 0);
      const call = a.hub.invoke('b/test:alpha', 'write', { text: 'from c' }, { agent });
      const onC = await until('c to show b’s prompt', () =>
        c.hub.pendingApprovals().find((x) => x.hub === 'b' && (x.args as { text?: string }).text === 'from c'),
      );
      const own = b.hub.pendingApprovals().find((x) => `b/${x.approval_id}` === onC.approval_id)!;
      expect(onC).toMatchObject({ channel: 'b/test:alpha', op: 'write', agent: { name: 'a/claude-code', agent_id: 'a/claude' } });
      await until('a to show it too', () => a.hub.pendingApprovals().some((x) => x.approval_id === onC.approval_id));

      // Standing authority is made on the owning hub's own panel only.
      const session = await failure(c.hub.decide(onC.approval_id, { kind: 'session', by: 'operator-c' }));
      expect(session.rendered).toMatch(
        /^uplink error \[fleet:Rejected\]: a prompt of hub b can be approved once or denied from this panel — hint: .*hub b's own panel/,
      );
      expect(() => c.hub.revealApprovalArgs(onC.approval_id, 'operator-c')).toThrow(/stay on that hub/);

      expect(await c.hub.decide(onC.approval_id, { kind: 'once', by: 'operator-c' })).toEqual({ approval_id: onC.approval_id, granted: true });
      expect(await call).toEqual({ written: 6 });
      // Exactly once: the owning hub refuses a later answer, from its own panel or another's.
      expect((await failure(b.hub.decide(own.approval_id, { kind: 'deny', by: 'operator-b' }))).kind).toBe('Rejected');
      expect((await failure(a.hub.decide(onC.approval_id, { kind: 'deny', by: 'operator-a' }))).kind).toBe('Rejected');
      expect(b.driver.state.invoked.filter((x) => x.op === 'write' && (x.args as { text?: string }).text === 'from c')).toHaveLength(1);
      // The owning hub recorded who decided, and where, before the call ran.
      const decision = b.hub.queryAudit({ type: 'decision', limit: 5 }).entries[0]!;
      expect(decision).toMatchObject({ granted: true, by: 'operator-c on hub c', invocation_id: own.invocation_id });
      // Every panel withdraws it.
      await until('a and c to drop the prompt', () => ![a, c].some((m) => m.hub.pendingApprovals().some((x) => x.approval_id === onC.approval_id)));
    } finally {
      cPanel();
    }
  });

  it('reports the owning hub’s progress to the caller while a remote call waits for an operator', async () => {
    const cPanel = c.hub.attachPanel();
    try {
      await until('b to count c’s panel', () => b.hub.panelsAttached() > 0);
      const progress: string[] = [];
      const call = a.hub.invoke('b/test:alpha', 'write', { text: 'progress' }, { agent, onProgress: (p) => progress.push(p.message) });
      const onC = await until('c to show b’s prompt', () =>
        c.hub.pendingApprovals().find((x) => x.hub === 'b' && (x.args as { text?: string }).text === 'progress'),
      );
      await until('progress from hub b', () => progress.some((m) => /^hub b: waiting for operator approval of write on test:alpha/.test(m)));
      await c.hub.decide(onC.approval_id, { kind: 'once', by: 'operator-c' });
      expect(await call).toEqual({ written: 8 });
    } finally {
      cPanel();
    }
  });

  it('carries a deny and its reason from another hub’s panel to the agent', async () => {
    const cPanel = c.hub.attachPanel();
    try {
      await until('b to count c’s panel', () => b.hub.panelsAttached() > 0);
      const call = failure(a.hub.invoke('b/test:alpha', 'write', { text: 'no' }, { agent }));
      const onC = await until('c to show b’s prompt', () => c.hub.pendingApprovals().find((x) => x.hub === 'b' && (x.args as { text?: string }).text === 'no'));
      expect(await c.hub.decide(onC.approval_id, { kind: 'deny', by: 'operator-c', reason: 'not now' })).toMatchObject({ granted: false });
      const err = await call;
      expect(err.rendered).toMatch(/not now/);
      expect(b.hub.queryAudit({ type: 'decision', limit: 1 }).entries[0]).toMatchObject({ granted: false, by: 'operator-c on hub c', reason: 'not now' });
    } finally {
      cPanel();
    }
  });

  it('forwards a cancellation to the owning hub', async () => {
    const controller = new AbortController();
    const before = c.driver.state.signals.length;
    const call = failure(a.hub.invoke('c/test:alpha', 'hang', {}, { agent, signal: controller.signal }));
    const signal = await until('the hang to reach hub c', () => c.driver.state.signals.length > before && c.driver.state.signals.at(-1));
    controller.abort();
    expect((await call).kind).toBe('Rejected');
    await until('hub c to cancel the driver call', () => signal.aborted);
  });

  it('ignores messages that fail authentication or validation', async () => {
    await expect(connect({ servers: `127.0.0.1:${port}`, token: 'wrong', reconnect: false })).rejects.toThrow(/authorization/i);
    const nc = await connect({ servers: `127.0.0.1:${port}`, token: TOKEN });
    try {
      const inbox = createInbox();
      const replies: unknown[] = [];
      nc.subscribe(inbox, { callback: (_e, m) => replies.push(m.data) });
      const bad = [
        'not json',
        JSON.stringify({
          v: 1,
          id: 'x1',
          from: 'a',
          method: 'invoke',
          channel: 'test:alpha',
          op: 'write',
          args: { text: 'x' },
          agent: { kind: 'panel', name: 'op' },
          authorized: 'operator',
        }),
        JSON.stringify({ v: 2, id: 'x2', from: 'a', method: 'channels' }),
        JSON.stringify({
          v: 1,
          id: 'x3',
          from: 'Not A Name',
          method: 'invoke',
          channel: 'test:alpha',
          op: 'echo',
          args: { text: 'x' },
          agent: { kind: 'mcp', name: 'm' },
        }),
        `{"v":1,"id":"x4","from":"a","method":"channels","pad":"${'x'.repeat(300_000)}"}`,
      ];
      const invoked = b.driver.state.invoked.length;
      for (const text of bad) nc.publish('uplink.b.call', new TextEncoder().encode(text), { reply: inbox });
      await nc.flush();
      // Nothing may answer: the window gives a wrong reply time to arrive.
      await new Promise((r) => setTimeout(r, 500));
      expect(replies).toEqual([]);
      expect(b.driver.state.invoked.length).toBe(invoked);
      // b still answers well-formed requests.
      expect(await a.hub.invoke('b/test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });

      // A prompt that is garbage, that claims a hub other than its subject's, or that carries a field
      // the prompt shape does not have, shows on no panel. Each forgery is well formed apart from its flaw.
      const prompt = {
        approval_id: 'appr-forged',
        invocation_id: 'inv-1',
        agent: { kind: 'mcp', name: 'x' },
        channel: 'test:alpha',
        channel_labels: [],
        op: 'write',
        capability_id: 'test.write',
        args: {},
        provider_id: 'p',
        interaction: 'typed',
        requested_at: Date.now(),
        expires_at: Date.now() + 60_000,
      };
      const added = (approval: object) => new TextEncoder().encode(JSON.stringify({ v: 1, hub: 'b', type: 'added', approval }));
      nc.publish('uplink.prompts.b', new TextEncoder().encode('{"v":1,"hub":"b","type":"added"}'));
      nc.publish('uplink.prompts.c', added({ ...prompt, approval_id: 'appr-wrong-subject' }));
      nc.publish('uplink.prompts.b', added({ ...prompt, approval_id: 'appr-extra-field', injected: true }));
      // The same prompt without a flaw does show: the forgeries were dropped by the checks, not for their
      // shape. NATS delivers one connection's messages in order, so a has handled them all once it shows.
      nc.publish('uplink.prompts.b', added({ ...prompt, approval_id: 'appr-control' }));
      await until('a to show the well-formed prompt', () => a.hub.pendingApprovals().some((p) => p.approval_id === 'b/appr-control'));
      expect(
        a.hub
          .pendingApprovals()
          .map((p) => p.approval_id)
          .filter((id) => id.startsWith('b/appr-')),
      ).toEqual(['b/appr-control']);
      nc.publish(
        'uplink.prompts.b',
        new TextEncoder().encode(JSON.stringify({ v: 1, hub: 'b', type: 'resolved', approval_id: 'appr-control', granted: false, authorized: 'test' })),
      );
      await until('a to drop the well-formed prompt', () => !a.hub.pendingApprovals().some((p) => p.approval_id === 'b/appr-control'));
    } finally {
      await nc.close();
    }
  });

  it('fails remote calls at once while NATS is down, keeps local calls working, and heals when NATS is back', async () => {
    await stopNats();
    await until('a to notice', () => !a.hub.fleetStatus().connected);
    const started = Date.now();
    const err: HubError = await failure(a.hub.invoke('b/test:alpha', 'echo', { text: 'x' }, { agent }));
    expect(Date.now() - started).toBeLessThan(500);
    expect(err.rendered).toMatch(/^uplink error \[fleet:Unavailable\]: hub b cannot be reached: .* — hint: /);
    expect(await a.hub.invoke('test:alpha', 'echo', { text: 'alone' }, { agent })).toEqual({ text: 'alone' });
    expect((await a.hub.listChannels()).every((x) => !x.channel.includes('/'))).toBe(true);
    // The refusal is on the calling hub's record, like any refused request.
    expect(a.hub.queryAudit({ limit: 50 }).entries.some((e) => e.channel === 'b/test:alpha' && e.error_kind === 'Unavailable')).toBe(true);
    expect((await a.hub.doctor()).warnings?.join('\n')).toMatch(/fleet a: the fleet's NATS server .* is unreachable since/);

    await startNats();
    await connected(a, 'b', 'c');
    expect(await a.hub.invoke('b/test:alpha', 'echo', { text: 'back' }, { agent })).toEqual({ text: 'back' });
  });

  it('withdraws another hub’s prompts while it is out of reach, and shows them again when it is back', async () => {
    const bPanel = b.hub.attachPanel();
    const cPanel = c.hub.attachPanel();
    try {
      const call = b.hub.invoke('test:alpha', 'write', { text: 'across a partition' }, { agent });
      const onC = await until('c to show b’s prompt', () =>
        c.hub.pendingApprovals().find((x) => x.hub === 'b' && (x.args as { text?: string }).text === 'across a partition'),
      );
      const withdrawn = new Promise<unknown>((resolve) => {
        const off = c.hub.subscribeApprovals((e) => e.type === 'withdrawn' && e.approval_id === onC.approval_id && (off(), resolve(e)));
      });
      await stopNats();
      expect(await withdrawn).toMatchObject({ reason: expect.stringMatching(/hub b is out of reach .*; it still decides its own prompt/) });
      expect(c.hub.fleetStatus().members).toEqual(
        expect.arrayContaining([expect.objectContaining({ hub: 'b', state: 'unreachable', since: expect.any(Number) })]),
      );
      // b still has it, and its own panel can still decide it; here c waits for the fleet.
      expect(b.hub.pendingApprovals().some((x) => x.invocation_id === onC.invocation_id)).toBe(true);
      await startNats();
      await until('c to show b’s prompt again', () => c.hub.pendingApprovals().some((x) => x.approval_id === onC.approval_id));
      await c.hub.decide(onC.approval_id, { kind: 'once', by: 'operator-c' });
      expect(await call).toEqual({ written: 18 });
    } finally {
      bPanel();
      cPanel();
    }
  });

  it('fails a call to a hub that is not in the fleet at once', async () => {
    const err = await failure(a.hub.invoke('nohub/test:alpha', 'noop', {}, { agent }));
    expect(err.rendered).toMatch(/^uplink error \[fleet:Unavailable\]: hub nohub is not connected to the fleet \(connected: b, c\) — hint: /);
  });
});

describe('the fleet token file', () => {
  it('must be readable by its owner only', () => {
    const dir = tmpDataDir('uplink-token-');
    writeFileSync(join(dir, 'open'), 'tok\n', { mode: 0o644 });
    writeFileSync(join(dir, 'closed'), 'tok\n', { mode: 0o600 });
    expect(() => readFleetToken(join(dir, 'open'))).toThrow(/readable by others .* — hint: chmod 600/);
    expect(readFleetToken(join(dir, 'closed'))).toBe('tok');
  });
});

describe('the fleet section of config.json', () => {
  it('takes a url, a hub name and a token file, and refuses a name that cannot be a subject token', () => {
    const dir = tmpDataDir('uplink-fleet-config-');
    const write = (fleet: unknown) => writeFileSync(join(dir, 'config.json'), JSON.stringify({ fleet }));
    write({ url: 'tls://nats.example:4222', name: 'build-box', token_file: 'fleet.token' });
    const store = new ConfigStore(join(dir, 'config.json'));
    expect(store.error()).toBeUndefined();
    expect(store.get().fleet).toEqual({ url: 'tls://nats.example:4222', name: 'build-box', token_file: 'fleet.token' });
    write({ url: 'nats://127.0.0.1:4222', name: 'Build.Box', token_file: 'fleet.token' });
    expect(store.reload()).toMatch(/\/fleet\/name must match pattern/);
    write({ url: 'nats://127.0.0.1:4222', name: 'history', token_file: 'fleet.token' });
    expect(store.reload()).toMatch(/\/fleet\/name history is a word the fleet's own subjects use — hint: /);
    write({ url: 'http://127.0.0.1:4222', name: 'b', token_file: 'fleet.token' });
    expect(store.reload()).toMatch(/\/fleet\/url must match pattern/);
  });
});
