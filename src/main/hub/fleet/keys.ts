/**
 * Fleet identity by key (docs/fleet.md, "Identity"): each hub holds its own ed25519 key pair as a
 * NATS NKey (a user seed `SU…`, public key `U…`), and the fleet's roster maps public keys to hub
 * names. Every message a hub sends carries a signed envelope in its NATS headers; a receiver
 * believes the hub a message speaks for only when that hub's key signed it.
 *
 * The envelope signs `uplink-fleet/1 \n subject \n at \n nonce \n` followed by the payload's exact
 * bytes: the subject binds a message to where it was sent (a presence cannot be replayed as a
 * call, a reply to one inbox cannot answer another), `at` and the nonce make a replay detectable.
 *
 * NKeys' own sign/verify (tweetnacl) takes milliseconds per message; node's ed25519 is the same
 * algorithm on the same 32-byte keys, about a hundred times faster, so the key pair comes from
 * nkeys and the signatures from node:crypto.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign as edSign, verify as edVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { MsgHdrsImpl, headers as natsHeaders, nkeys } from 'nats';
import type { MsgHdrs } from 'nats';

/** The part of nkeys.js a hub uses (the `nats` package re-exports it untyped). */
export interface NKeyPair {
  getPublicKey(): string;
  getSeed(): Uint8Array;
  getPrivateKey(): Uint8Array;
  sign(input: Uint8Array): Uint8Array;
  verify(input: Uint8Array, sig: Uint8Array): boolean;
}
interface NKeysModule {
  createUser(): NKeyPair;
  fromSeed(seed: Uint8Array): NKeyPair;
  fromPublic(pub: string): NKeyPair;
}
export const nk = nkeys as NKeysModule;

export const HEADER_KEY = 'Uplink-Key';
export const HEADER_SIG = 'Uplink-Sig';
export const HEADER_AT = 'Uplink-At';
export const HEADER_NONCE = 'Uplink-Nonce';
const DOMAIN = 'uplink-fleet/1';

/**
 * A live message older, or further ahead, than this is stale (clocks of a fleet's machines differ
 * by a little). Its nonce is remembered at least twice as long, the span in which it is not stale.
 */
export const REPLAY_WINDOW_MS = 60 * 1000;

/** Why a message was dropped, counted per reason for the Fleet view and `doctor`. */
export const DROP_REASONS = ['unsigned', 'bad_signature', 'unknown_key', 'wrong_signer', 'replayed', 'stale'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** The fleet's roster: who may speak for which hub. */
export interface Roster {
  fleet: string;
  version: number;
  /** Hub name → its public key (`U…`). */
  hubs: Record<string, string>;
}

const PUBLIC_KEY = /^U[A-Z2-7]{55}$/;
const NONCE = /^[0-9a-f]{24}$/;

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** RFC 4648 base32 without padding, as NKeys are written. */
function base32(text: string): Uint8Array {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of text) {
    const i = alphabet.indexOf(ch);
    if (i < 0) throw new Error('not base32');
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** node:crypto's public key for an NKey user key, or undefined when it is not one (nkeys checks its prefix and checksum). */
export function publicKeyObject(pub: string): KeyObject | undefined {
  if (!PUBLIC_KEY.test(pub)) return undefined;
  try {
    nk.fromPublic(pub);
    // One prefix byte, the 32-byte ed25519 key, a 2-byte checksum.
    const raw = base32(pub).subarray(1, 33);
    return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** node:crypto's private key for an NKey pair: its seed is two prefix bytes, the 32-byte ed25519 seed, a checksum. */
export function privateKeyObject(kp: NKeyPair): KeyObject {
  const raw = base32(new TextDecoder().decode(kp.getSeed())).subarray(2, 34);
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, raw]), format: 'der', type: 'pkcs8' });
}

