/**
 * The hub's secret mask: every occurrence of a live secret in what a driver returns becomes the
 * marker, nothing else changes, and a value with no secret in it comes back as the same object.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HubError } from '../../../src/main/hub/errors';
import { liveSecrets, MIN_SECRET_LENGTH, SECRET_MARKER, SecretMask } from '../../../src/main/hub/credentials/mask';

const secret = (bytes = 32): string => randomBytes(bytes).toString('base64url');
const M = SECRET_MARKER;

function maskWith(...secrets: string[]): SecretMask {
  const mask = new SecretMask();
  for (const s of secrets) mask.add(s);
  return mask;
}

describe('SecretMask', () => {
  it('masks every occurrence, in every string of a JSON value, keys too', () => {
    const a = secret();
    const b = secret(24);
    const mask = maskWith(a, b);
    expect(mask.maskText(`x ${a} y ${a}${b} z`)).toBe(`x ${M} y ${M}${M} z`);
    const value = { text: `token=${a}`, lines: [`#code=${b}`, 'plain', 3, null, { deep: [[`${a}`]] }], [a]: true, n: 1 };
    const masked = mask.mask(value);
    expect(masked).toEqual({ text: `token=${M}`, lines: [`#code=${M}`, 'plain', 3, null, { deep: [[M]] }], [M]: true, n: 1 });
    // The original is left as it was.
    expect(value.text).toBe(`token=${a}`);
    expect(JSON.stringify(masked)).not.toContain(a);
  });

  it('merges overlapping secrets into one marker', () => {
    const a = secret();
    // b begins with a's last 20 characters: in "a+rest of b" they overlap.
    const b = a.slice(-20) + secret(12);
    const mask = maskWith(a, b);
    const joined = a + b.slice(20);
    expect(mask.maskText(`[${joined}]`)).toBe(`[${M}]`);
    // One secret inside another is covered by the longer one.
    const inner = secret();
    const outer = `${secret(9)}${inner}${secret(9)}`;
    expect(maskWith(inner, outer).maskText(`<${outer}> <${inner}>`)).toBe(`<${M}> <${M}>`);
  });

  it('is a no-op when no secret occurs: the same value, the same strings', () => {
    const mask = maskWith(secret(), secret());
    const value = { text: 'an ordinary pane\nwith lines', list: ['a', 'b'], n: 3, ok: true, nothing: null };
    expect(mask.mask(value)).toBe(value);
    const text = 'x'.repeat(10_000);
    expect(mask.maskText(text)).toBe(text);
    expect(mask.mask(42)).toBe(42);
    expect(mask.mask(undefined)).toBe(undefined);
    // No secret registered at all.
    expect(new SecretMask().mask(value)).toBe(value);
  });

  it('never registers, so never masks, short strings', () => {
    const mask = new SecretMask();
    for (const word of ['a', 'the', 'password', 'x'.repeat(MIN_SECRET_LENGTH - 1), 'has white space in it, long enough']) mask.add(word);
    expect(mask.size).toBe(0);
    const text = `the password is ${'x'.repeat(MIN_SECRET_LENGTH - 1)}; has white space in it, long enough`;
    expect(mask.maskText(text)).toBe(text);
    // A registered secret does not make its short substrings masked.
    const s = secret();
    mask.add(s);
    expect(mask.maskText(`${s.slice(0, 8)} ${s.slice(-8)}`)).toBe(`${s.slice(0, 8)} ${s.slice(-8)}`);
  });

  it('drops a secret once it is deleted', () => {
    const s = secret();
    const mask = maskWith(s);
    const value = { text: s };
    expect(mask.mask(value)).toEqual({ text: M });
    mask.delete(s);
    expect(mask.mask(value)).toBe(value);
    expect(mask.size).toBe(0);
  });

  it('masks a secret broken across lines by a hard wrap, and the longer piece of one broken by anything else', () => {
    const s = secret();
    const mask = maskWith(s);
    // A hard wrap at a narrow column, the next line indented.
    expect(mask.maskText(`link: ${s.slice(0, 15)}\n      ${s.slice(15)} done\nnext`)).toBe(`link: ${M} done\nnext`);
    // CRLF and trailing blanks around the break.
    expect(mask.maskText(`${s.slice(0, 30)}  \r\n${s.slice(30)}`)).toBe(M);
    // A TUI border between the pieces: the longer piece is masked, the shorter one (under half) shows.
    const bordered = mask.maskText(`│ ${s.slice(0, 30)} │\n│ ${s.slice(30)} │`);
    expect(bordered).toBe(`│ ${M} │\n│ ${s.slice(30)} │`);
    expect(bordered).not.toContain(s.slice(0, s.length >> 1));
    // Broken early, the end is the longer piece; cut off by a read's limit, the beginning.
    expect(mask.maskText(`│ ${s.slice(0, 5)} │\n│ ${s.slice(5)} │`)).toBe(`│ ${s.slice(0, 5)} │\n│ ${M} │`);
    expect(mask.maskText(`tail: ${s.slice(0, 30)}`)).toBe(`tail: ${M}`);
  });

  it('does not scan encoded images under an image key, but does scan any other field', () => {
    const s = secret();
    const mask = maskWith(s);
    const png = `iVBORw0KGgo${'A'.repeat(100)}${s}`;
    const value = { png_base64: png, text: png };
    expect(mask.mask(value)).toEqual({ png_base64: png, text: `iVBORw0KGgo${'A'.repeat(100)}${M}` });
  });

  it('masks a HubError: message, hint and evidence, keeping its kind and driver', () => {
    const s = secret();
    const mask = maskWith(s);
    const err = new HubError('tmux', 'Upstream', `pane said ${s}`, { hint: `retry ${s}`, evidence: `saw ${s}` });
    const masked = mask.maskError(err);
    expect(masked).toMatchObject({ driver: 'tmux', kind: 'Upstream', message: `pane said ${M}`, hint: `retry ${M}`, evidence: `saw ${M}` });
    expect(masked.rendered).not.toContain(s);
    const clean = new HubError('tmux', 'NotFound', 'no such pane');
    expect(mask.maskError(clean)).toBe(clean);
  });

  it('masks a record field by field, copying it only when a field changed', () => {
    const s = secret();
    const mask = maskWith(s);
    const clean = { at: 1, op: 'read', channel: 'tmux:%1', output: { text: 'fine' } };
    expect(mask.maskFields(clean)).toBe(clean);
    const leaky = { ...clean, output: { text: s }, message: `saw ${s}` };
    expect(mask.maskFields(leaky)).toEqual({ ...clean, output: { text: M }, message: `saw ${M}` });
    expect(leaky.output.text).toBe(s);
    // Fields the caller vouches for are left alone.
    expect(mask.maskFields({ id: s, text: s }, new Set(['id']))).toEqual({ id: s, text: M });
  });

  it('masks secrets that are not base64url too', () => {
    const s = `${secret()}.+*?(|)`;
    expect(maskWith(s).maskText(`a ${s} b`)).toBe(`a ${M} b`);
  });

  it('walks deep values without recursion', () => {
    const s = secret();
    const mask = maskWith(s);
    let deep: unknown = s;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    let node = mask.mask(deep);
    for (let i = 0; i < 20_000; i++) node = (node as unknown[])[0];
    expect(node).toBe(M);
  });

  it('keeps one mask per data directory', () => {
    const dir = `/tmp/uplink-mask-${secret(6)}`;
    expect(liveSecrets(dir)).toBe(liveSecrets(`${dir}/`));
    expect(liveSecrets(dir)).not.toBe(liveSecrets(`${dir}-other`));
  });
});
