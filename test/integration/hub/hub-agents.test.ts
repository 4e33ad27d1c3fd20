/**
 * Standing rules trust only what an agent cannot declare: the agent id it authenticated as and
 * the channel's labels. A client that calls itself by a trusted agent's name gets a prompt (or a
 * denial), never the rule; "Always" on a channel with no stable label is refused and the prompt
 * stays open. Creating and revoking credentials is audited, never with the token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity } from '../../../src/main/hub';
import { closeHubs, failure, nextPrompt, openHub } from './helpers';
import { auditFiles, tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';

const trusted: AgentIdentity = { kind: 'mcp', agent_id: 'trusted-agent', name: 'claude-code', session: 's1' };
/** Another credential (the default token) declaring the trusted agent's id as its client name. */
const impostor: AgentIdentity = { kind: 'mcp', agent_id: 'default', name: 'trusted-agent', session: 's2' };

function withRules(rules: unknown[]): string {
  const dir = tmpDataDir();
  writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules } });
  return dir;
}

afterEach(closeHubs);

describe('rules and the authenticated agent', () => {
  it('a rule for an agent approves its calls; a client declaring that name with another credential is not covered', async () => {
    const { hub, driver } = openHub({ dir: withRules([{ id: 'trusted-writes', channel: 'test:a', op: 'write', agent: 'trusted-agent' }]) });
    expect(await hub.invoke('test:alpha', 'write', { text: 'ok' }, { agent: trusted })).toEqual({ written: 2 });
    const denied = await failure(hub.invoke('test:alpha', 'write', { text: ' ; echo IMPOSTOR-RAN' }, { agent: impostor }));
    expect(denied.message).toContain('no Uplink panel is open');
    // With a panel open the impostor is asked about, not waved through.
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = failure(hub.invoke('test:alpha', 'write', { text: ' ; echo IMPOSTOR-RAN' }, { agent: impostor }));
    const p = await prompt;
    expect(p.agent).toMatchObject({ agent_id: 'default', name: 'trusted-agent' });
    await hub.decide(p.approval_id, { kind: 'deny', by: 'alice' });
    await call;
    expect(driver.state.invoked.map((i) => i.args)).toEqual([{ text: 'ok' }]);
    // The audit's agent filter is the authenticated id.
    expect(hub.queryAudit({ agent: 'trusted-agent', type: 'decision' }).entries).toHaveLength(1);
    expect(hub.queryAudit({ agent: 'default', type: 'decision' }).entries).toHaveLength(2);
  });

  it('"always" scopes the rule to the deciding request\'s authenticated agent and the label it addressed', async () => {
    const dir = tmpDataDir();
    const { hub } = openHub({ dir });
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: trusted });
    const decided = await hub.decide((await prompt).approval_id, { kind: 'always', by: 'alice' });
    await call;
    const rules = (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { approvals: { rules: unknown[] } }).approvals.rules;
    expect(rules).toEqual([expect.objectContaining({ id: decided.rule_id, channel: 'test:a', op: 'write', agent: 'trusted-agent' })]);
    expect(await hub.invoke('test:a', 'write', { text: 'y' }, { agent: { ...trusted, session: 'later' } })).toEqual({ written: 1 });
    // Same declared name, different credential: asked again.
    const again = nextPrompt(hub);
    const other = hub.invoke('test:alpha', 'write', { text: 'z' }, { agent: impostor });
    await hub.decide((await again).approval_id, { kind: 'once', by: 'alice' });
    await other;
  });

  it('"always" on a channel without a stable label is refused with a hint, and the prompt stays open', async () => {
    const dir = tmpDataDir();
    const { hub } = openHub({ dir });
    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('test:beta', 'write', { text: 'x' }, { agent: trusted });
    const p = await prompt;
    const err = await failure(hub.decide(p.approval_id, { kind: 'always', by: 'alice' }));
    expect(err.rendered).toBe(
      'uplink error [core:Rejected]: cannot approve always on test:beta: it has no stable label, and its id can be reused by another target later — hint: give the target a stable label, or approve once or for the session instead',
    );
    expect(hub.pendingApprovals().map((a) => a.approval_id)).toEqual([p.approval_id]);
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toEqual({ written: 1 });
    expect(hub.listRules()).toEqual([]);
  });

  it('rules naming an address never match, and doctor says so', async () => {
    const { hub } = openHub({
      dir: withRules([
        { id: 'by-id', channel: 'tmux:%3', op: '*' },
        { id: 'by-addr', channel: 'test:alpha', op: 'write' },
        { id: 'window', channel: 'desktop:0x3a00007', op: '*' },
      ]),
    });
    await expect(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: trusted })).rejects.toThrow(/no Uplink panel is open/);
    const warnings = (await hub.doctor()).warnings ?? [];
    expect(warnings).toEqual([
      'standing rule by-id names tmux:%3, a reusable id, and never matches — hint: label the target and name the label instead (e.g. tmux:<@name>)',
      'standing rule window names desktop:0x3a00007, a reusable id, and never matches — hint: label the target and name the label instead (e.g. tmux:<@name>)',
    ]);
  });

  it("creating and revoking an agent is recorded as the operator's decision, never with the token", async () => {
    const { hub, dir } = openHub();
    const { token } = await hub.createAgent('ci-bot', 'alice');
    expect(hub.authenticateAgent(token)).toEqual({ id: 'ci-bot' });
    await hub.revokeAgent('ci-bot', 'alice');
    expect(hub.authenticateAgent(token)).toBeUndefined();
    expect(hub.listAgents()).toEqual([expect.objectContaining({ id: 'ci-bot', created_by: 'alice', revoked_at: expect.any(String) })]);
    const decisions = hub.queryAudit({ type: 'decision' }).entries;
    expect(decisions.map((e) => [e.op, e.by, e.authorized])).toEqual([
      ['agent-revoke', 'alice', 'operator'],
      ['agent-create', 'alice', 'operator'],
    ]);
    await hub.close();
    for (const f of [...auditFiles(dir), { file: 'agents.json', bytes: readFileSync(join(dir, 'agents.json')) }])
      expect(f.bytes.includes(token), f.file).toBe(false);
  });

  it('a corrupt agents.json fails doctor with the reason', async () => {
    const { hub, dir } = openHub();
    writeFileSync(join(dir, 'agents.json'), '[');
    const doctor = await hub.doctor();
    expect(doctor.ok).toBe(false);
    expect(doctor.agents.error).toMatch(/agents\.json: cannot be read .* — no named agent token is accepted until it is fixed/);
  });
});