/** The key pair of a seed (`SU…`); throws a one-line error that never quotes the seed. */
export function keyPairFromSeed(seed: string, where: string): NKeyPair {
  let kp: NKeyPair;
  try {
    kp = nk.fromSeed(new TextEncoder().encode(seed.trim()));
  } catch {
    throw new Error(`${where} holds no valid NKey seed — hint: make the fleet's keys with \`uplink fleet init --hubs a,b,c --out DIR\``);
  }
  if (!kp.getPublicKey().startsWith('U'))
    throw new Error(`${where} holds an NKey seed that is not a user's (SU…) — hint: use the .nk file \`uplink fleet init\` wrote`);
  return kp;
}

/** The roster in `value` if it is one (names and keys well formed, no key twice); else the reason. */
export function parseRoster(value: unknown): Roster | string {
  const r = value as Partial<Roster> | null;
  if (!r || typeof r !== 'object' || typeof r.fleet !== 'string' || typeof r.version !== 'number' || !r.hubs || typeof r.hubs !== 'object')
    return 'it is not a roster ({"fleet", "version", "hubs": {name: key}})';
  const seen = new Set<string>();
  for (const [hub, key] of Object.entries(r.hubs)) {
    if (!/^[a-z][a-z0-9-]*$/.test(hub) || hub.length > 64) return `it names a hub "${hub.slice(0, 64)}" that is not a valid hub name`;
    if (typeof key !== 'string' || !publicKeyObject(key)) return `hub ${hub}'s key is not an NKey user public key (U…)`;
    if (seen.has(key)) return `hub ${hub}'s key is another hub's too`;
    seen.add(key);
  }
  return { fleet: r.fleet, version: r.version, hubs: { ...r.hubs } };
}

/** A message's envelope as it arrived: the signer's hub, or why the message is dropped. */
export type Opened = { ok: true; hub: string } | { ok: false; reason: DropReason };

/** The header values of one message (live NATS headers, or a stored message's). */
interface HeaderSource {
  get(key: string): string;
}

/**
 * The envelope's header values ('' where missing). NATS headers are read from their map: their
 * `get` lists and filters every key on each call, four times a message on a reader of the whole fleet.
 */
function envelopeOf(headers: HeaderSource | undefined): { key: string; sig: string; at: string; nonce: string } {
  if (!headers) return { key: '', sig: '', at: '', nonce: '' };
  const map = headers instanceof MsgHdrsImpl ? headers.headers : undefined;
  const first = (name: string): string => (map ? map.get(name)?.[0] : headers.get(name)) ?? '';
  return { key: first(HEADER_KEY), sig: first(HEADER_SIG), at: first(HEADER_AT), nonce: first(HEADER_NONCE) };
}

/**
 * How a hub signs what it sends and checks what it receives. `signed` is false in a shared-token
 * fleet (no roster): nothing is signed, nothing checked, and `open` cannot say who spoke.
 */
export interface FleetTrust {
  readonly signed: boolean;
  /** Headers carrying this hub's signature over `subject` + `data`; undefined when unsigned. */
  seal(subject: string, data: Uint8Array): MsgHdrs | undefined;
  /**
   * Who signed this message, or why it is dropped (and counted). `live` messages must be fresh and
   * unseen; a record read back from the stream is old by nature and checked by its sequence instead.
   */
  open(subject: string, data: Uint8Array, headers: HeaderSource | undefined, live?: boolean): Opened;
  /** Counts a drop found after the signature (a hub speaking for another, a reply from the wrong hub). */
  drop(reason: DropReason): void;
  /** Drops so far, per reason. */
  dropped(): Record<DropReason, number>;
  /** The hub name the roster gives this key, or undefined. */
  hubOf(publicKey: string): string | undefined;
}

function zeroCounts(): Record<DropReason, number> {
  return Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
}

/** Nonces are cut from a pooled buffer of random bytes: one call into the CSPRNG per 256 messages instead of one each. */
const NONCE_BYTES = 12;
let noncePool = Buffer.alloc(0);
let nonceAt = 0;
function freshNonce(): string {
  if (nonceAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_BYTES * 256);
    nonceAt = 0;
  }
  nonceAt += NONCE_BYTES;
  return noncePool.toString('hex', nonceAt - NONCE_BYTES, nonceAt);
}

