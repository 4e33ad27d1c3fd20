/**
 * How a call ended, in one word, through the real hub: the error the agent hears carries it, the
 * entry that ends the call stores it, and the audit query filters by it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity, Hub, PendingApproval } from '../../../src/main/hub';
import { AuditStore } from '../../../src/main/hub/audit/store';
import { DriverError } from '../../../src/main/drivers';
import { closeHubs, failure, openHub } from './helpers';
import { waitFor } from '../../fixtures/hub-build';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', version: '2.1.0', session: 's1' };

afterEach(closeHubs);

function nextPrompt(hub: Hub): Promise<PendingApproval> {
  return new Promise((resolve) => {
    const off = hub.subscribeApprovals((e) => {
      if (e.type !== 'added') return;
      off();
      resolve(e.approval);
    });
  });
}

/** The outcomes the hub stored, oldest first (one per call). */
const stored = (hub: Hub): string[] => hub.queryAudit({ after: 0, limit: 100 }).entries.flatMap((e) => (e.outcome ? [`${e.kind}:${e.outcome}`] : []));

describe('the outcome of a call', () => {
  it('succeeded', async () => {
    const { hub } = openHub();
    await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent });
    expect(stored(hub)).toEqual(['succeeded:succeeded']);
  });

  it('denied by the operator', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    await hub.decide((await prompt).approval_id, { kind: 'deny', by: 'alice' });
    expect((await call).outcome).toBe('denied');
    expect(stored(hub)).toEqual(['failed:denied']);
  });

  it('denied by the default policy when no panel is open (when_no_panel "deny")', async () => {
    const { hub } = openHub({ denyWithoutPanel: true });
    expect((await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }))).outcome).toBe('denied');
    expect(stored(hub)).toEqual(['rejected:denied']);
  });

  it('timed out: the operator did not decide in time', async () => {
    const { hub, dir } = openHub();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 1000 } }));
    await waitFor(() => hub.approvalTimeoutMs() === 1000 || undefined, 5000, 'config reload');
    hub.attachPanel();
    expect((await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }))).outcome).toBe('timed_out');
    expect(stored(hub)).toEqual(['failed:timed_out']);
  });

  it("timed out: the call's deadline passed", async () => {
    const { hub } = openHub({ driverTimeoutMs: 150 });
    expect((await failure(hub.invoke('test:alpha', 'hang', {}, { agent }))).outcome).toBe('timed_out');
    expect(stored(hub)).toEqual(['failed:timed_out']);
  });

  it('failed: the driver failed after the call was allowed', async () => {
    const { hub } = openHub();
    expect((await failure(hub.invoke('test:alpha', 'fail', {}, { agent }))).outcome).toBe('failed');
    expect(stored(hub)).toEqual(['failed:failed']);
  });

  it('cancelled by the agent, running or waiting for the operator', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const running = new AbortController();
    const hang = failure(hub.invoke('test:alpha', 'hang', {}, { agent, signal: running.signal }));
    await waitFor(() => hub.queryAudit({ limit: 10 }).entries.some((e) => e.kind === 'started') || undefined, 5000, 'started');
    running.abort();
    expect((await hang).outcome).toBe('cancelled');
    const waiting = new AbortController();
    const prompt = nextPrompt(hub);
    const write = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, signal: waiting.signal }));
    await prompt;
    waiting.abort();
    expect((await write).outcome).toBe('cancelled');
    expect(stored(hub)).toEqual(['cancelled:cancelled', 'cancelled:cancelled']);
  });

  it('rejected: invalid args, an unknown op', async () => {
    const { hub } = openHub();
    expect((await failure(hub.invoke('test:alpha', 'write', { nope: 1 }, { agent }))).outcome).toBe('rejected');
    expect((await failure(hub.invoke('test:alpha', 'zzz', {}, { agent }))).outcome).toBe('rejected');
    expect(stored(hub)).toEqual(['rejected:rejected', 'rejected:rejected']);
  });

  it("rejected: the driver's precheck refused it before the operator was asked", async () => {
    const { hub, driver } = openHub();
    driver.precheck = () => Promise.reject(new DriverError('Invalid', 'text is too loud'));
    hub.attachPanel();
    expect((await failure(hub.invoke('test:alpha', 'write', { text: 'HI' }, { agent }))).outcome).toBe('rejected');
    expect(stored(hub)).toEqual(['rejected:rejected']);
  });

  it('denied: the hub stopped before the operator decided', async () => {
    const { hub, dir } = openHub();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    await prompt;
    const closing = hub.close();
    expect((await call).outcome).toBe('denied');
    await closing;
    const store = new AuditStore(join(dir, 'audit.sqlite'));
    try {
      // The withdrawn prompt settles as a denial before the kernel is disposed: it ends failed, not cancelled.
      expect(store.query({ outcome: 'denied' }).entries.map((e) => e.kind)).toEqual(['failed']);
    } finally {
      store.close();
    }
  });

  it('the audit query filters by outcome, beside the other filters', async () => {
    const { hub } = openHub({ denyWithoutPanel: true });
    await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent });
    await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    await failure(hub.invoke('test:alpha', 'fail', {}, { agent }));
    const only = (q: Parameters<Hub['queryAudit']>[0]) => hub.queryAudit(q).entries.map((e) => `${e.op}:${e.outcome}`);
    expect(only({ outcome: 'denied' })).toEqual(['write:denied']);
    expect(only({ outcome: 'failed' })).toEqual(['fail:failed']);
    expect(only({ outcome: 'succeeded', op: 'write' })).toEqual([]);
  });
});
