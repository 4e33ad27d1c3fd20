/**
 * A fleet with identity by key, set up by `uplink fleet init`'s library function, on a real
 * nats-server: three hubs fa, fb, fc, and an adversary who holds fa's seed (a raw NATS client with a
 * member's own credentials) or no credentials at all. No member may speak for another: a forged
 * decide does not run, no call is taken or answered by an impostor, forged history neither shows
 * nor hides real records, forged presence cuts no hub off, and replays are dropped and counted.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, headers as natsHeaders, nkeyAuthenticator } from 'nats';
import type { Msg, NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import { joinFleet } from '../../../src/main/hub/fleet';
import type { FleetHub } from '../../../src/main/hub/fleet';
import { initFleet } from '../../../src/main/hub/fleet/init';
import type { FleetInitResult } from '../../../src/main/hub/fleet/init';
import type { DropReason } from '../../../src/main/hub/fleet/keys';
import { encodeFleetRecord, historySubject } from '../../../src/main/hub/fleet/history';
import type { AgentIdentity } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';
import { nextPrompt } from './helpers';
import { freePort, NATS_SERVER as NATS, startNatsServer, stopNatsServer, until } from '../../fixtures/nats-server';
import { prerequisite } from '../../fixtures/prerequisite';

const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'claude', session: 's1' };
const natsServer = prerequisite(`nats-server (${NATS})`, existsSync(NATS), 'apt-get install nats-server (or bash scripts/install-system-deps.sh)');
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let port = 0;
let server: ChildProcess | undefined;
let keys: FleetInitResult;
const out = tmpDataDir('uplink-fleet-keys-');

type Member = { hub: FleetHub; driver: ReturnType<typeof createTestDriver>; dir: string };

function openMember(name: string, dir = tmpDataDir(`uplink-fleet-${name}-`)): Member {
  const fleet = keys.configs[name]!;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ fleet }), { mode: 0o600 });
  const driver = createTestDriver('test', name);
  const core = createHub({ dataDir: dir, drivers: [driver], watchConfig: false, panelGraceMs: 0, progressIntervalMs: 100 });
  return { hub: joinFleet(core, fleet, { heartbeatMs: 150, listTimeoutMs: 1000 }), driver, dir };
}

/** A raw NATS client holding `hub`'s seed, under that hub's inbox prefix (the only one it may read). */
function rawAs(hub: string): Promise<NatsConnection> {
  const seed = new TextEncoder().encode(readFileSync(keys.configs[hub]!.seed_file, 'utf8').trim());
  return connect({ servers: `nats://127.0.0.1:${port}`, authenticator: nkeyAuthenticator(seed), inboxPrefix: `_INBOX.${hub}` });
}

/** A server error the adversary's connection reports (a permissions violation), as text. */
function violations(nc: NatsConnection): string[] {
  const seen: string[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') seen.push(`${String(s.data)} ${JSON.stringify(s.permissionContext ?? {})}`);
  })();
  return seen;
}