/** Where the signed bytes are laid out: signing and verifying are synchronous, so one buffer serves every message. */
let scratch = Buffer.allocUnsafe(8 * 1024);

/** The bytes a signature covers, valid until the next call. */
function signedBytes(subject: string, at: string, nonce: string, data: Uint8Array): Buffer {
  const head = `${DOMAIN}\n${subject}\n${at}\n${nonce}\n`;
  const size = Buffer.byteLength(head) + data.byteLength;
  if (size > scratch.length) scratch = Buffer.allocUnsafe(Math.max(size, 2 * scratch.length));
  const n = scratch.write(head, 0);
  scratch.set(data, n);
  return scratch.subarray(0, size);
}

/** A shared-token fleet: messages go unsigned, and any member can speak for another. */
export function sharedTrust(): FleetTrust {
  const counts = zeroCounts();
  return {
    signed: false,
    seal: () => undefined,
    open: () => ({ ok: true, hub: '' }),
    drop: (reason) => void counts[reason]++,
    dropped: () => ({ ...counts }),
    hubOf: () => undefined,
  };
}

/** Signs as `kp` and believes only the roster's keys. `now` is injectable for tests. */
export function keyTrust(kp: NKeyPair, roster: Roster, now: () => number = Date.now): FleetTrust {
  const privateKey = privateKeyObject(kp);
  const publicKey = kp.getPublicKey();
  const byKey = new Map<string, { hub: string; key: KeyObject }>();
  for (const [hub, key] of Object.entries(roster.hubs)) {
    const obj = publicKeyObject(key);
    if (obj) byKey.set(key, { hub, key: obj });
  }
  const counts = zeroCounts();
  /** Nonces seen within the replay window, with when they expire; swept as the window moves. */
  let seen = new Map<string, number>();
  let older = new Map<string, number>();
  let swept = now();
  const remember = (nonce: string, t: number): boolean => {
    if (t - swept > 2 * REPLAY_WINDOW_MS) {
      // Two generations, each two windows long: a nonce outlives the span its message is fresh in; memory is bounded by the rate.
      older = seen;
      seen = new Map();
      swept = t;
    }
    if (seen.has(nonce) || older.has(nonce)) return false;
    seen.set(nonce, t);
    return true;
  };
  const fail = (reason: DropReason): Opened => {
    counts[reason]++;
    return { ok: false, reason };
  };
  return {
    signed: true,
    seal(subject, data) {
      const at = String(now());
      const nonce = freshNonce();
      const h = natsHeaders();
      // Fresh headers: `append` skips the search for an earlier value that `set` makes.
      h.append(HEADER_KEY, publicKey);
      h.append(HEADER_AT, at);
      h.append(HEADER_NONCE, nonce);
      h.append(HEADER_SIG, edSign(null, signedBytes(subject, at, nonce, data), privateKey).toString('base64url'));
      return h;
    },
    open(subject, data, headers, live = true) {
      const { key, sig, at, nonce } = envelopeOf(headers);
      if (!key && !sig) return fail('unsigned');
      const signer = byKey.get(key);
      if (!signer) return fail('unknown_key');
      if (!/^[0-9]{1,16}$/.test(at) || !NONCE.test(nonce) || !/^[A-Za-z0-9_-]{86}$/.test(sig)) return fail('bad_signature');
      let good = false;
      try {
        good = edVerify(null, signedBytes(subject, at, nonce, data), signer.key, Buffer.from(sig, 'base64url'));
      } catch {
        good = false;
      }
      if (!good) return fail('bad_signature');
      if (live) {
        const t = now();
        if (Math.abs(t - Number(at)) > REPLAY_WINDOW_MS) return fail('stale');
        if (!remember(`${key}:${nonce}`, t)) return fail('replayed');
      }
      return { ok: true, hub: signer.hub };
    },
    drop: (reason) => void counts[reason]++,
    dropped: () => ({ ...counts }),
    hubOf: (k) => byKey.get(k)?.hub,
  };
}
