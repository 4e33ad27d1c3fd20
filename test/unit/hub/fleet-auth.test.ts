/** How a hub authenticates to the fleet's NATS server: the token, creds and CA files, and the fleet section's one way to log in. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, createUser, encodeUser, fmtCreds } from '@nats-io/jwt';
import { describe, expect, it } from 'vitest';
import { ConfigStore } from '../../../src/main/hub/config/store';
import { fleetAuth, readFleetCa, readFleetCreds, readFleetToken } from '../../../src/main/hub/fleet/auth';
import { tmpDataDir } from '../../fixtures/hub-build';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

async function creds(): Promise<{ text: string; seed: string; jwt: string; publicKey: string }> {
  const account = createAccount();
  const user = createUser();
  const jwt = await encodeUser('hub', user, account);
  return { text: new TextDecoder().decode(fmtCreds(jwt, user)), seed: new TextDecoder().decode(user.getSeed()), jwt, publicKey: user.getPublicKey() };
}

function file(dir: string, name: string, content: string | Uint8Array, mode = 0o600): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode });
  return path;
}

/** The error `fn` throws, for the checks on its message. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a throw');
}

describe('the fleet token file', () => {
  it('is read trimmed when only its owner can read it', () => {
    const dir = tmpDataDir('uplink-auth-');
    expect(readFleetToken(file(dir, 't', ' tok\n'))).toBe('tok');
  });

  it('is refused when others can read it, with the chmod hint', () => {
    const dir = tmpDataDir('uplink-auth-');
    const path = file(dir, 't', 'tok\n', 0o640);
    expect(thrown(() => readFleetToken(path))).toBe(`${path} is readable by others (mode 640) — hint: chmod 600 ${path}`);
  });

  it('is refused when empty, oversized or a directory', () => {
    const dir = tmpDataDir('uplink-auth-');
    expect(thrown(() => readFleetToken(file(dir, 'empty', '\n')))).toMatch(/is empty — hint: write the fleet's NATS token into it$/);
    expect(thrown(() => readFleetToken(file(dir, 'big', 'x'.repeat(5000))))).toMatch(/is over 4096 bytes — hint: /);
    mkdirSync(join(dir, 'd'), { mode: 0o700 });
    expect(thrown(() => readFleetToken(join(dir, 'd')))).toMatch(/d is a directory, not a regular file — hint: /);
  });
});

describe('the fleet creds file', () => {
  it('gives an authenticator that signs in as the user in the file', async () => {
    const dir = tmpDataDir('uplink-auth-');
    const c = await creds();
    const auth = readFleetCreds(file(dir, 'fleet.creds', c.text));
    expect(auth('nonce')).toMatchObject({ jwt: c.jwt, nkey: c.publicKey });
  });

  it('is refused when others can read it, with the chmod hint', async () => {
    const dir = tmpDataDir('uplink-auth-');
    const path = file(dir, 'fleet.creds', (await creds()).text, 0o644);
    expect(thrown(() => readFleetCreds(path))).toBe(`${path} is readable by others (mode 644) — hint: chmod 600 ${path}`);
  });

  it('is refused when malformed, in one line that quotes nothing of the file', async () => {
    const dir = tmpDataDir('uplink-auth-');
    const c = await creds();
    const other = await creds();
    const account = createAccount();
    const cases: Array<[string, RegExp]> = [
      ['just a token\n', /is not a NATS credentials file/],
      [c.text.replace(/-----BEGIN USER NKEY SEED-----[\s\S]*$/, ''), /is not a NATS credentials file/],
      [c.text.replace(c.seed, `${c.seed.slice(0, -4)}AAAA`), /is not a NATS credentials file/],
      [c.text.replace(c.seed, new TextDecoder().decode(account.getSeed())), /holds an NKey seed that is not a user's/],
      [c.text.replace(c.jwt, 'not.a-jwt'), /holds a malformed user JWT/],
      [c.text.replace(c.jwt, other.jwt), /holds a user JWT and an NKey seed of different users/],
    ];
    for (const [i, [text, expected]] of cases.entries()) {
      const message = thrown(() => readFleetCreds(file(dir, `bad${i}.creds`, text)));
      expect(message).toMatch(expected);
      expect(message).toMatch(/ — hint: make one with `nsc generate creds -a <account> -n <user>`$/);
      expect(message).not.toMatch(/\n/);
      for (const secret of [c.seed, c.jwt, other.jwt, c.seed.slice(0, 20)]) expect(message).not.toContain(secret);
    }
  });
});

describe('the fleet CA file', () => {
  it('is read without a mode check (a CA bundle is not secret) and must hold a PEM certificate', () => {
    const dir = tmpDataDir('uplink-auth-');
    expect(readFleetCa(file(dir, 'ca.pem', CERT, 0o644))).toBe(CERT);
    expect(thrown(() => readFleetCa(file(dir, 'not.pem', 'hello')))).toMatch(/holds no PEM certificate — hint: point ca_file at the CA bundle/);
  });
});

describe('fleetAuth', () => {
  it('reads relative files under the data dir and passes the token, or the creds, and the CA for tls://', async () => {
    const dir = tmpDataDir('uplink-auth-');
    file(dir, 'fleet.token', 'tok\n');
    file(dir, 'fleet.creds', (await creds()).text);
    file(dir, 'ca.pem', CERT, 0o644);
    expect(fleetAuth({ url: 'nats://127.0.0.1:4222', name: 'a', token_file: 'fleet.token' }, dir)).toEqual({ token: 'tok' });
    expect(fleetAuth({ url: 'tls://nats.example:4222', name: 'a', token_file: join(dir, 'fleet.token') }, '/nowhere')).toEqual({ token: 'tok', tls: {} });
    const withCreds = fleetAuth({ url: 'tls://nats.example:4222', name: 'a', creds_file: 'fleet.creds', ca_file: 'ca.pem' }, dir);
    expect(withCreds).toEqual({ authenticator: expect.any(Function), tls: { ca: CERT } });
    expect(withCreds).not.toHaveProperty('token');
  });
});

describe('the fleet section of config.json', () => {
  const load = (fleet: unknown): string | undefined => {
    const dir = tmpDataDir('uplink-fleet-config-');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ fleet }));
    return new ConfigStore(join(dir, 'config.json')).error();
  };

  it('takes a creds file, or a token file, and a CA file for a tls:// url', () => {
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', creds_file: 'fleet.creds' })).toBeUndefined();
    expect(load({ url: 'tls://nats.example:4222', name: 'a', token_file: 'fleet.token', ca_file: 'ca.pem' })).toBeUndefined();
  });

  it('needs exactly one of seed_file, token_file and creds_file, each refusal one line with a hint', () => {
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', token_file: 't', creds_file: 'c' })).toMatch(
      /: \/fleet has token_file and creds_file — hint: keep the one the NATS server expects and remove the other$/,
    );
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a' })).toMatch(
      /: \/fleet needs seed_file and roster_file \(from `uplink fleet init`\), or token_file, or creds_file — hint: run `uplink fleet init/,
    );
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', seed_file: 'a.nk', roster_file: 'roster.json' })).toBeUndefined();
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', seed_file: 'a.nk' })).toMatch(/\/fleet has seed_file without roster_file — hint: /);
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', seed_file: 'a.nk', token_file: 't', roster_file: 'r' })).toMatch(
      /\/fleet has token_file and seed_file — hint: /,
    );
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'checkpoint', token_file: 't' })).toMatch(
      /\/fleet\/name checkpoint is a word the fleet's own subjects use/,
    );
  });

  it('refuses a CA file for a url without TLS', () => {
    expect(load({ url: 'nats://127.0.0.1:4222', name: 'a', token_file: 't', ca_file: 'ca.pem' })).toMatch(
      /\/fleet\/ca_file is only used with a tls:\/\/ url — hint: /,
    );
  });
});
