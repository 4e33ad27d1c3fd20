/**
 * The invocation detail (request, events, output or error, how it was authorized) and the
 * settings' stdio command, through the real session handlers over an in-memory hub.
 */
import { describe, expect, it } from 'vitest';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import type { PanelHostInfo } from '../../../src/main/edges/panel';
import { toInvocationDetail } from '../../../src/main/edges/panel/mapping';
import { checkResponse } from '../../../src/main/edges/panel/validate';
import type { AuditEntry } from '../../../src/main/hub/types';
import { createFakeHub } from './fake-hub';
import { invocationAuthorization } from '../../../src/shared/audit-record';

const agent = { kind: 'mcp' as const, agent_id: 'default', name: 'claude-code' };
const base = {
  invocation_id: 'inv-1',
  channel: 'tmux:%1',
  op: 'read',
  capability_id: 'tmux.read',
  agent,
  provider_id: 'uplink/tmux',
  interaction: 'typed' as const,
};

function session(host: Partial<PanelHostInfo> = {}) {
  const hub = createFakeHub();
  const s = openPanelSession(hub, { version: '0.1.0', user: 'alice', ...host }, createBroadcast(), () => undefined, Date.now());
  return { hub, s };
}

describe('invocation detail', () => {
  it('shows the request, every event in order, the output and how it was authorized', async () => {
    const { hub, s } = session();
    const entries: AuditEntry[] = [
      {
        id: 1,
        at: 10,
        type: 'event',
        kind: 'accepted',
        sequence: 1,
        state: 'accepted',
        args: { lines: 5 },
        authorized: 'default_policy',
        granted: true,
        ...base,
      },
      { id: 2, at: 11, type: 'event', kind: 'started', sequence: 2, state: 'running', ...base },
      { id: 3, at: 15, type: 'event', kind: 'succeeded', sequence: 3, state: 'succeeded', duration_ms: 5, output: { text: 'hello' }, ...base },
    ];
    for (const e of entries) hub.emitEntry(e);
    const d = await s.handlers.getInvocation({ invocation_id: 'inv-1' });
    expect(checkResponse('getInvocation', d).ok).toBe(true);
    expect(d).toMatchObject({
      invocation_id: 'inv-1',
      channel: 'tmux:%1',
      op: 'read',
      agent: { kind: 'mcp', agent_id: 'default', name: 'claude-code' },
      args: { lines: 5 },
      state: 'succeeded',
      duration_ms: 5,
      output: { text: 'hello' },
    });
    expect(d.events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(invocationAuthorization(d.events)).toBe('read-only: no approval needed');
    expect(d.error).toBeUndefined();
    s.close();
  });

  it('a denied invocation carries the error with its hint and who decided', () => {
    const d = toInvocationDetail('inv-2', [
      { id: 1, at: 1, type: 'event', kind: 'accepted', sequence: 1, state: 'accepted', ...base, invocation_id: 'inv-2', op: 'send' },
      {
        id: 2,
        at: 2,
        type: 'decision',
        kind: 'decision',
        state: 'rejected',
        authorized: 'operator',
        granted: false,
        decision: 'deny',
        by: 'alice',
        reason: 'wrong pane',
        ...base,
        invocation_id: 'inv-2',
        op: 'send',
      },
      {
        id: 3,
        at: 2,
        type: 'event',
        kind: 'approval_denied',
        sequence: 2,
        state: 'rejected',
        by: 'alice',
        message: 'denied by the operator: wrong pane',
        hint: 'ask again',
        ...base,
        invocation_id: 'inv-2',
        op: 'send',
      },
    ]);
    expect(d).toMatchObject({ state: 'rejected', error: 'denied by the operator: wrong pane — hint: ask again' });
    expect(invocationAuthorization(d.events)).toBe('denied by the operator (alice): “wrong pane”');
    expect(d.output).toBeUndefined();
  });
});

describe('settings: how to connect an agent over stdio', () => {
  it('from a checkout the stdio command is bin/uplink mcp', async () => {
    const { s } = session({ cliPath: '/src/uplink/bin/uplink' });
    const settings = await s.handlers.getSettings({});
    expect(checkResponse('getSettings', settings).ok).toBe(true);
    expect(settings.stdio_command).toEqual(['/src/uplink/bin/uplink', 'mcp']);
    s.close();
  });

  it('a packaged app names itself, not the launcher inside its asar', async () => {
    const { s } = session({ cliPath: '/opt/Uplink/resources/app.asar/bin/uplink', stdioCommand: ['/opt/Uplink/uplink', 'mcp'] });
    expect((await s.handlers.getSettings({})).stdio_command).toEqual(['/opt/Uplink/uplink', 'mcp']);
    s.close();
  });
});
