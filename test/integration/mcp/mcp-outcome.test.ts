/**
 * Every tool result tells the agent how its call ended, in the audit's word:
 * `_meta["uplink/outcome"]`, seen through the real MCP SDK client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import type { Hub } from '../../../src/main/hub';
import { closeHubs, openHub } from '../hub/helpers';
import { waitFor } from '../../fixtures/hub-build';

afterEach(closeHubs);

async function connect(): Promise<{ client: Client; hub: Hub; dir: string }> {
  const { hub, dir } = openHub();
  const server = createMcpServer(hub, { id: 'default' }, 's1');
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
  await client.connect(b);
  return { client, hub, dir };
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const outcome = (r: CallToolResult): unknown => r._meta?.['uplink/outcome'];
/** The outcome the audit stored for the newest call. */
const audited = (hub: Hub): unknown => hub.queryAudit({ limit: 50 }).entries.find((e) => e.outcome)?.outcome;

describe('MCP results carry the outcome', () => {
  it('a success', async () => {
    const { client, hub } = await connect();
    const r = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { text: 'hi' } });
    expect(r.isError).toBeFalsy();
    expect(outcome(r)).toBe('succeeded');
    expect(audited(hub)).toBe('succeeded');
  });

  it('a call the operator denied', async () => {
    const { client, hub } = await connect();
    hub.attachPanel();
    const off = hub.subscribeApprovals((e) => {
      if (e.type === 'added') void hub.decide(e.approval.approval_id, { kind: 'deny', by: 'alice', reason: 'not now' });
    });
    const r = await call(client, 'channel_act', { channel: 'test:alpha', op: 'write', args: { text: 'x' } });
    off();
    expect(r.isError).toBe(true);
    expect((r.content[0] as { text: string }).text).toMatch(/^uplink error \[test:Rejected\]: .*not now/);
    expect(outcome(r)).toBe('denied');
    expect(audited(hub)).toBe('denied');
  });

  it('an approval nobody answered in time', async () => {
    const { client, hub, dir } = await connect();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 1000 } }));
    await waitFor(() => hub.approvalTimeoutMs() === 1000 || undefined, 5000, 'config reload');
    hub.attachPanel();
    const r = await call(client, 'channel_act', { channel: 'test:alpha', op: 'write', args: { text: 'x' } });
    expect(r.isError).toBe(true);
    expect(outcome(r)).toBe('timed_out');
    expect(audited(hub)).toBe('timed_out');
  });

  it("a call rejected before it ran: args that break the op's schema, a tool refusing its input", async () => {
    const { client, hub } = await connect();
    const bad = await call(client, 'channel_observe', { channel: 'test:alpha', op: 'echo', args: { nope: 1 } });
    expect(bad.isError).toBe(true);
    expect(outcome(bad)).toBe('rejected');
    expect(audited(hub)).toBe('rejected');
    const wrong = await call(client, 'channel_recv', { cursor: 'five' });
    expect(outcome(wrong)).toBe('rejected');
  });
});
