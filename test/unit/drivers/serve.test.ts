import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import type { Driver } from '../../../src/main/drivers/contract';
import type { JsonValue } from '../../../src/main/kernel/types';
import { serveDriver } from '../../../src/main/drivers/external/serve';
import { DriverClient } from '../../fixtures/driver-client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fakeDriver() {
  const seen = { hanging: [] as string[], aborted: [] as string[], disposed: 0, sends: [] as unknown[], cursors: [] as unknown[] };
  const driver: Driver = {
    info: () => ({ id: 'fake', kind: 'both', summary: 'a fake' }),
    channels: async () => [{ channel: 'fake:a', labels: ['a'], detail: null }],
    ops: () => [{ op: 'echo', summary: 'echo', mutating: false, params_schema: { type: 'object' }, result_schema: {} }],
    send: async (addr, request, ctx) => {
      seen.sends.push({ addr, request, ctx });
      return { delivered: true, correlation_id: 'c1', injected_at: '2026-01-01T00:00:00Z' };
    },
    invoke: async (addr, op, args, _ctx, signal) => {
      if (op === 'echo') return { addr, args } as JsonValue;
      if (op === 'wait') {
        await sleep((args as { ms: number }).ms);
        return 'waited';
      }
      if (op === 'hang') {
        seen.hanging.push(addr);
        await new Promise((resolve) => signal!.addEventListener('abort', resolve));
        seen.aborted.push(addr);
        throw new DriverError('Timeout', 'stopped');
      }
      if (op === 'refuse') throw new DriverError('Rejected', 'no writes here', { hint: 'ask the operator' });
      throw new TypeError('cannot read x of undefined');
    },
    recv: async (cursor) => {
      seen.cursors.push(cursor);
      return { items: [], next_cursor: 0 };
    },
    doctor: async () => ({ driver: 'fake', ok: true, lines: ['fine'] }),
    preview: async () => undefined,
    dispose: async () => {
      seen.disposed++;
    },
  };
  return { driver, seen };
}

let serving: Promise<void> | undefined;
let toDriver: PassThrough;

function serve(driver: Driver): DriverClient {
  toDriver = new PassThrough();
  const fromDriver = new PassThrough();
  serving = serveDriver(driver, { input: toDriver, output: fromDriver, log: new PassThrough(), exit: false });
  return new DriverClient(fromDriver, toDriver);
}

afterEach(async () => {
  toDriver?.end();
  await serving;
});

