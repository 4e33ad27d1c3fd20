/**
 * Over Streamable HTTP an agent is the credential it presents: the default token is `default`, a
 * named agent's token is that agent, a revoked one gets 401 (also inside a session it opened), and
 * a session cannot be borrowed by another credential. The declared client name travels beside the
 * id. `uplink agents` creates, lists and revokes credentials from a terminal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub } from '../../../src/main/hub';
import { startHubServer } from '../../../src/main/edges/http/server';
import type { HubServer } from '../../../src/main/edges/http/server';
import { createTestDriver } from '../../fixtures/test-driver';
import { buildForTests, runCli, tmpDataDir } from '../../fixtures/hub-build';

const open: Array<{ hub: Hub; server: HubServer }> = [];
afterEach(async () => {
  for (const { hub, server } of open.splice(0)) {
    await server.close();
    await hub.close();
  }
});

async function serve(): Promise<{ hub: Hub; server: HubServer; driver: ReturnType<typeof createTestDriver> }> {
  const dir = tmpDataDir();
  const driver = createTestDriver();
  const hub = createHub({ dataDir: dir, drivers: [driver] });
  const server = await startHubServer({ hub, dataDir: dir, announce: false });
  open.push({ hub, server });
  return { hub, server, driver };
}

async function client(server: HubServer, bearer: string, name: string): Promise<{ c: Client; transport: StreamableHTTPClientTransport }> {
  const c = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } });
  await c.connect(transport);
  return { c, transport };
}

const echo = { name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } } };

describe('agents over HTTP', () => {
  it('each token is its own agent; the declared name is carried beside it', async () => {
    const { hub, server } = await serve();
    const { token } = await hub.createAgent('builder', 'alice');
    const named = await client(server, token, 'trusted-agent');
    const plain = await client(server, server.token, 'trusted-agent');
    await named.c.callTool(echo);
    await plain.c.callTool(echo);
    const agents = hub
      .queryAudit({ op: 'echo', type: 'event' })
      .entries.filter((e) => e.kind === 'succeeded')
      .map((e) => e.agent);
    expect(agents).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ agent_id: 'builder', name: 'trusted-agent' }),
        expect.objectContaining({ agent_id: 'default', name: 'trusted-agent' }),
      ]),
    );
    await named.c.close();
    await plain.c.close();
  });

  it('a revoked token gets 401, at once inside the session it opened too', async () => {
    const { hub, server } = await serve();
    const { token } = await hub.createAgent('temp', 'alice');
    const { c, transport } = await client(server, token, 'some-client');
    expect((await c.callTool(echo)).isError).toBeFalsy();
    await hub.revokeAgent('temp', 'alice');
    await expect(c.callTool(echo)).rejects.toThrow(/missing, wrong or revoked bearer token/);
    const fresh = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    });
    expect(fresh.status).toBe(401);
    expect(((await fresh.json()) as { error: { message: string } }).error.message).toMatch(
      /^uplink error \[core:Rejected\]: missing, wrong or revoked bearer token — hint: /,
    );
    await transport.close();
  });

  it('another credential cannot speak in a session it did not open', async () => {
    const { hub, server } = await serve();
    const { token } = await hub.createAgent('owner', 'alice');
    const { c, transport } = await client(server, token, 'owner-client');
    await c.callTool(echo);
    const res = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${server.token}`,
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: echo }),
    });
    expect(res.status).toBe(404);
    await c.close();
  });
});

describe('uplink agents', () => {
  it('creates (token shown once, with a ready claude mcp add line), lists and revokes', async () => {
    const b = await buildForTests();
    const dir = tmpDataDir();
    const created = await runCli(b, dir, ['agents', 'create', 'claude-build']);
    expect(created.code).toBe(0);
    const token = /^ {2}(\S{43,})$/m.exec(created.stdout)?.[1];
    expect(token).toBeDefined();
    expect(created.stdout).toContain(`claude mcp add --transport http uplink http://127.0.0.1:7420/mcp --header "Authorization: Bearer ${token}"`);
    const listed = await runCli(b, dir, ['agents']);
    expect(listed.stdout).toMatch(/^claude-build\s+created \S+ by \S+$/m);
    expect(listed.stdout).not.toContain(token);
    expect((await runCli(b, dir, ['agents', 'revoke', 'claude-build'])).stdout).toContain('agent claude-build revoked');
    const json = JSON.parse((await runCli(b, dir, ['agents', '--json'])).stdout) as Array<{ id: string; revoked_at?: string }>;
    expect(json).toEqual([expect.objectContaining({ id: 'claude-build', revoked_at: expect.any(String) })]);
    const bad = await runCli(b, dir, ['agents', 'create', 'Not Valid']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^uplink error \[core:Invalid\]: agent name "Not Valid" is not valid — hint: /);
    const log = await runCli(b, dir, ['log', '--json']);
    expect(log.stdout).toContain('agent-create');
    expect(log.stdout).toContain('agent-revoke');
    expect(log.stdout).not.toContain(token);
  });
});
