/**
 * What an agent gets back, through the real SDK client (which checks structuredContent against each
 * tool's outputSchema once it has listed the tools): a short text line, the structured answer, and
 * images as image content items that are not sent twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import { encodeCursor } from '../../../src/main/edges/mcp/recv';
import type { Hub } from '../../../src/main/hub';
import type { OpSpec } from '../../../src/main/drivers/contract';
import type { JsonValue } from '../../../src/main/kernel/types';
import { createTestDriver, TEST_OPS } from '../../fixtures/test-driver';
import { closeHubs, nextPrompt, openHub } from '../hub/helpers';

afterEach(closeHubs);

/** A 1×1 PNG and the first bytes of a JPEG, as a screenshot op would return them. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9]).toString('base64');

const SHOT: OpSpec = {
  op: 'screenshot',
  summary: 'A tiny picture',
  mutating: false,
  params_schema: { type: 'object', properties: { jpeg: { type: 'boolean' } } },
  result_schema: { type: 'object' },
};

/** The fixture driver plus a screenshot op (PNG, or PNG and a JPEG thumbnail). */
function shotDriver(): ReturnType<typeof createTestDriver> {
  const base = createTestDriver();
  return {
    ...base,
    ops: () => [...TEST_OPS, SHOT],
    invoke: async (addr, op, args, ctx, signal): Promise<JsonValue> =>
      op === 'screenshot'
        ? (args as { jpeg?: boolean }).jpeg
          ? {
              shots: [{ png_base64: PNG }, { thumbnail: { jpeg_base64: JPEG, mime_type: 'image/jpeg' } }] as JsonValue[],
              caption: 'iVBORw0KGgo is not an image here',
            }
          : { png_base64: PNG, width: 1, height: 1 }
        : base.invoke(addr, op, args, ctx, signal),
  };
}

