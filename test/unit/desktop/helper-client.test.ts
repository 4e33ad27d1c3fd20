/**
 * The helper client against scripted helpers (node one-liners): calls queue and each deadline
 * counts only the helper's own run of it; edge cases the real helper should never produce —
 * garbage lines, silence — must still end every call with a DriverError and leave the client usable.
 */
import { describe, expect, it } from 'vitest';
import { HelperClient } from '../../../src/main/drivers/desktop/helper-client';

const script = (body: string): string[] => [process.execPath, '-e', body];
const MISBEHAVING = `
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (l) => { const r = JSON.parse(l);
  if (r.op === 'garbage') { process.stdout.write('not json\\n'); return; }
  if (r.op === 'silent') return;
  if (r.op === 'die') process.exit(3);
});`;

// Serves one request at a time, as the real helper does: `slow` takes 700 ms, `hang` never answers.
const SERIAL = `
const rl = require('readline').createInterface({ input: process.stdin });
const queue = [];
let busy = false;
const serve = () => {
  if (busy || queue.length === 0) return;
  const r = queue.shift();
  busy = true;
  if (r.op === 'hang') return;
  const answer = () => { process.stdout.write(JSON.stringify({ id: r.id, ok: true, result: r.op + ':' + process.pid }) + '\\n'); busy = false; serve(); };
  if (r.op === 'slow') setTimeout(answer, 700); else answer();
};
rl.on('line', (l) => { queue.push(JSON.parse(l)); serve(); });`;

describe('desktop helper client', () => {
  it('a call queued behind a slow one gets its whole deadline once the helper starts it', async () => {
    const client = new HelperClient({ command: script(SERIAL), env: process.env, callTimeoutMs: 400 });
    const slow = client.call({ op: 'slow' }, { timeoutMs: 5000 });
    const quick = [client.call({ op: 'quick' }), client.call({ op: 'quick' })];
    expect(String(await slow)).toMatch(/^slow:/);
    for (const q of quick) expect(String(await q)).toMatch(/^quick:/);
    await client.dispose();
  });

  it('a call that overruns fails alone: the calls queued behind it run on the restarted helper', async () => {
    const client = new HelperClient({ command: script(SERIAL), env: process.env, callTimeoutMs: 5000 });
    const hung = client.call({ op: 'hang' }, { timeoutMs: 300 });
    const next = client.call({ op: 'quick' });
    const first = client.pid;
    await expect(hung).rejects.toMatchObject({ kind: 'Timeout' });
    expect(String(await next)).toBe(`quick:${client.pid}`);
    expect(client.pid).not.toBe(first);
    await client.dispose();
  });

  it('a cancelled call still holds the helper until it answers: the next call is not charged for it', async () => {
    const client = new HelperClient({ command: script(SERIAL), env: process.env, callTimeoutMs: 500 });
    const abort = new AbortController();
    const slow = client.call({ op: 'slow' }, { timeoutMs: 5000, signal: abort.signal });
    const queued = new AbortController();
    const never = client.call({ op: 'quick' }, { signal: queued.signal });
    const next = client.call({ op: 'quick' });
    abort.abort();
    queued.abort();
    await expect(slow).rejects.toMatchObject({ kind: 'Unavailable', message: 'slow was cancelled' });
    await expect(never).rejects.toMatchObject({ kind: 'Unavailable', message: 'quick was cancelled before the helper started it' });
    const pid = client.pid;
    expect(String(await next)).toBe(`quick:${pid}`);
    await client.dispose();
  });

  it('dispose fails the running call and every queued one', async () => {
    const client = new HelperClient({ command: script(SERIAL), env: process.env, callTimeoutMs: 5000 });
    const calls = [client.call({ op: 'hang' }), client.call({ op: 'quick' })];
    await client.dispose();
    for (const c of calls) await expect(c).rejects.toMatchObject({ kind: 'Unavailable', message: expect.stringContaining('shut down') });
  });

  it("a silent helper times out the call, is replaced, and a garbage line fails only that helper's calls", async () => {
    const client = new HelperClient({ command: script(MISBEHAVING), env: process.env, callTimeoutMs: 300 });
    await expect(client.call({ op: 'silent' })).rejects.toMatchObject({ kind: 'Timeout' });
    await expect(client.call({ op: 'garbage' }, { timeoutMs: 5000 })).rejects.toMatchObject({ kind: 'Upstream' });
    await expect(client.call({ op: 'die' }, { timeoutMs: 5000 })).rejects.toMatchObject({
      kind: 'Unavailable',
      message: expect.stringContaining('exit code 3'),
    });
    await client.dispose();
  });

  it('a missing helper binary yields Unavailable with an install hint', async () => {
    const client = new HelperClient({ command: ['/nonexistent/helper'], env: process.env, callTimeoutMs: 5000 });
    await expect(client.call({ op: 'hello' })).rejects.toMatchObject({ kind: 'Unavailable', hint: expect.stringContaining('python3') });
  });
});
