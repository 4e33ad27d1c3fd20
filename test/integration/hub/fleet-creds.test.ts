/**
 * Hubs joining a fleet with NATS credentials files on a real nats-server in operator mode (JWT
 * auth, accounts preloaded in memory): members whose user the server knows call each other; a
 * user it does not know, or a creds file others can read, leaves the hub working alone with a
 * doctor warning that never quotes the file. Over TLS, a private CA is trusted through ca_file.
 */
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, createOperator, createUser, encodeAccount, encodeOperator, encodeUser, fmtCreds } from '@nats-io/jwt';
import type { KeyPair } from '@nats-io/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import { joinFleet } from '../../../src/main/hub/fleet';
import type { FleetHub } from '../../../src/main/hub/fleet';
import type { AgentIdentity } from '../../../src/main/hub';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';
import { freePort, startNatsServer, stopNatsServer, until } from '../../fixtures/nats-server';

const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'claude', session: 's1' };

/** A user of `account` (signed by it), as the creds file `nsc generate creds` would write. */
async function userCreds(name: string, account: KeyPair): Promise<Uint8Array> {
  const user = createUser();
  return fmtCreds(await encodeUser(name, user, account), user);
}

describe('a fleet whose hubs join with NATS credentials files', () => {
  let server: ChildProcess | undefined;
  let port = 0;
  let account: KeyPair;
  const members: FleetHub[] = [];

  let conf = '';

  function openMember(
    name: string,
    creds: Uint8Array,
    mode = 0o600,
    at = port,
    tls: { ca_file?: string } | undefined = undefined,
  ): { hub: FleetHub; dir: string; driver: ReturnType<typeof createTestDriver> } {
    const dir = tmpDataDir(`uplink-creds-${name}-`);
    writeFileSync(join(dir, 'fleet.creds'), creds, { mode });
    // Over TLS a host name, as in the certificate: the NATS client checks an IP address url against "localhost".
    const fleet = { url: tls ? `tls://localhost:${at}` : `nats://127.0.0.1:${at}`, name, creds_file: 'fleet.creds', ...tls };
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ fleet }), { mode: 0o600 });
    const driver = createTestDriver('test', name);
    const core = createHub({ dataDir: dir, drivers: [driver], watchConfig: false, panelGraceMs: 0 });
    const hub = joinFleet(core, fleet, { heartbeatMs: 150, listTimeoutMs: 1000 });
    members.push(hub);
    return { hub, dir, driver };
  }

  beforeAll(async () => {
    const operator = createOperator();
    account = createAccount();
    // Unlimited, as `nsc add account` makes it (a JWT without limits allows no connection at all).
    const limits = { conn: -1, subs: -1, data: -1, payload: -1, imports: -1, exports: -1, leaf: -1, wildcards: true };
    const accountJwt = await encodeAccount('fleet', account, { limits }, { signer: operator });
    const dir = tmpDataDir('uplink-nats-operator-');
    conf = join(dir, 'server.conf');
    writeFileSync(
      conf,
      [
        `operator: ${await encodeOperator('uplink-test', operator)}`,
        'resolver: MEMORY',
        `resolver_preload: { ${account.getPublicKey()}: ${accountJwt} }`,
        '',
      ].join('\n'),
    );
    port = await freePort();
    server = await startNatsServer(port, ['-c', conf]);
  });

  afterAll(async () => {
    await Promise.all(members.map((m) => m.close()));
    await stopNatsServer(server);
  });

  it('lets two hubs whose users the server knows join and call each other', async () => {
    const a = openMember('a', await userCreds('hub-a', account));
    const b = openMember('b', await userCreds('hub-b', account));
    await until(
      'a and b to see each other',
      () =>
        a.hub.fleetStatus().members.some((h) => h.hub === 'b' && h.state === 'connected') &&
        b.hub.fleetStatus().members.some((h) => h.hub === 'a' && h.state === 'connected'),
    );
    expect(await a.hub.invoke('b/test:alpha', 'echo', { text: 'signed in' }, { agent })).toEqual({ text: 'signed in' });
    expect(b.driver.state.invoked.at(-1)).toMatchObject({ addr: 'alpha', op: 'echo', agent: 'a/claude' });
    // Joined: the one fleet line left says what credentials without a roster cannot promise.
    expect((await a.hub.doctor()).warnings ?? []).toEqual([
      'fleet a: members of this fleet can speak for each other (per-hub credentials, but no roster: messages are unsigned) — hint: uplink fleet init',
    ]);
  });

  it('keeps a hub whose user the server does not know out of the fleet, working alone, with a doctor warning', async () => {
    const creds = await userCreds('stranger', createAccount());
    const x = openMember('x', creds);
    const warning = await until('doctor to say why', async () => (await x.hub.doctor()).warnings?.find((w) => w.startsWith('fleet x: cannot join')));
    expect(warning).toMatch(/^fleet x: cannot join the fleet at nats:\/\/127\.0\.0\.1:\d+: .*authorization violation/i);
    expect(x.hub.fleetStatus().connected).toBe(false);
    expect(await x.hub.invoke('test:alpha', 'echo', { text: 'alone' }, { agent })).toEqual({ text: 'alone' });
    const seed = /SU[A-Z2-7]{50,}/.exec(new TextDecoder().decode(creds))![0];
    expect(warning).not.toContain(seed);
  });

  it('says why it is out while the server is down, and joins once the server is up', async () => {
    const later = await freePort();
    const z = openMember('z', await userCreds('hub-z', account), 0o600, later);
    const warning = await until('doctor to say why', async () => (await z.hub.doctor()).warnings?.find((w) => w.startsWith('fleet z: cannot join')));
    expect(warning).toMatch(/^fleet z: cannot join the fleet at nats:\/\/127\.0\.0\.1:\d+: /);
    const second = await startNatsServer(later, ['-c', conf]);
    try {
      await until('z to join', () => z.hub.fleetStatus().connected);
      expect((await z.hub.doctor()).warnings ?? []).not.toEqual(expect.arrayContaining([expect.stringMatching(/^fleet z: cannot join/)]));
    } finally {
      await z.hub.close();
      await stopNatsServer(second);
    }
  });

  it('refuses a creds file others can read, with the chmod hint', async () => {
    const y = openMember('y', await userCreds('hub-y', account), 0o644);
    const warning = (await y.hub.doctor()).warnings?.find((w) => w.startsWith('fleet y: '));
    expect(warning).toMatch(/fleet\.creds is readable by others \(mode 644\) — hint: chmod 600 .*fleet\.creds$/);
    expect(y.hub.fleetStatus().connected).toBe(false);
    expect(readFileSync(join(y.dir, 'fleet.creds'), 'utf8')).toContain('NATS USER JWT');
  });

  it('joins a tls:// server whose certificate a private CA signed when ca_file names that CA, and not without it', async () => {
    const dir = tmpDataDir('uplink-nats-tls-');
    const ssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=uplink test CA');
    ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=DNS:localhost\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.cnf');
    const tlsPort = await freePort();
    const tlsServer = await startNatsServer(tlsPort, ['-c', conf, '--tls', '--tlscert', join(dir, 'server.pem'), '--tlskey', join(dir, 'server.key')]);
    try {
      const t = openMember('t', await userCreds('hub-t', account), 0o600, tlsPort, { ca_file: join(dir, 'ca.pem') });
      const u = openMember('u', await userCreds('hub-u', account), 0o600, tlsPort, {});
      await until('t to join over TLS', () => t.hub.fleetStatus().connected);
      const warning = await until('u to say why', async () => (await u.hub.doctor()).warnings?.find((w) => w.startsWith('fleet u: cannot join')));
      expect(warning).toMatch(/certificate/i);
      await Promise.all([t.hub.close(), u.hub.close()]);
    } finally {
      await stopNatsServer(tlsServer);
    }
  });
});
