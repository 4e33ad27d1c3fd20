/**
 * connectMcp: requests skip the SDK's response-first classification (two failing schema parses per
 * call); notifications and answers to the server's own requests still take the SDK's path, and
 * every kind of message is handled as the SDK would handle it.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { JSONRPCErrorResponseSchema, JSONRPCNotificationSchema, JSONRPCResultResponseSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp } from '../../../src/main/edges/mcp/server';

/** A server on a stdio transport over in-memory pipes; `lines` are the JSON messages it wrote. */
async function stdioServer(): Promise<{ server: Server; send: (message: object) => void; next: () => Promise<Record<string, unknown>> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
  await connectMcp(server, new StdioServerTransport(input, output));
  let buffered = '';
  const waiting: Array<(m: Record<string, unknown>) => void> = [];
  const queue: Array<Record<string, unknown>> = [];
  output.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const m = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(m);
      else queue.push(m);
    }
  });
  return {
    server,
    send: (message) => void input.write(`${JSON.stringify(message)}\n`),
    next: () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  };
}

const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
};

afterEach(() => vi.restoreAllMocks());

describe('connectMcp', () => {
  it('hands a request to the SDK request handling without trying it as a response first', async () => {
    const { send, next } = await stdioServer();
    send(initialize);
    await next();
    const asResult = vi.spyOn(JSONRPCResultResponseSchema, 'safeParse');
    const asError = vi.spyOn(JSONRPCErrorResponseSchema, 'safeParse');
    send({ jsonrpc: '2.0', id: 'a-1', method: 'tools/list' });
    expect(await next()).toEqual({ jsonrpc: '2.0', id: 'a-1', result: { tools: [] } });
    expect(asResult).not.toHaveBeenCalled();
    expect(asError).not.toHaveBeenCalled();
  });

  it('answers an unknown method and a malformed request as the SDK does', async () => {
    const { send, next } = await stdioServer();
    send(initialize);
    await next();
    send({ jsonrpc: '2.0', id: 7, method: 'no/such' });
    expect(await next()).toMatchObject({ id: 7, error: { code: -32601 } });
    // Not JSON-RPC (an object id): the transport refuses it before any dispatch, and the session goes on.
    send({ jsonrpc: '2.0', id: { x: 1 }, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 8, method: 'tools/list' });
    expect(await next()).toEqual({ jsonrpc: '2.0', id: 8, result: { tools: [] } });
  });

  it('leaves notifications and answers to the server’s own requests on the SDK path', async () => {
    const { server, send, next } = await stdioServer();
    send(initialize);
    await next();
    const asNotification = vi.spyOn(JSONRPCNotificationSchema, 'safeParse');
    const initialized = new Promise<void>((resolve) => (server.oninitialized = resolve));
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await initialized;
    expect(asNotification).toHaveBeenCalled();
    // The server pings the client; the client's answer resolves the server's request.
    const pinged = server.ping();
    const ping = await next();
    expect(ping).toMatchObject({ method: 'ping' });
    send({ jsonrpc: '2.0', id: ping.id as number, result: {} });
    await expect(pinged).resolves.toEqual({});
  });
});