describe.skipIf(natsServer.skip)('a fleet whose members are known by key', () => {
  let fa: Member;
  let fb: Member;
  let fc: Member;
  const dropped = (m: Member) => m.hub.fleetStatus().dropped as Record<DropReason, number>;

  beforeAll(natsServer.check);
  beforeAll(async () => {
    port = await freePort();
    keys = initFleet({ hubs: ['fa', 'fb', 'fc'], out, port });
    server = await startNatsServer(port, ['-c', join(out, 'nats-server.conf')]);
    [fa, fb, fc] = [openMember('fa'), openMember('fb'), openMember('fc')];
    const connected = (m: Member, ...hubs: string[]) =>
      until(`${hubs.join(', ')} to be seen`, () => hubs.every((h) => m.hub.fleetStatus().members.some((x) => x.hub === h && x.state === 'connected')));
    await Promise.all([connected(fa, 'fb', 'fc'), connected(fb, 'fa', 'fc'), connected(fc, 'fa', 'fb')]);
  });

  afterAll(async () => {
    await Promise.all([fa, fb, fc].filter(Boolean).map((m) => m.hub.close()));
    await stopNatsServer(server);
  });

  it('works as a fleet: signed calls run, the Fleet view says how members are known, doctor has no warning', async () => {
    expect(await fa.hub.invoke('fb/test:alpha', 'echo', { text: 'signed' }, { agent })).toEqual({ text: 'signed' });
    expect(fb.driver.state.invoked.at(-1)).toMatchObject({ op: 'echo', agent: 'fa/claude' });
    expect(fa.hub.fleetStatus()).toMatchObject({ identity: 'keys', connected: true });
    expect(fa.hub.fleetStatus().warning).toBeUndefined();
    const doctor = await fa.hub.doctor();
    expect(doctor.warnings ?? []).toEqual([]);
    // And says so in one line: where, who is connected, how members are known.
    expect(doctor.fleet).toEqual({
      ok: true,
      line: expect.stringMatching(
        /^fleet fa at nats:\/\/127\.0\.0\.1:\d+: connected; members fb \(connected\), fc \(connected\); members known by key \(roster\), 0 messages dropped$/,
      ),
    });
  });

  it('keeps a client without a member key out, and runs no decide or invoke a member sends in another hub’s name', async () => {
    await expect(connect({ servers: `nats://127.0.0.1:${port}`, reconnect: false })).rejects.toThrow(/authorization/i);

    const detach = fb.hub.attachPanel();
    try {
      const prompt = nextPrompt(fb.hub);
      const call = fb.hub.invoke('test:alpha', 'write', { text: 'guarded' }, { agent });
      const p = await prompt;
      const nc = await rawAs('fa');
      const before = dropped(fb);
      const decide = { v: 1, id: 'forged-1', method: 'decide', approval_id: p.approval_id, decision: 'once', by: 'alice' };
      // Unsigned, in fa's own name: dropped, never answered.
      const unsigned = nc.request('uplink.fb.call', enc({ ...decide, from: 'fa' }), { timeout: 500 });
      await expect(unsigned).rejects.toThrow();
      // Signed with fa's key but speaking for fc: dropped too.
      const h = natsHeaders();
      h.set('Uplink-Key', keys.roster.hubs.fa!);
      h.set('Uplink-Sig', 'x'.repeat(86));
      h.set('Uplink-At', String(Date.now()));
      h.set('Uplink-Nonce', '0'.repeat(24));
      nc.publish('uplink.fb.call', enc({ ...decide, id: 'forged-2', from: 'fc' }), { headers: h, reply: '_INBOX.fa.x' });
      nc.publish(
        'uplink.fb.call',
        enc({ v: 1, id: 'forged-3', from: 'fc', method: 'invoke', channel: 'test:alpha', op: 'echo', args: { text: 'as fc' }, agent }),
        {
          reply: '_INBOX.fa.z',
        },
      );
      await nc.flush();
      await until('fb to drop them', () => dropped(fb).unsigned >= before.unsigned + 2 && dropped(fb).bad_signature >= before.bad_signature + 1);
      expect(fb.hub.pendingApprovals().some((x) => x.approval_id === p.approval_id)).toBe(true);
      expect(fb.driver.state.invoked.some((x) => x.agent?.startsWith('fc/'))).toBe(false);
      await nc.close();
      await fb.hub.decide(p.approval_id, { kind: 'deny', by: 'operator-fb' });
      await expect(call).rejects.toThrow();
      // Nothing in fb's audit was decided in fa's or fc's name.
      expect(fb.hub.queryAudit({ limit: 200 }).entries.some((e) => JSON.stringify(e).includes('alice'))).toBe(false);
    } finally {
      detach();
    }
  });

  it('a member signing as itself but naming another hub in the body is dropped as the wrong signer', async () => {
    // fa's real hub signs what it sends; a raw client with fa's seed signing `from: fc` is what an impostor would do.
    const { keyTrust } = await import('../../../src/main/hub/fleet/keys');
    const { readFleetSeed } = await import('../../../src/main/hub/fleet/auth');
    const trust = keyTrust(readFleetSeed(keys.configs.fa!.seed_file), keys.roster);
    const nc = await rawAs('fa');
    const before = dropped(fb).wrong_signer;
    const data = enc({ v: 1, id: 'forged-4', from: 'fc', method: 'invoke', channel: 'test:alpha', op: 'echo', args: { text: 'as fc' }, agent });
    nc.publish('uplink.fb.call', data, { headers: trust.seal('uplink.fb.call', data)!, reply: '_INBOX.fa.y' });
    await nc.flush();
    await until('fb to drop it', () => dropped(fb).wrong_signer > before);
    expect(fb.driver.state.invoked.some((x) => x.agent?.startsWith('fc/'))).toBe(false);
    await nc.close();
  });

  it('lets no member subscribe to another’s calls, so none is taken or answered by an impostor', async () => {
    const nc = await rawAs('fa');
    const errors = violations(nc);
    let stolen = 0;
    const refused: string[] = [];
    nc.subscribe('uplink.fc.call', {
      queue: 'owner',
      callback: (e, m: Msg) => (e ? refused.push(e.message) : (stolen++, m.respond(enc({ v: 1, id: 'x', ok: true, result: 'forged' })))),
    });
    nc.subscribe('_INBOX.>', { callback: (e) => (e ? refused.push(e.message) : stolen++) });
    await until('the server to refuse the subscriptions', () => errors.filter((e) => /PERMISSIONS_VIOLATION/.test(e)).length >= 2);
    expect(refused).toHaveLength(2);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => fa.hub.invoke('fc/test:alpha', 'echo', { text: `call ${i}` }, { agent })));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => ({ text: `call ${i}` })));
    expect(stolen).toBe(0);
    await nc.close();
  });

  it('neither shows forged history nor lets it hide real records, also across a restart', async () => {
    const nc = await rawAs('fa');
    const errors = violations(nc);
    const js = nc.jetstream();
    // A well-formed record (a real one, renumbered): only its signature gives it away.
    const real = fb.hub.queryAudit({ limit: 1 }).entries[0]!;
    const forged = (hub: string) => encodeFleetRecord(hub, 0, { ...real, id: 1e9 });
    // Under fb's subject: the server refuses the publish.
    await expect(js.publish(historySubject('fb'), forged('fb'), { timeout: 1000 })).rejects.toThrow();
    // Under fa's own subject, unsigned, as fa: dropped by every reader, and fa's cursor does not move.
    await js.publish(historySubject('fa'), forged('fa'));
    await until('the refusal', () => errors.some((e) => /PERMISSIONS_VIOLATION/.test(e)));
    await nc.close();

    await fb.hub.invoke('test:alpha', 'echo', { text: 'real fb record' }, { agent });
    await fa.hub.invoke('test:alpha', 'echo', { text: 'real fa record' }, { agent });
    const lastOf = (hub: string) => fb.hub.queryAudit({ limit: 1 }).entries[0]!.id && (hub === 'fb' ? fb : fa).hub.queryAudit({ limit: 1 }).entries[0]!.id;
    for (const hub of ['fa', 'fb']) {
      const last = lastOf(hub);
      await until(`fc to show ${hub}'s record ${last}`, () => fc.hub.fleetHistory({ hub, limit: 5 }).entries.some((e) => e.seq === last));
    }
    expect(fc.hub.fleetHistory({ limit: 1000 }).entries.some((e) => e.seq === 1e9)).toBe(false);

    // fa restarts with a forged record the last under its subject: it goes on from its own last signed
    // record, not the forged one (whose seq would have silenced it), and fc keeps seeing it.
    const again = await rawAs('fa');
    await again.jetstream().publish(historySubject('fa'), forged('fa'));
    await again.close();
    await fa.hub.close();
    fa = openMember('fa', fa.dir);
    await until('fa back', () => fc.hub.fleetStatus().members.some((x) => x.hub === 'fa' && x.state === 'connected'));
    await fa.hub.invoke('test:alpha', 'echo', { text: 'after restart' }, { agent });
    const after = fa.hub.queryAudit({ limit: 1 }).entries[0]!.id;
    await until('fc to show fa’s record after the restart', () => fc.hub.fleetHistory({ hub: 'fa', limit: 5 }).entries.some((e) => e.seq === after));
    expect(fc.hub.fleetHistory({ limit: 1000 }).entries.some((e) => e.seq === 1e9)).toBe(false);
    expect(dropped(fc).unsigned).toBeGreaterThan(0);
  });

  it('ignores forged presence, so a forged `leaving` cuts no hub off', async () => {
    const nc = await rawAs('fa');
    const errors = violations(nc);
    const leave = (hub: string) => enc({ v: 1, hub, instance: '0123456789abcdef', since: 1, leaving: true });
    const timer = setInterval(() => {
      nc.publish('uplink.presence.fc', leave('fc')); // refused by the server
      nc.publish('uplink.presence.fa', leave('fa')); // fa's subject, but unsigned
    }, 100);
    try {
      const results: unknown[] = [];
      for (let i = 0; i < 24; i++) {
        results.push(await fa.hub.invoke('fc/test:alpha', 'echo', { text: `p${i}` }, { agent }));
        await sleep(50);
      }
      expect(results).toHaveLength(24);
      expect(errors.some((e) => /PERMISSIONS_VIOLATION/.test(e))).toBe(true);
      expect(fb.hub.fleetStatus().members.find((x) => x.hub === 'fa')?.state).toBe('connected');
    } finally {
      clearInterval(timer);
      await nc.close();
    }
  });

  it('drops a replayed message, and counts it in the Fleet view and doctor', async () => {
    // Someone holding fb's seed replays fb's own signed presence verbatim.
    const nc = await rawAs('fb');
    const captured = await new Promise<Msg>((resolve) => {
      const sub = nc.subscribe('uplink.presence.fb', { callback: (_e, m) => (sub.unsubscribe(), resolve(m)) });
    });
    const before = dropped(fa).replayed;
    nc.publish('uplink.presence.fb', captured.data, { headers: captured.headers! });
    await nc.flush();
    await until('fa to drop the replay', () => dropped(fa).replayed > before);
    expect((await fa.hub.doctor()).warnings).toEqual([expect.stringMatching(/^fleet fa: dropped fleet messages: .*replayed \d+/)]);
    await nc.close();
  });

  it('witnesses another hub’s signed checkpoints, and not forged ones', async () => {
    const head = 'a'.repeat(64);
    const lines = (file: string): Array<{ count: number; head: string; at: number }> =>
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as { count: number; head: string; at: number })
        : [];
    fb.hub.publishCheckpoint({ count: 42, head, at: 1_700_000_000_000 });
    const file = (m: Member, of = 'fb') => join(m.dir, 'fleet', 'witness', `${of}.jsonl`);
    await until('fa and fc to write it down', () => [fa, fc].every((m) => lines(file(m)).some((c) => c.head === head)));
    expect(lines(file(fc))).toContainEqual({ count: 42, head, at: 1_700_000_000_000 });
    expect(existsSync(file(fb))).toBe(false);
    const nc = await rawAs('fa');
    nc.publish('uplink.checkpoint.fa', enc({ v: 1, hub: 'fa', count: 1, head, at: 1 }));
    await nc.flush();
    await sleep(300);
    expect(lines(file(fc, 'fa')).some((c) => c.head === head)).toBe(false);
    await nc.close();
  });

  it('each hub publishes its own audit checkpoints; another hub’s witness copy verifies its audit', async () => {
    await fa.hub.invoke('test:alpha', 'echo', { text: 'witnessed' }, { agent });
    const witness = join(fc.dir, 'fleet', 'witness', 'fa.jsonl');
    const { verifyAudit } = await import('../../../src/main/hub/audit/verify');
    // Within a few seconds of the call, fa signs a checkpoint covering it and fc writes it down.
    await until(
      'fc to hold a checkpoint of fa covering the call',
      () => {
        if (!existsSync(witness)) return false;
        const report = verifyAudit({ path: join(fa.dir, 'audit.sqlite'), witness: [witness] });
        return report.checkpoints.witness > 0 && report.ok && readFileSync(witness, 'utf8').includes(report.head);
      },
      15_000,
    );
  });
});
