/**
 * Approval flows driven through the hub API exactly as the panel drives them: once, session,
 * always (persisted rule, survives restart), deny with a reason, timeout, first decision wins,
 * no panel ⇒ denied at once with the hint; plus restart persistence of the audit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity, ApprovalEvent, HubError } from '../../../src/main/hub';
import { closeHubs, failure, nextPrompt, openHub } from './helpers';
import { tmpDataDir, waitFor, writeConfirmedConfig } from '../../fixtures/hub-build';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', version: '2.1.0', session: 's1' };

const open = (dir?: string): ReturnType<typeof openHub> => openHub({ ...(dir ? { dir } : {}), progressIntervalMs: 30 });

afterEach(closeHubs);

describe('approvals', () => {
  it('without a panel, a mutating op waits its timeout for one: a panel that attaches sees the prompt and decides it', async () => {
    const { hub, driver } = open();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const p = await prompt;
    expect(hub.panelsAttached()).toBe(0);
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    hub.attachPanel();
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ written: 1 });
    expect(driver.state.invoked.map((i) => i.op)).toEqual(['write']);
  });

  it('with approvals.when_no_panel "deny" and no panel, a mutating op is denied at once with a hint to ask the operator', async () => {
    const { hub, driver } = openHub({ progressIntervalMs: 30, denyWithoutPanel: true });
    const err = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    expect(err.rendered).toBe(
      `uplink error [test:Rejected]: write on test:alpha: denied: it needs operator approval and no Uplink panel is open — hint: ask the operator to open the Uplink panel and approve it, then retry`,
    );
    expect(driver.state.invoked).toHaveLength(0);
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'default_policy', granted: false });
  });

  it('the prompt shows agent, channel + labels, op, args (sensitive redacted), provider, interaction, deadline and preview', async () => {
    const { hub } = open();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:a', 'login', { user: 'bob', password: 'hunter2' }, { agent });
    const p = await prompt;
    expect(p).toMatchObject({
      agent,
      channel: 'test:a',
      channel_labels: ['a'],
      op: 'login',
      capability_id: 'test.login',
      args: { user: 'bob', password: '•••• (sensitive, 7 chars)' },
      provider_id: 'uplink/test',
      interaction: 'typed',
    });
    expect(p.expires_at - p.requested_at).toBe(120_000);
    expect(p.preview?.text).toContain('login on a');
    expect(p.preview?.text).not.toContain('hunter2');
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ ok: true });
    expect(hub.pendingApprovals()).toEqual([]);
  });

  it('approve once: this call runs, the next one asks again; the decision records operator + who', async () => {
    const { hub, driver } = open();
    hub.attachPanel();
    let prompt = nextPrompt(hub);
    const first = hub.invoke('test:alpha', 'write', { text: 'one' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'once', by: 'alice' });
    expect(await first).toEqual({ written: 3 });
    prompt = nextPrompt(hub);
    const second = hub.invoke('test:alpha', 'write', { text: 'two' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'once', by: 'alice' });
    await second;
    expect(driver.state.invoked.map((i) => i.args)).toEqual([{ text: 'one' }, { text: 'two' }]);
    const decisions = hub.queryAudit({ type: 'decision' }).entries;
    expect(decisions.filter((d) => d.authorized === 'operator' && d.by === 'alice')).toHaveLength(2);
    const kinds = hub
      .queryAudit({ type: 'event' })
      .entries.map((e) => e.kind)
      .reverse();
    expect(kinds.slice(0, 5)).toEqual(['accepted', 'approval_requested', 'approval_granted', 'started', 'succeeded']);
  });

  it('approve for the session: later calls of the same channel+op and session run without asking', async () => {
    const { hub } = open();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const first = hub.invoke('test:alpha', 'write', { text: 'a' }, { agent });
    await hub.decide((await prompt).approval_id, { kind: 'session', by: 'alice' });
    await first;
    expect(await hub.invoke('test:alpha', 'write', { text: 'b' }, { agent })).toEqual({ written: 1 });
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'session', granted: true });
    // Another channel, or another session, still asks.
    const other = nextPrompt(hub);
    const third = hub.invoke('test:beta', 'write', { text: 'c' }, { agent });
    const p = await other;
    expect(p.channel).toBe('test:beta');
    await hub.decide(p.approval_id, { kind: 'deny', by: 'alice' });
    await expect(third).rejects.toThrow();
  });

  it('approve for the session also approves the identical prompts already queued, each recorded as the session grant', async () => {
    const { hub, driver } = open();
    hub.attachPanel();
    const calls = ['a', 'b', 'c'].map((text) => hub.invoke('test:alpha', 'write', { text }, { agent }));
    const elsewhere = hub.invoke('test:beta', 'write', { text: 'd' }, { agent });
    const otherSession = hub.invoke('test:alpha', 'write', { text: 'e' }, { agent: { ...agent, session: 's2' } });
    await waitFor(() => hub.pendingApprovals().length === 5 || undefined, 5000, 'five prompts');
    const [first] = hub.pendingApprovals();
    await hub.decide(first!.approval_id, { kind: 'session', by: 'alice' });
    expect(await Promise.all(calls)).toEqual([{ written: 1 }, { written: 1 }, { written: 1 }]);
    expect(driver.state.invoked.map((i) => i.args)).toEqual(expect.arrayContaining([{ text: 'a' }, { text: 'b' }, { text: 'c' }]));
    // Another channel, or another session of the same agent, still waits for the operator.
    expect(hub.pendingApprovals().map((p) => [p.channel, p.agent.session])).toEqual([
      ['test:beta', 's1'],
      ['test:alpha', 's2'],
    ]);
    const decisions = hub.queryAudit({ type: 'decision' }).entries.filter((d) => d.channel === 'test:alpha');
    expect(decisions.map((d) => [d.authorized, d.by]).sort()).toEqual([
      ['operator', 'alice'],
      ['session', undefined],
      ['session', undefined],
    ]);
    for (const p of hub.pendingApprovals()) await hub.decide(p.approval_id, { kind: 'deny', by: 'alice' });
    await Promise.allSettled([elsewhere, otherSession]);
  });

  it('deny all from one agent: every pending prompt of that authenticated agent is denied with the reason; others wait', async () => {
    const { hub, driver } = open();
    hub.attachPanel();
    const runaway = [
      failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent })),
      failure(hub.invoke('test:beta', 'login', { user: 'u', password: 'p' }, { agent: { ...agent, session: 's2' } })),
    ];
    const calm = hub.invoke('test:alpha', 'write', { text: 'y' }, { agent: { ...agent, agent_id: 'reviewer' } });
    await waitFor(() => hub.pendingApprovals().length === 3 || undefined, 5000, 'three prompts');
    const denied = await hub.denyAll('builder', 'alice', 'stop looping');
    expect(denied).toHaveLength(2);
    for (const err of await Promise.all(runaway)) expect(err.rendered).toMatch(/denied by the operator: “stop looping”/);
    expect(driver.state.invoked).toHaveLength(0);
    const decisions = hub.queryAudit({ type: 'decision' }).entries;
    expect(decisions.filter((d) => d.authorized === 'operator' && !d.granted && d.reason === 'stop looping' && d.by === 'alice')).toHaveLength(2);
    expect(hub.pendingApprovals().map((p) => p.agent.agent_id)).toEqual(['reviewer']);
    await hub.decide(hub.pendingApprovals()[0]!.approval_id, { kind: 'once', by: 'alice' });
    await calm;
  });

  it('deny with a reason: the agent receives the reason; nothing runs', async () => {
    const { hub, driver } = open();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'rm -rf' }, { agent }));
    await hub.decide((await prompt).approval_id, { kind: 'deny', reason: 'not on prod', by: 'alice' });
    const err = await call;
    expect(err.rendered).toBe(
      'uplink error [test:Rejected]: write on test:alpha: denied by the operator: “not on prod” — hint: do not retry the same action unchanged; ask the operator what they want instead',
    );
    expect(driver.state.invoked).toHaveLength(0);
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'operator', by: 'alice', granted: false, reason: 'not on prod' });
    expect(hub.queryAudit({ state: 'failed' }).entries[0]).toMatchObject({ error_code: 'policy_denied', error_kind: 'Rejected' });
  });

  it('the first decision wins; a later one is "already decided"', async () => {
    const { hub } = open();
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const { approval_id } = await prompt;
    const results = await Promise.allSettled([hub.decide(approval_id, { kind: 'once', by: 'alice' }), hub.decide(approval_id, { kind: 'deny', by: 'bob' })]);
    expect(results[0]!.status).toBe('fulfilled');
    expect(results[1]!.status).toBe('rejected');
    const late = (results[1] as PromiseRejectedResult).reason as HubError;
    expect(late.rendered).toMatch(/^uplink error \[core:Rejected\]: approval appr-[0-9a-f]+ was already decided \(approved once by alice\)/);
    await call;
    await expect(hub.decide('appr-000000000000', { kind: 'once', by: 'x' })).rejects.toThrow(/no pending approval/);
  });

  it('unanswered prompts time out and are denied; a decision after the timeout is "already decided"', async () => {
    const { hub, dir } = open();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 1000 } }));
    await waitFor(() => hub.approvalTimeoutMs() === 1000 || undefined, 5000, 'config reload');
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const progress: string[] = [];
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, onProgress: (p) => progress.push(p.message) }));
    const p = await prompt;
    const err = await call;
    expect(err.rendered).toMatch(
      /^uplink error \[test:Timeout\]: write on test:alpha: timed out: the operator did not decide within 1 s \(auto-denied\) — hint: ask the operator/,
    );
    // An agent is never told how to approve itself.
    expect(err.rendered).not.toMatch(/config\.json|standing rule|approvals\.rules/);
    expect(progress.some((m) => m.startsWith('waiting for operator approval of write on test:alpha'))).toBe(true);
    await expect(hub.decide(p.approval_id, { kind: 'once', by: 'late' })).rejects.toThrow(/already decided \(timed out\)/);
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: 'timeout', granted: false });
  });

  it('a cancelled call drops its prompt', async () => {
    const { hub } = open();
    hub.attachPanel();
    const events: ApprovalEvent[] = [];
    hub.subscribeApprovals((e) => events.push(e));
    const ac = new AbortController();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, signal: ac.signal }));
    await prompt;
    ac.abort();
    await call;
    await waitFor(() => hub.pendingApprovals().length === 0 || undefined, 5000, 'prompt dropped');
  });

  it('with when_no_panel "deny", detaching the last panel brings back the immediate deny', async () => {
    const { hub } = openHub({ progressIntervalMs: 30, denyWithoutPanel: true });
    const detach = hub.attachPanel();
    const second = hub.attachPanel();
    expect(hub.panelsAttached()).toBe(2);
    detach();
    detach();
    second();
    expect(hub.panelsAttached()).toBe(0);
    const err = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    expect(err.message).toContain('no Uplink panel is open');
  });

  it('with when_no_panel "deny", when the last panel detaches and none comes back within the grace, pending prompts are denied with a hint to ask the operator', async () => {
    const { hub, driver } = openHub({ progressIntervalMs: 30, panelGraceMs: 300, denyWithoutPanel: true });
    const first = hub.attachPanel();
    const second = hub.attachPanel();
    const events: ApprovalEvent[] = [];
    hub.subscribeApprovals((e) => events.push(e));
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    const p = await prompt;
    first();
    // Another panel is still attached: the prompt stays.
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    second();
    const detachedAt = Date.now();
    // Within the grace the prompt waits for a panel to come back (a window: it must not go meanwhile).
    await new Promise((r) => setTimeout(r, 100));
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    const err = await call;
    expect(Date.now() - detachedAt).toBeGreaterThanOrEqual(290);
    expect(err.rendered).toBe(
      `uplink error [test:Rejected]: write on test:alpha: denied: it needs operator approval and the Uplink panel was closed before the operator decided — hint: ask the operator to open the Uplink panel and approve it, then retry`,
    );
    expect(driver.state.invoked).toHaveLength(0);
    expect(hub.pendingApprovals()).toEqual([]);
    expect(events).toContainEqual({ type: 'resolved', approval_id: p.approval_id, granted: false, authorized: 'default_policy' });
    expect(hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({
      authorized: 'default_policy',
      granted: false,
      op: 'write',
      reason: 'the last panel detached before a decision',
    });
    await expect(hub.decide(p.approval_id, { kind: 'once', by: 'late' })).rejects.toThrow(/already decided/);
  });

  it('by default, a prompt outlives the last panel detaching: it waits its timeout, not the grace', async () => {
    const { hub } = openHub({ progressIntervalMs: 30, panelGraceMs: 100 });
    const detach = hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }));
    const p = await prompt;
    detach();
    await new Promise((r) => setTimeout(r, 300));
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    await hub.decide(p.approval_id, { kind: 'deny', by: 'alice' });
    expect((await call).message).toContain('denied by the operator');
  });

  it('with when_no_panel "deny", a panel that re-attaches within the grace sees the still-pending prompt and decides it', async () => {
    const { hub, driver } = openHub({ progressIntervalMs: 30, panelGraceMs: 300, denyWithoutPanel: true });
    const detach = hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const p = await prompt;
    // The panel drops (a reload, or closed for reading too slowly) and comes back.
    detach();
    // Away for half the grace: the absence itself is the scenario.
    await new Promise((r) => setTimeout(r, 150));
    hub.attachPanel();
    // Past the end of the first grace: the prompt must not be dropped meanwhile.
    await new Promise((r) => setTimeout(r, 300));
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ written: 1 });
    expect(driver.state.invoked.map((i) => i.op)).toEqual(['write']);
  });

  it('always appends a rule to config.json (preserving the rest) that approves later calls, also after a restart', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ tmux: { socket: '/tmp/x' }, approvals: { timeout_ms: 60000, when_no_panel: 'deny' } }, null, 2));
    const first = open(dir);
    first.hub.attachPanel();
    const prompt = nextPrompt(first.hub);
    const call = first.hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const decided = await first.hub.decide((await prompt).approval_id, { kind: 'always', by: 'alice' });
    expect(decided.rule_id).toMatch(/^rule-/);
    await call;
    const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
      tmux: unknown;
      approvals: { timeout_ms: number; rules: Array<Record<string, string>> };
    };
    expect(file.tmux).toEqual({ socket: '/tmp/x' });
    expect(file.approvals.timeout_ms).toBe(60000);
    expect(file.approvals.rules).toEqual([
      expect.objectContaining({ id: decided.rule_id, channel: 'test:a', op: 'write', agent: 'builder', created_by: 'alice' }),
    ]);
    await first.hub.close();

    // Restart: no panel needed, the rule decides, and its use is tracked.
    const second = open(dir);
    expect(await second.hub.invoke('test:alpha', 'write', { text: 'y' }, { agent: { ...agent, session: 'other' } })).toEqual({ written: 1 });
    const rules = second.hub.listRules();
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ id: decided.rule_id, uses: 1 });
    expect(rules[0]!.last_used_at).toBeGreaterThan(0);
    expect(second.hub.queryAudit({ type: 'decision' }).entries[0]).toMatchObject({ authorized: `rule:${decided.rule_id}`, granted: true });
    // The audit of the first run survived the restart.
    expect(second.hub.queryAudit({ agent: 'builder', state: 'succeeded' }).entries).toHaveLength(2);

    await second.hub.revokeRule(decided.rule_id!, 'alice');
    expect(second.hub.listRules()).toEqual([]);
    const err = await failure(second.hub.invoke('test:alpha', 'write', { text: 'z' }, { agent }));
    expect(err.message).toContain('no Uplink panel is open');
    await expect(second.hub.revokeRule('rule-nope', 'alice')).rejects.toThrow(/no standing rule/);
  });

  it('a hand-written rule with globs approves matching requests only', async () => {
    const dir = tmpDataDir();
    writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules: [{ id: 'writes-on-alpha', channel: 'test:a*', op: 'write', agent: 'build*' }] } });
    const { hub } = open(dir);
    expect(await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent })).toEqual({ written: 1 });
    await expect(hub.invoke('test:beta', 'write', { text: 'x' }, { agent })).rejects.toThrow(/no Uplink panel/);
    await expect(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: { kind: 'mcp', name: 'other' } })).rejects.toThrow(/no Uplink panel/);
  });

  it('a hand-written rule may leave out its id: it gets one derived from its content, and can be confirmed and revoked by it', async () => {
    const dir = tmpDataDir();
    const handWritten = { channel: 'test:a*', op: 'write', agent: 'build*' };
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { rules: [handWritten, { ...handWritten, op: 'read' }] } }));
    const { hub } = open(dir);
    const rules = hub.listRules();
    expect(rules.map((r) => r.id)).toEqual([expect.stringMatching(/^rule-[0-9a-f]{8}$/), expect.stringMatching(/^rule-[0-9a-f]{8}$/)]);
    expect(rules[0]!.id).not.toBe(rules[1]!.id);
    // The same content gives the same id in another process.
    expect(open(dir).hub.listRules()[0]!.id).toBe(rules[0]!.id);
    await hub.confirmRule(rules[0]!.id, rules[0]!.digest, 'alice');
    expect(await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent })).toEqual({ written: 1 });
    await hub.revokeRule(rules[0]!.id, 'alice');
    const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { approvals: { rules: object[] } };
    expect(file.approvals.rules).toEqual([{ ...handWritten, op: 'read' }]);
  });

  it('a standing rule matches with the shared glob: ? is one code point, / an ordinary character', async () => {
    const dir = tmpDataDir();
    writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules: [{ id: 'bots', channel: 'test:a', op: 'wri?e', agent: '?-build/*' }] } });
    const { hub } = open(dir);
    const bot = (agent_id: string): AgentIdentity => ({ ...agent, agent_id });
    expect(await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: bot('🤖-build/ci') })).toEqual({ written: 1 });
    await expect(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: bot('🤖🤖-build/ci') })).rejects.toThrow(/no Uplink panel/);
  });

  it('setApprovalTimeoutMs writes the config; setTier is human-only and audited', async () => {
    const { hub, driver, dir } = open();
    await hub.setApprovalTimeoutMs(30_000, 'alice');
    expect(hub.approvalTimeoutMs()).toBe(30_000);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))).toEqual({ approvals: { timeout_ms: 30_000 } });
    await expect(hub.setApprovalTimeoutMs(5, 'alice')).rejects.toThrow(/out of range/);
    await hub.setTier('test:alpha', 'operator', { kind: 'panel', name: 'panel', user: 'alice' });
    expect(driver.state.tiers).toEqual({ alpha: 'operator' });
    await expect(hub.setTier('test:alpha', 'godmode', agent)).rejects.toThrow(/only a person/);
    expect(hub.queryAudit({ op: 'set-tier' }).entries[0]).toMatchObject({ authorized: 'operator', by: 'alice', reason: 'tier set to operator' });
  });

  it('a broken config keeps the last good one and doctor says where it broke', async () => {
    const dir = tmpDataDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 5000 } }));
    const { hub } = open(dir);
    expect(hub.approvalTimeoutMs()).toBe(5000);
    writeFileSync(join(dir, 'config.json'), '{\n  "approvals": { "timeout_ms": 7000, }\n}\n');
    const doctor = await waitFor(
      async () => {
        const d = await hub.doctor();
        return d.config.ok ? undefined : d;
      },
      5000,
      'config error',
    );
    expect(doctor.ok).toBe(false);
    expect(doctor.config.error).toMatch(/invalid JSON at line 2, column \d+/);
    expect(doctor.config.error).toContain('last good config stays in use');
    expect(hub.approvalTimeoutMs()).toBe(5000);
    expect(hub.queryAudit({ op: 'config' }).entries[0]).toMatchObject({ type: 'rejected', error_kind: 'Invalid' });
    // A decision that would write the file refuses rather than overwrite the hand edit.
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
    const p = await prompt;
    await expect(hub.decide(p.approval_id, { kind: 'always', by: 'alice' })).rejects.toThrow(/is broken/);
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    await call;
    // Schema errors name the pointer.
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 'soon' } }));
    await waitFor(async () => ((await hub.doctor()).config.error?.includes('/approvals/timeout_ms') ? true : undefined), 5000, 'schema error');
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 9000 } }));
    await waitFor(() => (hub.approvalTimeoutMs() === 9000 ? true : undefined), 5000, 'recovery');
    expect((await hub.doctor()).ok).toBe(true);
  });
});