async function connect(driver = shotDriver()): Promise<{ client: Client; hub: Hub }> {
  const { hub } = openHub({ driver });
  const server = createMcpServer(hub, { id: 'default' }, 's1');
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
  await client.connect(b);
  // The client checks structuredContent against outputSchema only for tools it has listed.
  await client.listTools();
  return { client, hub };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function line(r: CallToolResult): string {
  const first = r.content[0] as { type: string; text: string };
  expect(first.type).toBe('text');
  return first.text;
}

describe('tool results', () => {
  it('fixed-shape tools return structuredContent the SDK client accepts beside one short line; op tools return the op result as JSON text', async () => {
    const { client, hub } = await connect();
    const { tools } = await client.listTools();
    const fixed = (name: string): boolean => name !== 'channel_observe' && name !== 'channel_act';
    expect(tools.map((t) => [t.name, t.outputSchema?.type])).toEqual(tools.map((t) => [t.name, fixed(t.name) ? 'object' : undefined]));

    const list = await call(client, 'channel_list', {});
    expect(list.structuredContent).toMatchObject({ channels: [{ channel: 'test:alpha', labels: ['a'] }, { channel: 'test:beta' }] });
    expect(line(list)).toBe('2 channels: test:alpha, test:beta');

    const all = await call(client, 'channel_describe', { channel: 'test:alpha' });
    const ops = (all.structuredContent as { ops: Array<{ op: string }> }).ops;
    expect(ops.map((o) => o.op)).toEqual(expect.arrayContaining([...TEST_OPS.map((o) => o.op), 'screenshot']));
    expect(line(all)).toMatch(
      new RegExp(
        `^test:alpha has ${ops.length} ops — channel_observe: noop, echo, .*screenshot; channel_act: write, implicit, login.*; channel_send: send; channel_recv: recv$`,
      ),
    );
    const one = await call(client, 'channel_describe', { channel: 'test:alpha', op: 'write' });
    expect(one.structuredContent).toMatchObject({ channel: { channel: 'test:alpha' }, ops: [{ op: 'write', mutating: true, tool: 'channel_act' }] });
    expect(line(one)).toBe('test:alpha op write (mutating, via channel_act): Writes text (mutating)');

    const observed = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } });
    expect(observed.structuredContent).toBeUndefined();
    expect(line(observed)).toBe('{"text":"hi"}');

    hub.attachPanel();
    const approve = nextPrompt(hub).then((p) => hub.decide(p.approval_id, { kind: 'once', by: 'alice' }));
    const acted = await call(client, 'channel_act', { channel: 'test:alpha', op: 'write', args: { text: 'seven77' } });
    await approve;
    expect(JSON.parse(line(acted))).toEqual({ written: 7 });

    const approveSend = nextPrompt(hub).then((p) => hub.decide(p.approval_id, { kind: 'once', by: 'alice' }));
    const sent = await call(client, 'channel_send', { channel: 'test:beta', message: 'hello' });
    await approveSend;
    expect(sent.structuredContent).toMatchObject({ delivered: true, correlation_id: 'c1' });
    expect(line(sent)).toMatch(/^Delivered to test:beta at \S+ \(correlation_id c1\)$/);

    const recv = await call(client, 'channel_recv', {});
    // Every messaging driver read at once: the cursor holds each one's position.
    const merged = encodeCursor({ test: 1 });
    expect(recv.structuredContent).toMatchObject({ items: [{ cursor: 1, from: 'beta', raw: 'hello' }], next_cursor: merged });
    expect(line(recv)).toBe(`1 item, naming beta as sender; next_cursor ${merged}`);

    const doctor = await call(client, 'channel_doctor', {});
    expect(doctor.structuredContent).toMatchObject({ ok: true, drivers: [{ driver: 'test', ok: true }] });
    expect(line(doctor)).toMatch(/^Healthy: 1 driver ok/);

    for (const r of [list, all, one, observed, acted, sent, recv, doctor]) {
      expect(r.isError).toBeFalsy();
      expect(line(r)).not.toContain('\n');
    }
  });

  it('a client that reads only text gets every result: each tool answers its data as JSON text, equal to its structuredContent', async () => {
    const { client, hub } = await connect();
    /** The one text item that parses as JSON (a short line, when there is one, comes first and does not). */
    const json = (r: CallToolResult): unknown => {
      const texts = r.content.filter((c): c is { type: 'text'; text: string } => c.type === 'text').map((c) => c.text);
      const parsed = texts.flatMap((t) => {
        try {
          return [JSON.parse(t) as unknown];
        } catch {
          return [];
        }
      });
      expect(parsed).toHaveLength(1);
      return parsed[0];
    };
    hub.attachPanel();
    const approve = (): Promise<unknown> => nextPrompt(hub).then((p) => hub.decide(p.approval_id, { kind: 'once', by: 'alice' }));
    const results: Record<string, CallToolResult> = {
      channel_list: await call(client, 'channel_list', {}),
      channel_describe: await call(client, 'channel_describe', { channel: 'test:alpha' }),
      channel_send: (await Promise.all([call(client, 'channel_send', { channel: 'test:beta', message: 'hello' }), approve()]))[0],
      channel_recv: await call(client, 'channel_recv', {}),
      channel_doctor: await call(client, 'channel_doctor', {}),
    };
    const { tools } = await client.listTools();
    for (const t of tools.filter((x) => x.outputSchema)) {
      const r = results[t.name]!;
      expect(r.isError, t.name).toBeFalsy();
      expect(r.structuredContent, t.name).toBeDefined();
      // As the wire carries it (the in-memory transport hands over objects as they are).
      expect(json(r), t.name).toEqual(JSON.parse(JSON.stringify(r.structuredContent)));
    }
    expect(Object.keys(results).sort()).toEqual(
      tools
        .filter((x) => x.outputSchema)
        .map((x) => x.name)
        .sort(),
    );
    // The recv item itself, not only a count, is in the text.
    expect(json(results.channel_recv!)).toMatchObject({ items: [{ raw: 'hello', from: 'beta' }] });
    // Op results have no structuredContent: their JSON text is the result (images as image items).
    const observed = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } });
    expect(json(observed)).toEqual({ text: 'hi' });
    const acted = (await Promise.all([call(client, 'channel_act', { channel: 'test:alpha', op: 'write', args: { text: 'abc' } }), approve()]))[0];
    expect(json(acted)).toEqual({ written: 3 });
    const shot = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'screenshot', args: {} });
    expect(json(shot)).toMatchObject({ png_base64: { image: { mime_type: 'image/png', content_index: 1 } } });
    expect(shot.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png', data: PNG });
    // An error: its line, then its JSON.
    const failed = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'fail' });
    expect(json(failed)).toMatchObject({ error: { kind: 'Rejected', message: 'the fixture refuses' } });
    // More channels than a line names: the JSON still holds every one.
    const many = Array.from({ length: 25 }, (_, i) => ({ channel: `test:c${i}`, labels: [] as string[], detail: {} }));
    const driver = shotDriver();
    const wide = await connect({ ...driver, channels: async () => many });
    const listed = await call(wide.client, 'channel_list', {});
    expect((json(listed) as { channels: unknown[] }).channels).toHaveLength(25);
  });

  it('an unhealthy doctor says which part and why in its line', async () => {
    const driver = shotDriver();
    driver.state.healthy = false;
    const { client } = await connect(driver);
    const r = await call(client, 'channel_doctor', {});
    expect(r.structuredContent).toMatchObject({ ok: false, drivers: [{ driver: 'test', ok: false, lines: ['fixture unhealthy'] }] });
    expect(line(r)).toBe('Unhealthy: test (fixture unhealthy)');
  });

  it("an op's result is its JSON on one line: line and C1 separators from a pane are JSON escapes, the value unchanged", async () => {
    const { client } = await connect();
    const text = 'a\u2028b\u0085c\u001b[2Jd\ne';
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { text } });
    expect(line(r)).toBe('{"text":"a\\u2028b\\u0085c\\u001b[2Jd\\ne"}');
    expect(JSON.parse(line(r))).toEqual({ text });
  });

  it('a long result arrives whole (a client that reads only text still gets all of it)', async () => {
    const { client } = await connect();
    const text = 'x'.repeat(5000);
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { text } });
    expect(JSON.parse(line(r))).toEqual({ text });
  });

  it('an error is one rendered line then its JSON, with isError, no structuredContent and no evidence', async () => {
    const { client } = await connect();
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'fail' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(r.content).toEqual([
      { type: 'text', text: 'uplink error [test:Rejected]: the fixture refuses — hint: do something else' },
      { type: 'text', text: expect.any(String) },
    ]);
    expect(JSON.parse((r.content[1] as { text: string }).text)).toEqual({
      error: { driver: 'test', kind: 'Rejected', message: 'the fixture refuses', hint: 'do something else' },
    });
  });

  it('args sent as a JSON string are parsed and validated as the object they hold', async () => {
    const { client } = await connect();
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: '{"text":"from a string"}' });
    expect(JSON.parse(line(r))).toEqual({ text: 'from a string' });
    const notObject = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: '[1]' });
    expect(line(notObject)).toBe(
      'uplink error [test:Invalid]: channel_observe arguments are invalid: /args must be object (type) — hint: see the channel_observe input schema in tools/list',
    );
    const broken = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: '{text' });
    expect(line(broken)).toMatch(/^uplink error \[test:Invalid\]: args for echo are not valid JSON \(.+\) — hint: pass args as a JSON object/);
  });
});

