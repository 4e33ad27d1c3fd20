/**
 * The helper client against scripted helpers (node one-liners): protocol edge cases the real
 * helper should never produce — out-of-order replies, garbage lines, silence — must still end
 * every call with a DriverError and leave the client usable.
 */
import { describe, expect, it } from 'vitest';
import { HelperClient } from '../../../src/main/drivers/desktop/helper-client';

const script = (body: string): string[] => [process.execPath, '-e', body];
const ECHO_REVERSED = `
const rl = require('readline').createInterface({ input: process.stdin });
const held = [];
rl.on('line', (l) => { const r = JSON.parse(l); held.push(r);
  if (r.op === 'garbage') { process.stdout.write('not json\\n'); return; }
  if (r.op === 'silent') return;
  if (r.op === 'die') process.exit(3);
  if (held.length === 2) for (const h of held.splice(0).reverse()) process.stdout.write(JSON.stringify({ id: h.id, ok: true, result: h.op }) + '\\n');
  if (r.op === 'fail') process.stdout.write(JSON.stringify({ id: r.id, ok: false, error: { kind: 'Rejected', message: 'no', hint: 'h' } }) + '\\n');
});`;

describe('desktop helper client', () => {
  it('correlates replies by id even when they arrive out of order', async () => {
    const client = new HelperClient({ command: script(ECHO_REVERSED), env: process.env, callTimeoutMs: 10_000 });
    const [a, b] = await Promise.all([client.call({ op: 'first' }), client.call({ op: 'second' })]);
    expect([a, b]).toEqual(['first', 'second']);
    await client.dispose();
  });

  it('a silent helper times out the call, is replaced, and a garbage line fails only that helper\'s calls', async () => {
    const client = new HelperClient({ command: script(ECHO_REVERSED), env: process.env, callTimeoutMs: 300 });
    await expect(client.call({ op: 'silent' })).rejects.toMatchObject({ kind: 'Timeout' });
    await expect(client.call({ op: 'garbage' }, { timeoutMs: 5000 })).rejects.toMatchObject({ kind: 'Upstream' });
    await expect(client.call({ op: 'die' }, { timeoutMs: 5000 })).rejects.toMatchObject({ kind: 'Unavailable', message: expect.stringContaining('exit code 3') });
    await client.dispose();
  });

  it('a missing helper binary yields Unavailable with an install hint', async () => {
    const client = new HelperClient({ command: ['/nonexistent/helper'], env: process.env, callTimeoutMs: 5000 });
    await expect(client.call({ op: 'hello' })).rejects.toMatchObject({ kind: 'Unavailable', hint: expect.stringContaining('python3') });
  });
});
