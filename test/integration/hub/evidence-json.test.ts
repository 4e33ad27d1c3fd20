/**
 * A driver's evidence is any JSON value and stays JSON: in the audit record and the panel's
 * invocation detail (indented JSON, never `[object Object]`), and never in the agent's error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import { toInvocationDetail } from '../../../src/main/edges/panel/mapping';
import { DriverError } from '../../../src/main/drivers/contract';
import type { JsonValue } from '../../../src/main/kernel/types';
import { createTestDriver } from '../../fixtures/test-driver';
import { closeHubs, openHub } from './helpers';

afterEach(closeHubs);

const EVIDENCE = { pid: { was: 4242, now: 4243 }, windows: ['0x1a', '0x1b'], mapped: false };

function evidenceDriver(): ReturnType<typeof createTestDriver> {
  const base = createTestDriver();
  return {
    ...base,
    invoke: async (addr, op, args, ctx, signal): Promise<JsonValue> => {
      if (op === 'fail') throw new DriverError('Rejected', 'target changed', { hint: 'list channels again', evidence: EVIDENCE });
      return base.invoke(addr, op, args, ctx, signal);
    },
  };
}

describe('evidence as JSON', () => {
  it('reaches the audit and the panel as JSON, and the agent not at all', async () => {
    const { hub } = openHub({ driver: evidenceDriver() });
    const server = createMcpServer(hub, { id: 'default' }, 's1');
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'evidence-agent', version: '1' });
    await client.connect(b);
    const r = (await client.callTool({ name: 'channel_observe', arguments: { channel: 'test:alpha', op: 'fail' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    const texts = r.content.map((c) => (c as { text: string }).text);
    expect(texts[0]).toBe('uplink error [test:Rejected]: target changed — hint: list channels again');
    expect(JSON.parse(texts[1]!)).toEqual({ error: { driver: 'test', kind: 'Rejected', message: 'target changed', hint: 'list channels again' } });
    expect(texts.join('\n')).not.toContain('4243');

    const failed = hub.queryAudit({ state: 'failed' }).entries.find((e) => e.op === 'fail')!;
    expect(failed.detail).not.toContain('[object Object]');
    const stored = /evidence: ([\s\S]*)$/.exec(failed.detail ?? '')?.[1];
    expect(JSON.parse(stored!)).toEqual(EVIDENCE);

    const entries = hub.queryAudit({ invocation_id: failed.invocation_id }).entries;
    const detail = toInvocationDetail(failed.invocation_id!, entries);
    expect(JSON.parse(/evidence: ([\s\S]*)$/.exec(detail.error_detail ?? '')![1]!)).toEqual(EVIDENCE);
    await client.close();
  });

  it('a refusal before the call stores object evidence as JSON too', async () => {
    const changed = new DriverError('Rejected', 'target changed', { evidence: EVIDENCE });
    const { hub } = openHub({ driver: Object.assign(createTestDriver(), { interactionsFor: async () => Promise.reject(changed) }) });
    await hub.invoke('test:alpha', 'pick', {}, { agent: { kind: 'cli', name: 'cli' } }).catch(() => undefined);
    const [row] = hub.queryAudit({ state: 'rejected' }).entries;
    expect(JSON.parse(row!.detail!.replace(/^evidence: /, ''))).toEqual(EVIDENCE);
  });
});
