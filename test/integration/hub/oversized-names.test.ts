/**
 * A name someone sends (a tool, a panel method, a channel, an op, a driver, an id) is quoted back in
 * an error cut to 64 characters and `…`: a 2 MB name never comes back as a 2 MB error, whichever
 * edge it came through.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../../src/main/edges/mcp/server';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { dispatchCall } from '../../../src/main/edges/panel/dispatch';
import { closeHubs, failure, openHub } from './helpers';

afterEach(closeHubs);

const HUGE = 2 * 1024 * 1024;
const huge = (prefix = ''): string => prefix + 'x'.repeat(HUGE);
/** What an error may quote of a huge name: 64 characters, then the ellipsis. */
const clipped = (name: string): string => `${name.slice(0, 64)}…`;

describe('oversized names are never echoed back', () => {
  it('MCP: a 2 MB unknown tool name gets a short error', async () => {
    const { hub } = openHub();
    const server = createMcpServer(hub, { id: 'default' }, 's1');
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
    await client.connect(b);
    const name = huge('tool_');
    const err = await failure<Error>(client.callTool({ name, arguments: {} }));
    expect(err.message.length).toBeLessThan(400);
    expect(err.message).toContain(`uplink error [core:NotFound]: no tool ${clipped(name)} — hint: the tools are channel_list`);
    await client.close();
  });

  it("hub: a huge channel, driver or op is cut in the registry's NotFound errors", async () => {
    const { hub } = openHub();
    const cases: Array<[Promise<unknown>, string]> = [
      [hub.describe(huge('no-colon-')), `"${clipped(huge('no-colon-'))}" is not a channel address`],
      [hub.describe(`${huge('drv')}:x`), `no driver named ${clipped(huge('drv'))} (enabled drivers: test)`],
      [hub.describe(`test:${huge('pane')}`), `no channel ${clipped(`test:${huge('pane')}`)}`],
      [hub.describe('test:alpha', huge('op')), `test has no op "${clipped(huge('op'))}"`],
    ];
    for (const [call, quoted] of cases) {
      const err = await failure(call);
      expect(err.rendered.length).toBeLessThan(600);
      expect(err.rendered).toContain(quoted);
    }
    // The driver part of a channel is named in the line's head: cut too.
    const head = await failure(hub.describe(`${huge('drv')}:x`));
    expect(head.rendered.startsWith(`uplink error [${clipped(huge('drv'))}:NotFound]: `)).toBe(true);
  });

  it('panel: a 2 MB unknown method or channel gets a short error', async () => {
    const { hub } = openHub();
    const session = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
    try {
      const method = await dispatchCall(session.handlers, huge('method'), {});
      expect(method).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
      const message = (method as { error: { message: string } }).error.message;
      expect(message.length).toBeLessThan(200);
      expect(message).toContain(`unknown panel method "${clipped(huge('method'))}"`);

      const refused = await dispatchCall(session.handlers, 'describeChannel', { channel: `test:${huge('pane')}` });
      expect(refused).toMatchObject({ ok: false });
      expect((refused as { error: { message: string } }).error.message.length).toBeLessThan(400);
      // A channel the schema takes, but no channel: the hub's NotFound quotes 64 characters of it.
      const long = `test:${'p'.repeat(400)}`;
      const missing = await dispatchCall(session.handlers, 'describeChannel', { channel: long });
      expect(missing).toMatchObject({ ok: false, error: { code: 'not_found', message: expect.stringContaining(`no channel ${clipped(long)} — hint: `) } });

      const id = 'a'.repeat(400);
      const approval = await dispatchCall(session.handlers, 'decide', { approval_id: id, decision: 'once' });
      expect(approval).toMatchObject({
        ok: true,
        result: { accepted: false, message: expect.stringContaining(`no pending approval ${clipped(id)} — hint: `) },
      });
    } finally {
      session.close();
    }
  });
});
