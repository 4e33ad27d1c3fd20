/**
 * The fleet's signed envelope: a message is believed only when the roster's key of the hub it
 * speaks for signed exactly these bytes on exactly this subject, once, lately.
 */
import { describe, expect, it } from 'vitest';
import { keyTrust, nk, parseRoster, REPLAY_WINDOW_MS, sharedTrust } from '../../../src/main/hub/fleet/keys';
import { believeWith } from '../../../src/main/hub/fleet/link';

const [fa, fb, outsider] = [nk.createUser(), nk.createUser(), nk.createUser()];
const roster = { fleet: 'test', version: 1, hubs: { fa: fa.getPublicKey(), fb: fb.getPublicKey() } };
const data = new TextEncoder().encode('{"v":1,"hub":"fa"}');
const subject = 'uplink.presence.fa';

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('the fleet envelope', () => {
  it('is verified for its signer, and the signature is an NKey signature over the envelope bytes', () => {
    const c = clock();
    const a = keyTrust(fa, roster, c.now);
    const b = keyTrust(fb, roster, c.now);
    const h = a.seal(subject, data)!;
    expect(b.open(subject, data, h)).toEqual({ ok: true, hub: 'fa' });
    // node's ed25519 and NKeys' agree: the key pair is the NKey's own.
    const signed = new TextEncoder().encode(`uplink-fleet/1\n${subject}\n${h.get('Uplink-At')}\n${h.get('Uplink-Nonce')}\n`);
    const bytes = new Uint8Array([...signed, ...data]);
    expect(nk.fromPublic(fa.getPublicKey()).verify(bytes, Buffer.from(h.get('Uplink-Sig'), 'base64url'))).toBe(true);
  });

  it('drops a tampered payload, another subject, an unknown key, an unsigned message, and counts each', () => {
    const c = clock();
    const a = keyTrust(fa, roster, c.now);
    const b = keyTrust(fb, roster, c.now);
    const h = a.seal(subject, data)!;
    expect(b.open(subject, new TextEncoder().encode('{"v":1,"hub":"fb"}'), h)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(b.open('uplink.presence.fb', data, a.seal(subject, data))).toEqual({ ok: false, reason: 'bad_signature' });
    const stranger = keyTrust(outsider, { ...roster, hubs: { ...roster.hubs, x: outsider.getPublicKey() } }, c.now);
    expect(b.open(subject, data, stranger.seal(subject, data))).toEqual({ ok: false, reason: 'unknown_key' });
    expect(b.open(subject, data, undefined)).toEqual({ ok: false, reason: 'unsigned' });
    // A member's key speaking for another member.
    expect(believeWith(b, { subject: 'uplink.presence.fb', data, headers: a.seal('uplink.presence.fb', data) }, 'fb')).toBe(false);
    expect(b.dropped()).toMatchObject({ bad_signature: 2, unknown_key: 1, unsigned: 1, wrong_signer: 1 });
  });

  it('drops a replayed message and a stale one; a record read back from the stream is checked without either', () => {
    const c = clock();
    const a = keyTrust(fa, roster, c.now);
    const b = keyTrust(fb, roster, c.now);
    const h = a.seal(subject, data)!;
    expect(b.open(subject, data, h).ok).toBe(true);
    expect(b.open(subject, data, h)).toEqual({ ok: false, reason: 'replayed' });
    // Still remembered after the generations turn over, while it would not yet be stale.
    c.advance(REPLAY_WINDOW_MS - 1);
    expect(b.open(subject, data, h)).toEqual({ ok: false, reason: 'replayed' });
    c.advance(2);
    expect(b.open(subject, data, h)).toEqual({ ok: false, reason: 'stale' });
    expect(b.open(subject, data, h, false)).toEqual({ ok: true, hub: 'fa' });
    // From too far ahead.
    const ahead = keyTrust(fa, roster, () => c.now() + 2 * REPLAY_WINDOW_MS);
    expect(b.open(subject, data, ahead.seal(subject, data))).toEqual({ ok: false, reason: 'stale' });
    expect(b.dropped()).toMatchObject({ replayed: 2, stale: 2 });
  });

  it('remembers a nonce for as long as its message is fresh, across generations', () => {
    const c = clock();
    const b = keyTrust(fb, roster, c.now);
    // Signed a window ahead (a fast clock): fresh for two windows from now.
    const h = keyTrust(fa, roster, () => c.now() + REPLAY_WINDOW_MS).seal(subject, data)!;
    expect(b.open(subject, data, h).ok).toBe(true);
    for (let i = 0; i < 8; i++) {
      c.advance(REPLAY_WINDOW_MS / 4);
      expect(b.open(subject, data, h).ok).toBe(false);
    }
  });

  it('reads the envelope from NATS headers and from any header source, and signs and checks payloads of every size', () => {
    const c = clock();
    const a = keyTrust(fa, roster, c.now);
    const b = keyTrust(fb, roster, c.now);
    const h = a.seal(subject, data)!;
    // A stored message's headers, or anything else with a `get`.
    const plain = { get: (k: string) => h.get(k) };
    expect(b.open(subject, data, plain, false)).toEqual({ ok: true, hub: 'fa' });
    // Bigger than the buffer the signed bytes are laid out in, then small again: each is checked against its own bytes.
    const big = new TextEncoder().encode(JSON.stringify({ text: 'x'.repeat(70_000) }));
    const hb = a.seal(subject, big)!;
    expect(b.open(subject, big, hb)).toEqual({ ok: true, hub: 'fa' });
    expect(b.open(subject, big.subarray(0, big.length - 1), hb, false)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(b.open(subject, data, a.seal(subject, data))).toEqual({ ok: true, hub: 'fa' });
    // Every seal has its own nonce.
    const nonces = new Set(Array.from({ length: 1000 }, () => a.seal(subject, data)!.get('Uplink-Nonce')));
    expect(nonces.size).toBe(1000);
    expect([...nonces].every((n) => /^[0-9a-f]{24}$/.test(n))).toBe(true);
  });

  it('is nothing in a shared-token fleet: unsigned, and every message believed', () => {
    const s = sharedTrust();
    expect(s.seal(subject, data)).toBeUndefined();
    expect(believeWith(s, { subject, data }, 'fb')).toBe(true);
  });

  it('reads a roster only when every name and key is well formed, and no key serves two hubs', () => {
    expect(parseRoster(roster)).toEqual(roster);
    expect(parseRoster({ ...roster, hubs: { Fa: fa.getPublicKey() } })).toMatch(/not a valid hub name/);
    expect(parseRoster({ ...roster, hubs: { fa: 'UXYZ' } })).toMatch(/not an NKey user public key/);
    expect(parseRoster({ ...roster, hubs: { fa: fa.getPublicKey(), fb: fa.getPublicKey() } })).toMatch(/another hub's too/);
    expect(parseRoster([])).toMatch(/not a roster/);
  });
});
