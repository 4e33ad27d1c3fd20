/**
 * How a hub proves to the fleet's NATS server that it may join (docs/fleet.md, "Joining"): a token or a
 * credentials file (user JWT + NKey seed), and the CA bundle a `tls://` server is checked against.
 * Everything is read and checked when the hub starts, so a bad file is one line in `doctor` rather
 * than a connection that fails forever. No message ever quotes a file's content.
 */
import { isAbsolute, join } from 'node:path';
import { credsAuthenticator, nkeyAuthenticator } from 'nats';
import type { Authenticator, ConnectionOptions } from 'nats';
import { readBoundedFile } from '../files';
import type { FleetSettings } from '../config';
import { keyPairFromSeed, keyTrust, parseRoster, sharedTrust } from './keys';
import type { FleetTrust, NKeyPair, Roster } from './keys';

const MAX_TOKEN_BYTES = 4096;
/** A user JWT with a long permission list is a few KiB; a creds file is that plus a seed. */
const MAX_CREDS_BYTES = 64 * 1024;
/** A whole system CA bundle is about 200 KiB. */
const MAX_CA_BYTES = 1024 * 1024;
/** A seed is 58 characters; a roster of 1,000 hubs is about 80 KiB. */
const MAX_SEED_BYTES = 4096;
const MAX_ROSTER_BYTES = 1024 * 1024;
const MAKE_KEYS = "make the fleet's keys with `uplink fleet init --hubs a,b,c --out DIR`";

const MAKE_CREDS = 'make one with `nsc generate creds -a <account> -n <user>`';

/** Reads a small regular file; a secret one must be readable by its owner only (it lets a process join the fleet). */
function readSmallFile(path: string, limit: number, secret: boolean, holds: string): Buffer {
  const file = readBoundedFile(path, limit);
  if (!file.regular) throw new Error(`${path} is ${file.type}, not a regular file — hint: point the setting at the file that holds ${holds}`);
  if (secret && (file.mode & 0o077) !== 0) throw new Error(`${path} is readable by others (mode ${(file.mode & 0o777).toString(8)}) — hint: chmod 600 ${path}`);
  if (!file.bytes) throw new Error(`${path} is over ${limit} bytes — hint: it should hold ${holds} only`);
  return file.bytes;
}

/** Reads the fleet token: a small file only its owner can read. */
export function readFleetToken(path: string): string {
  const token = readSmallFile(path, MAX_TOKEN_BYTES, true, "the fleet's NATS token").toString('utf8').trim();
  if (!token) throw new Error(`${path} is empty — hint: write the fleet's NATS token into it`);
  return token;
}

/** The `sub` claim of a JWT, or undefined when it is not a JWT. */
function jwtSubject(jwt: string): string | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a NATS credentials file (owner-only) and checks it the way the server will: a user JWT
 * and a user NKey seed that belong together. The authenticator parses the same bytes on each
 * (re)connect.
 */
export function readFleetCreds(path: string): Authenticator {
  const bytes = readSmallFile(path, MAX_CREDS_BYTES, true, 'a NATS user JWT and its NKey seed');
  const auth = credsAuthenticator(new Uint8Array(bytes));
  let probe: { jwt?: string; nkey?: string };
  try {
    // Signing a throwaway nonce runs the parse and seed decoding a connection would.
    probe = auth('uplink-creds-check') as { jwt?: string; nkey?: string };
  } catch {
    throw new Error(
      `${path} is not a NATS credentials file (it needs a "BEGIN NATS USER JWT" block and a "BEGIN USER NKEY SEED" block with a valid seed) — hint: ${MAKE_CREDS}`,
    );
  }
  const { jwt = '', nkey = '' } = probe;
  if (!nkey.startsWith('U')) throw new Error(`${path} holds an NKey seed that is not a user's — hint: ${MAKE_CREDS}`);
  const sub = jwtSubject(jwt);
  if (sub === undefined) throw new Error(`${path} holds a malformed user JWT — hint: ${MAKE_CREDS}`);
  if (sub !== nkey) throw new Error(`${path} holds a user JWT and an NKey seed of different users — hint: ${MAKE_CREDS}`);
  return auth;
}

/** Reads the CA bundle a `tls://` server's certificate is checked against (not secret). */
export function readFleetCa(path: string): string {
  const ca = readSmallFile(path, MAX_CA_BYTES, false, 'PEM CA certificates').toString('utf8');
  if (!ca.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`${path} holds no PEM certificate — hint: point ca_file at the CA bundle (PEM) that signed the NATS server's certificate`);
  return ca;
}

/** Reads this hub's NKey seed: a small file only its owner can read (whoever holds it speaks for the hub). */
export function readFleetSeed(path: string): NKeyPair {
  const seed = readSmallFile(path, MAX_SEED_BYTES, true, "this hub's NKey seed").toString('utf8');
  return keyPairFromSeed(seed, path);
}

/** Reads the fleet's roster (public, but what it says is who may speak for whom). */
export function readFleetRoster(path: string): Roster {
  const text = readSmallFile(path, MAX_ROSTER_BYTES, false, "the fleet's roster").toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON — hint: ${MAKE_KEYS}`);
  }
  const roster = parseRoster(value);
  if (typeof roster === 'string') throw new Error(`${path}: ${roster} — hint: ${MAKE_KEYS}`);
  return roster;
}

/**
 * How this hub signs and checks fleet messages: with its seed against the roster, whose key for
 * this hub's name must be the seed's; unsigned in a shared-token fleet (no roster).
 */
export function fleetTrust(settings: FleetSettings, dataDir: string): FleetTrust {
  if (!settings.seed_file || !settings.roster_file) return sharedTrust();
  const at = (file: string): string => (isAbsolute(file) ? file : join(dataDir, file));
  const kp = readFleetSeed(at(settings.seed_file));
  const roster = readFleetRoster(at(settings.roster_file));
  const listed = roster.hubs[settings.name];
  if (!listed)
    throw new Error(
      `the roster ${settings.roster_file} has no hub ${settings.name} (it lists ${Object.keys(roster.hubs).join(', ') || 'none'}) — hint: add this hub with \`uplink fleet init\` and copy the new roster to every hub`,
    );
  if (listed !== kp.getPublicKey())
    throw new Error(
      `the seed ${settings.seed_file} is not hub ${settings.name}'s key in the roster ${settings.roster_file} — hint: use the ${settings.name}.nk that \`uplink fleet init\` wrote with this roster`,
    );
  return keyTrust(kp, roster);
}

/** The auth and TLS part of the fleet's NATS connection options; throws a one-line error for a file that cannot be used. */
export function fleetAuth(settings: FleetSettings, dataDir: string): Pick<ConnectionOptions, 'token' | 'authenticator' | 'tls'> {
  const at = (file: string): string => (isAbsolute(file) ? file : join(dataDir, file));
  const tls = settings.url.startsWith('tls://') ? { tls: settings.ca_file ? { ca: readFleetCa(at(settings.ca_file)) } : {} } : {};
  if (settings.seed_file) return { authenticator: nkeyAuthenticator(readFleetSeed(at(settings.seed_file)).getSeed()), ...tls };
  if (settings.creds_file) return { authenticator: readFleetCreds(at(settings.creds_file)), ...tls };
  if (settings.token_file) return { token: readFleetToken(at(settings.token_file)), ...tls };
  throw new Error('the fleet section names none of seed_file, token_file, creds_file — hint: add one of them');
}
