/**
 * How a call was authorized reads the same everywhere: for each outcome, produced through the real
 * hub, the panel (its timeline detail, built from the panel mapping's events, and "Recently
 * decided") and `uplink log`'s line say the same words.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity, ApprovalEvent, Hub, PendingApproval } from '../../../src/main/hub';
import { toInvocationDetail } from '../../../src/main/edges/panel/mapping';
import { checkEvent, checkResponse } from '../../../src/main/edges/panel/validate';
import { formatEntry } from '../../../src/main/edges/cli/format';
import { describeResolution, invocationAuthorization } from '../../../src/shared/audit-record';
import { closeHubs, failure, openHub } from './helpers';
import { waitFor } from '../../fixtures/hub-build';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', version: '2.1.0', session: 's1' };

afterEach(closeHubs);

/** The next prompt, and a promise of how it ended ("Recently decided" words it from that). */
function nextPrompt(hub: Hub): { prompt: Promise<PendingApproval>; resolved: Promise<string> } {
  let id: string | undefined;
  let added!: (p: PendingApproval) => void;
  let ended!: (words: string) => void;
  const prompt = new Promise<PendingApproval>((r) => (added = r));
  const resolved = new Promise<string>((r) => (ended = r));
  const off = hub.subscribeApprovals((e: ApprovalEvent) => {
    if (e.type === 'added' && id === undefined) {
      id = e.approval.approval_id;
      added(e.approval);
    } else if (e.type === 'resolved' && e.approval_id === id) {
      off();
      const { type: _type, ...wire } = e;
      // As the panel session sends it.
      const payload = JSON.parse(JSON.stringify(wire)) as Parameters<typeof describeResolution>[0];
      expect(checkEvent('approvalResolved', payload)).toMatchObject({ ok: true });
      ended(describeResolution(payload));
    }
  });
  return { prompt, resolved };
}

/** What the panel's timeline detail and `uplink log` say about the newest invocation. */
async function bothSay(hub: Hub): Promise<string> {
  const invocation = await waitFor(() => hub.queryAudit({ limit: 20 }).entries.find((e) => e.invocation_id)?.invocation_id, 5000, 'an invocation');
  const entries = hub.queryAudit({ invocation_id: invocation, after: 0, limit: 1000 }).entries;
  const detail = toInvocationDetail(invocation, entries);
  expect(checkResponse('getInvocation', detail)).toMatchObject({ ok: true });
  const panel = invocationAuthorization(detail.events)!;
  expect(panel).toBeDefined();
  const log = entries.map(formatEntry);
  expect(log.filter((l) => l.endsWith(`  ${panel}`))).toHaveLength(1);
  return panel;
}

describe('the words for how a call was authorized, panel and uplink log alike', () => {
  it('approved once by the operator', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'once', by: 'alice' });
    await call;
    expect(await bothSay(hub)).toBe('approved once by the operator (alice)');
    expect(await resolved).toBe('approved once by the operator (alice)');
  });

  it('approved for the session, and the later call that grant covers', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'session', by: 'alice' });
    await call;
    expect(await bothSay(hub)).toBe('approved for the session by the operator (alice)');
    expect(await resolved).toBe('approved for the session by the operator (alice)');
    await hub.invoke('test:alpha', 'write', { text: 'y' }, { agent });
    expect(await bothSay(hub)).toBe('approved for the session (granted earlier by the operator)');
  });

  it('approved always: a standing rule, named on the deciding call and on the calls it approves', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const { rule_id } = await hub.decide((await prompt).approval_id, { kind: 'always', by: 'alice' });
    await call;
    expect(await bothSay(hub)).toBe(`approved always by the operator (alice), as standing rule ${rule_id}`);
    expect(await resolved).toBe(`approved always by the operator (alice), as standing rule ${rule_id}`);
    await hub.invoke('test:alpha', 'write', { text: 'y' }, { agent: { ...agent, session: 'other' } });
    expect(await bothSay(hub)).toBe(`approved by standing rule ${rule_id}`);
  });

  it('a denial is worded as a denial, with the reason — never as "approved by the operator"', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'rm -rf' }, { agent }));
    await hub.decide((await prompt).approval_id, { kind: 'deny', reason: 'not on prod', by: 'alice' });
    await call;
    expect(await bothSay(hub)).toBe('denied by the operator (alice): “not on prod”');
    expect(await resolved).toBe('denied by the operator (alice): “not on prod”');
  });

  it('waiting for the operator, then timed out', async () => {
    const { hub, dir } = openHub();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 1000 } }));
    await waitFor(() => hub.approvalTimeoutMs() === 1000 || undefined, 5000, 'config reload');
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    await prompt;
    expect(await bothSay(hub)).toBe('waiting for the operator');
    await call;
    expect(await bothSay(hub)).toBe('timed out: the operator did not decide in time (auto-denied)');
    expect(await resolved).toBe('timed out: the operator did not decide in time (auto-denied)');
  });

  it('cancelled while waiting for the operator', async () => {
    const { hub } = openHub();
    hub.attachPanel();
    const { prompt, resolved } = nextPrompt(hub);
    const ac = new AbortController();
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, signal: ac.signal }));
    await prompt;
    ac.abort();
    await call;
    expect(await bothSay(hub)).toBe('cancelled while waiting for the operator');
    expect(await resolved).toBe('cancelled while waiting for the operator');
  });

  it('read-only: no approval needed', async () => {
    const { hub } = openHub();
    await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent });
    expect(await bothSay(hub)).toBe('read-only: no approval needed');
  });

  it('no panel (when_no_panel "deny"): denied by the default policy, with why', async () => {
    const { hub } = openHub({ denyWithoutPanel: true });
    await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    expect(await bothSay(hub)).toBe('denied by the default policy: “no panel attached”');
  });

  it('run from the CLI by its user', async () => {
    const { hub } = openHub();
    await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: { kind: 'cli', name: 'uplink-cli', user: 'carol' } });
    expect(await bothSay(hub)).toBe('run from the CLI by carol');
  });
});