describe('images', () => {
  it('a screenshot reaches the client as an image item, and the JSON text holds a small reference instead of the base64', async () => {
    const { client } = await connect();
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'screenshot' });
    expect(r.content).toEqual([
      { type: 'text', text: expect.any(String) },
      { type: 'image', data: PNG, mimeType: 'image/png' },
    ]);
    expect(r.structuredContent).toBeUndefined();
    expect(JSON.parse(line(r))).toEqual({
      png_base64: { image: { mime_type: 'image/png', bytes: Buffer.from(PNG, 'base64').length, content_index: 1 } },
      width: 1,
      height: 1,
    });
    expect(line(r)).not.toContain(PNG.slice(0, 40));
  });

  it('nested images each get their own item and MIME type from their bytes; text that only looks like base64 stays text', async () => {
    const { client } = await connect();
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'screenshot', args: { jpeg: true } });
    expect(r.content.slice(1)).toEqual([
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'image', data: JPEG, mimeType: 'image/jpeg' },
    ]);
    const result = JSON.parse(line(r)) as Record<string, unknown>;
    expect(result).toEqual({
      shots: [
        { png_base64: { image: { mime_type: 'image/png', bytes: Buffer.from(PNG, 'base64').length, content_index: 1 } } },
        { thumbnail: { jpeg_base64: { image: { mime_type: 'image/jpeg', bytes: 22, content_index: 2 } }, mime_type: 'image/jpeg' } },
      ],
      caption: 'iVBORw0KGgo is not an image here',
    });
  });
});
