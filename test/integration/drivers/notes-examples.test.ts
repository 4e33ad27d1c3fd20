/**
 * The example drivers, each spawned as the hub would start it and driven over the protocol: the
 * TypeScript one through `uplink/driver-sdk` (the built bundle, resolved by package name), the
 * Python one through sdk/python/uplink_driver.py.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DriverClient } from '../../fixtures/driver-client';
import { ROOT } from '../../fixtures/hub-build';

const EXAMPLES = {
  'notes-ts': [process.execPath, join(ROOT, 'examples/drivers/notes-ts/driver.mjs')],
  'notes-py': ['python3', join(ROOT, 'examples/drivers/notes-py/driver.py')],
};

beforeAll(() => {
  // The TS example imports the package's `uplink/driver-sdk`, i.e. dist/driver-sdk.mjs.
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), 'driver-sdk'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
});

it('the TypeScript example type-checks against the SDK declarations', () => {
  const tsc = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--noEmit',
      '--allowJs',
      '--checkJs',
      '--strict',
      '--module',
      'node16',
      '--moduleResolution',
      'node16',
      '--target',
      'es2022',
      '--types',
      'node',
      EXAMPLES['notes-ts'][1]!,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(tsc.stdout + tsc.stderr).toBe('');
  expect(tsc.status).toBe(0);
}, 60_000);

let client: DriverClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

describe.each(Object.entries(EXAMPLES))('example driver %s', (_name, command) => {
  function start(): { client: DriverClient; dir: string } {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-notes-'));
    writeFileSync(join(dir, 'todo.md'), 'buy milk\nCall Bob\n');
    client = DriverClient.spawn([...command, dir]);
    return { client, dir };
  }

  it('shakes hands, lists its notes, and declares ops whose schemas compile strictly', async () => {
    const { client, dir } = start();
    const init = await client.initialize();
    expect(init).toMatchObject({ protocol_version: '3', info: { id: 'notes', kind: 'capability' } });
    expect(init.extensions).toEqual(['preview', 'shutdown']);
    expect(await client.call('channels')).toEqual([{ channel: 'notes:todo', labels: ['todo'], detail: { file: join(dir, 'todo.md') } }]);
    const ops = (await client.call('ops')) as Array<{ op: string; mutating: boolean; params_schema: object; result_schema: object }>;
    expect(ops.map((o) => [o.op, o.mutating])).toEqual([
      ['read', false],
      ['append', true],
      ['search', false],
      ['wait-for', false],
    ]);
    const ajv = new Ajv2020({ strict: true, useDefaults: true });
    for (const o of ops) {
      expect(() => ajv.compile(o.params_schema), o.op).not.toThrow();
      expect(() => ajv.compile(o.result_schema), o.op).not.toThrow();
    }
    expect(await client.call('doctor')).toMatchObject({ driver: 'notes', ok: true });
    expect(client.junk).toEqual([]);
  });

  it('reads, appends (and previews the append), and searches a note', async () => {
    const { client, dir } = start();
    await client.initialize();
    const invoke = (op: string, args: object, addr = 'todo') => client.call('invoke', { addr, op, args, context: { agent: 'a', invocation_id: 'i' } });
    expect(await invoke('read', {})).toEqual({ text: 'buy milk\nCall Bob\n' });
    expect(await client.call('preview', { addr: 'todo', op: 'append', args: { text: 'pay rent' } })).toEqual({ text: 'append 8 characters to note todo' });
    expect(await invoke('append', { text: 'pay rent' })).toEqual({ bytes: 27 });
    expect(readFileSync(join(dir, 'todo.md'), 'utf8')).toBe('buy milk\nCall Bob\npay rent\n');
    expect(await invoke('search', { query: 'BOB', limit: 20 })).toEqual({ matches: [{ line: 2, text: 'Call Bob' }] });
    expect(client.junk).toEqual([]);
  });

  it('fails a missing note with a NotFound DriverError in the exact wire shape', async () => {
    const { client } = start();
    await client.initialize();
    const r = await client.request('invoke', { addr: 'nope', op: 'read', args: {}, context: {} });
    expect(r.error).toEqual({
      code: -32000,
      message: 'no note named nope',
      data: { kind: 'NotFound', message: 'no note named nope', hint: 'list the notes with `uplink channels`' },
    });
    const bad = await client.request('invoke', { addr: '../etc/passwd', op: 'read', args: {}, context: {} });
    expect(bad.error?.data).toMatchObject({ kind: 'Invalid', hint: 'names are letters, digits, - and _ (up to 64)' });
  });

  it('stops a slow call when the hub cancels it, and keeps serving', async () => {
    const { client } = start();
    await client.initialize();
    const id = client.nextId;
    const started = Date.now();
    const waiting = client.request('invoke', { addr: 'todo', op: 'wait-for', args: { text: 'never written', timeout_ms: 60000 }, context: {} });
    // A call sent after it is answered: the driver reads requests in order, so the wait is in flight.
    expect(await client.call('invoke', { addr: 'todo', op: 'read', args: {}, context: {} })).toMatchObject({ text: expect.any(String) });
    client.notify('cancel', { id });
    const answer = await waiting;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(answer.error?.data).toEqual({ kind: 'Timeout', message: 'the call was cancelled' });
    expect(await client.call('invoke', { addr: 'todo', op: 'read', args: {}, context: {} })).toMatchObject({ text: expect.any(String) });
  });

  it('answers an unknown method with -32601 and exits 0 after shutdown', async () => {
    const { client } = start();
    await client.initialize();
    expect((await client.request('frobnicate', {})).error?.code).toBe(-32601);
    expect((await client.request('set_tier', { addr: 'todo', tier: 'x' })).error?.code).toBe(-32601);
    expect(await client.call('shutdown')).toBeNull();
    expect(await client.exited()).toBe(0);
    expect(client.junk).toEqual([]);
  });
});