describe('serveDriver', () => {
  it('answers initialize with protocol 3, the info, and the optional methods the driver implements', async () => {
    const client = serve(fakeDriver().driver);
    expect(await client.initialize()).toEqual({
      protocol_version: '3',
      info: { id: 'fake', kind: 'both', summary: 'a fake' },
      extensions: ['preview', 'shutdown'],
    });
  });

  it('refuses any request before initialize', async () => {
    const client = serve(fakeDriver().driver);
    const r = await client.request('channels', {});
    expect(r.error?.code).toBe(-32600);
  });

  it('serves the contract methods in their wire shapes', async () => {
    const { driver, seen } = fakeDriver();
    const client = serve(driver);
    await client.initialize();
    expect(await client.call('info')).toEqual(driver.info());
    expect(await client.call('channels')).toEqual([{ channel: 'fake:a', labels: ['a'], detail: null }]);
    expect(await client.call('ops')).toEqual(driver.ops());
    expect(await client.call('invoke', { addr: 'a', op: 'echo', args: { n: 1 }, context: { agent: 'x' } })).toEqual({ addr: 'a', args: { n: 1 } });
    const request = { message: 'hi', reply_hint: 'short' };
    expect(await client.call('send', { addr: 'a', request })).toMatchObject({ delivered: true });
    expect(seen.sends).toEqual([{ addr: 'a', request, ctx: undefined }]);
    await client.call('recv', { cursor: null });
    await client.call('recv', { cursor: 4 });
    expect(seen.cursors).toEqual([undefined, 4]);
    expect(await client.call('doctor')).toEqual({ driver: 'fake', ok: true, lines: ['fine'] });
    expect(await client.call('preview', { addr: 'a', op: 'echo', args: {} })).toBeNull();
  });

  it('answers concurrent requests as each finishes, matched by id', async () => {
    const client = serve(fakeDriver().driver);
    await client.initialize();
    const slow = client.request('invoke', { addr: 'a', op: 'wait', args: { ms: 150 }, context: {} }, 'slow');
    const fast = client.request('invoke', { addr: 'a', op: 'wait', args: { ms: 1 }, context: {} }, 'fast');
    expect((await slow).result).toBe('waited');
    expect((await fast).result).toBe('waited');
    expect(client.order.slice(-2)).toEqual(['fast', 'slow']);
  });

  it('aborts the signal of the call a cancel names', async () => {
    const { driver, seen } = fakeDriver();
    const client = serve(driver);
    await client.initialize();
    const id = client.nextId;
    const hung = client.request('invoke', { addr: 'h', op: 'hang', args: {}, context: {} });
    await vi.waitFor(() => expect(seen.hanging).toEqual(['h']));
    client.notify('cancel', { id });
    expect((await hung).error?.data).toEqual({ kind: 'Timeout', message: 'stopped' });
    expect(seen.aborted).toEqual(['h']);
  });

  it('sends a DriverError as its wire shape and any other exception as Upstream', async () => {
    const client = serve(fakeDriver().driver);
    await client.initialize();
    const refused = await client.request('invoke', { addr: 'a', op: 'refuse', args: {}, context: {} });
    expect(refused.error).toEqual({ code: -32000, message: 'no writes here', data: { kind: 'Rejected', message: 'no writes here', hint: 'ask the operator' } });
    const crashed = await client.request('invoke', { addr: 'a', op: 'crash', args: {}, context: {} });
    expect(crashed.error).toEqual({ code: -32000, message: 'cannot read x of undefined', data: { kind: 'Upstream', message: 'cannot read x of undefined' } });
  });

  it('answers unknown and unimplemented methods with -32601 and unreadable params with -32602', async () => {
    const client = serve(fakeDriver().driver);
    await client.initialize();
    expect((await client.request('frobnicate', {})).error?.code).toBe(-32601);
    expect((await client.request('set_tier', { addr: 'a', tier: 'x' })).error?.code).toBe(-32601);
    expect((await client.request('invoke', { addr: 7, op: 'echo', args: {} })).error).toMatchObject({
      code: -32602,
      message: 'invoke: "addr" must be a string',
    });
    expect((await client.request('send', { addr: 'a', request: { message: 'x', reply_hint: 'loud' } })).error?.code).toBe(-32602);
    expect((await client.request('recv', { cursor: 'x' })).error?.code).toBe(-32602);
    expect((await client.request('channels', [1])).error?.code).toBe(-32602);
  });

  it('answers a line that is not JSON-RPC with a parse error and keeps serving', async () => {
    const client = serve(fakeDriver().driver);
    await client.initialize();
    client.raw('{not json\n');
    expect(await client.call('doctor')).toMatchObject({ ok: true });
    expect(client.orphans.map((o) => o.error?.code)).toEqual([-32700]);
  });

  it('disposes the driver on shutdown, answers null, and stops serving', async () => {
    const { driver, seen } = fakeDriver();
    const client = serve(driver);
    await client.initialize();
    expect(await client.call('shutdown')).toBeNull();
    expect(seen.disposed).toBe(1);
    await serving;
  });

  it('disposes the driver when the hub closes stdin', async () => {
    const { driver, seen } = fakeDriver();
    const client = serve(driver);
    await client.initialize();
    toDriver.end();
    await serving;
    expect(seen.disposed).toBe(1);
  });
});
