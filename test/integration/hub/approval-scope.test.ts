/**
 * What an approval covers, as the operator reads and chooses it through the panel API: the scope of
 * "session" and "always" chosen before the click and checked by the hub, rules edited and revoked
 * afterwards, live session grants listed and revoked, and rules that reach config.json any other
 * way waiting as proposed until the operator confirms them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { dispatchCall } from '../../../src/main/edges/panel/dispatch';
import type { CallOutcome } from '../../../src/main/edges/panel/dispatch';
import type { ApprovalRule, DecideResult, SessionGrantEntry } from '../../../src/shared/panel-types';
import { closeHubs, failure, nextPrompt, openHub } from './helpers';
import { tmpDataDir, writeConfirmedConfig } from '../../fixtures/hub-build';

const builder: AgentIdentity = { kind: 'mcp', agent_id: 'builder', name: 'claude-code', session: 's1' };
const other: AgentIdentity = { kind: 'mcp', agent_id: 'other', name: 'codex', session: 's9' };

const panels: Array<() => void> = [];
afterEach(async () => {
  for (const close of panels.splice(0)) close();
  await closeHubs();
});

/** A panel on the hub whose calls go through the same validation as the wire. */
function panelOn(hub: Hub): (method: string, params?: unknown) => Promise<unknown> {
  const session = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
  panels.push(() => session.close());
  return async (method, params) => {
    const out: CallOutcome = await dispatchCall(session.handlers, method, params);
    if (!out.ok) throw new Error(out.error.message);
    return out.result;
  };
}

/** Starts a call and resolves with its prompt. */
async function prompted(hub: Hub, agent: AgentIdentity, op = 'write', args: object = { text: 'x' }, channel = 'test:alpha') {
  const prompt = nextPrompt(hub);
  const call = hub.invoke(channel, op, args as never, { agent });
  return { call, approval: await prompt };
}

const configRules = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { approvals: { rules: Array<Record<string, unknown>> } }).approvals.rules;

describe('the scope of an approval, chosen before the click', () => {
  it('the prompt says which stable name "always" covers; a channel without a label has none', async () => {
    const { hub } = openHub();
    const panel = panelOn(hub);
    const a = await prompted(hub, builder);
    const listed = (await panel('listPendingApprovals')) as Array<{ rule_channel?: string }>;
    expect(listed[0]!.rule_channel).toBe('test:a');
    await panel('decide', { approval_id: a.approval.approval_id, decision: 'once' });
    await a.call;
    const b = await prompted(hub, builder, 'write', { text: 'x' }, 'test:beta');
    expect(b.approval.rule_channel).toBeUndefined();
    await panel('decide', { approval_id: b.approval.approval_id, decision: 'deny' });
    await failure(b.call);
  });

  it('"always" widened to any agent and two ops writes that rule, and it approves another agent\'s calls', async () => {
    const { hub, dir } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder);
    const decided = (await panel('decide', {
      approval_id: approval.approval_id,
      decision: 'always',
      scope: { agent: 'any', channel: 'test:?', ops: ['write', 'login'] },
    })) as DecideResult;
    expect(decided).toMatchObject({ accepted: true, granted: true });
    await call;
    expect(configRules(dir)).toEqual([expect.objectContaining({ id: decided.rule_id, channel: 'test:?', op: ['write', 'login'] })]);
    expect(configRules(dir)[0]).not.toHaveProperty('agent');
    expect(await hub.invoke('test:alpha', 'login', { user: 'u', password: 'p' }, { agent: other })).toEqual({ ok: true });
    const [rule] = (await panel('listRules')) as ApprovalRule[];
    expect(rule).toMatchObject({ rule_id: decided.rule_id, ops: ['write', 'login'], proposed: false, uses: 1 });
  });

  it('a scope naming a reusable id, not covering the call, or malformed is refused in one line and the prompt stays', async () => {
    const { hub, dir } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder);
    const refusals: Array<[object, RegExp]> = [
      [{ channel: 'test:%3' }, /names a reusable id/],
      [{ channel: 'test:0x3a00007' }, /names a reusable id/],
      [{ channel: 'test:b*' }, /does not cover test:alpha/],
      [{ channel: 'alpha' }, /is not a <driver>:<label or glob>/],
      [{ ops: ['login'] }, /do not include write/],
      [{ ops: ['wr ite'] }, /is not an op name or glob/],
    ];
    for (const [scope, why] of refusals) {
      const answer = (await panel('decide', { approval_id: approval.approval_id, decision: 'always', scope })) as DecideResult;
      expect(answer.accepted).toBe(false);
      expect(answer.message).toMatch(why);
      expect(answer.message).toMatch(/^uplink error \[core:Invalid\]: [^\n]+ — hint: [^\n]+$/);
    }
    const session = (await panel('decide', { approval_id: approval.approval_id, decision: 'session', scope: { agent: 'any' } })) as DecideResult;
    expect(session.message).toMatch(/covers this agent only/);
    await expect(panel('decide', { approval_id: approval.approval_id, decision: 'always', scope: { ops: [] } })).rejects.toThrow(/invalid params for decide/);
    expect(hub.pendingApprovals().map((p) => p.approval_id)).toEqual([approval.approval_id]);
    expect(statSync(join(dir, 'config.json'), { throwIfNoEntry: false })).toBeUndefined();
    await panel('decide', { approval_id: approval.approval_id, decision: 'once' });
    expect(await call).toEqual({ written: 1 });
  });
});

describe('session grants', () => {
  it('a session grant on a label glob is listed and, once revoked, its calls ask again; both are in the audit', async () => {
    const { hub } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder);
    await panel('decide', { approval_id: approval.approval_id, decision: 'session', scope: { channel: 'test:?', ops: ['write', 'login'] } });
    await call;
    expect(await hub.invoke('test:alpha', 'login', { user: 'u', password: 'p' }, { agent: builder })).toEqual({ ok: true });
    const grants = (await panel('listSessionGrants')) as SessionGrantEntry[];
    expect(grants).toEqual([
      expect.objectContaining({ agent: 'builder', session: 's1', client: 'claude-code', channel: 'test:?', ops: ['write', 'login'], granted_by: 'alice' }),
    ]);
    // Another session of the same agent is not covered.
    const elsewhere = await prompted(hub, { ...builder, session: 's2' });
    await panel('decide', { approval_id: elsewhere.approval.approval_id, decision: 'deny' });
    await failure(elsewhere.call);

    await panel('revokeSessionGrant', { grant_id: grants[0]!.grant_id });
    expect(await panel('listSessionGrants')).toEqual([]);
    const again = await prompted(hub, builder);
    await panel('decide', { approval_id: again.approval.approval_id, decision: 'once' });
    await again.call;
    const reasons = hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason);
    expect(reasons).toContainEqual(expect.stringMatching(/^session grant grant-\w+ revoked: write, login on test:\? for agent builder \(session s1\)$/));
    await expect(panel('revokeSessionGrant', { grant_id: grants[0]!.grant_id })).rejects.toThrow(/no session grant/);
  });
});

describe('rules after the fact', () => {
  it("an edit is checked like a prompt's scope, recorded, and takes effect; a revoke is recorded", async () => {
    const { hub, dir } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder);
    const { rule_id } = (await panel('decide', { approval_id: approval.approval_id, decision: 'always' })) as DecideResult;
    await call;
    await expect(panel('updateRule', { rule_id, channel: 'test:%1', ops: ['write'] })).rejects.toThrow(/names a reusable id/);
    await panel('updateRule', { rule_id, channel: 'test:a', ops: ['login'], agent: 'builder' });
    expect(configRules(dir)).toEqual([expect.objectContaining({ id: rule_id, channel: 'test:a', op: 'login', agent: 'builder', created_by: 'alice' })]);
    expect(await hub.invoke('test:alpha', 'login', { user: 'u', password: 'p' }, { agent: builder })).toEqual({ ok: true });
    const write = await prompted(hub, builder);
    await panel('decide', { approval_id: write.approval.approval_id, decision: 'once' });
    await write.call;
    await panel('revokeRule', { rule_id });
    const reasons = hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason);
    expect(reasons).toContain(`standing rule ${rule_id} edited: login on test:a for agent builder (was write on test:a for agent builder)`);
    expect(reasons).toContain(`standing rule ${rule_id} revoked`);
  });
});

describe('rules written to config.json by hand are proposed', () => {
  it('a hand-written rule does not approve until confirmed in the panel; a hand edit of it is proposed again', async () => {
    const dir = tmpDataDir();
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ approvals: { when_no_panel: 'deny', rules: [{ id: 'by-hand', channel: 'test:a', op: 'write' }] } }),
    );
    const { hub } = openHub({ dir });
    // No panel (and refused at once without one): the call is denied as if there were no rule, and nothing tells the agent how to confirm one.
    const denied = await failure(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: builder }));
    expect(denied.rendered).toContain('no Uplink panel is open');
    expect(denied.rendered).not.toMatch(/confirm|propos|config\.json|rule/i);
    // Agents read doctor too: it says what waits, never how to confirm.
    const warnings = (await hub.doctor()).warnings ?? [];
    expect(warnings).toContainEqual(expect.stringMatching(/^1 standing rule in config\.json is proposed, not in force — hint: [^\n]+$/));
    expect(warnings.join('\n')).not.toMatch(/confirm/i);

    const panel = panelOn(hub);
    const pending = await prompted(hub, builder);
    const [rule] = (await panel('listRules')) as ApprovalRule[];
    expect(rule).toMatchObject({ rule_id: 'by-hand', proposed: true });
    await expect(panel('confirmRule', { rule_id: 'by-hand', digest: 'f'.repeat(64) })).rejects.toThrow(/changed since the panel showed it/);
    await panel('confirmRule', { rule_id: 'by-hand', digest: rule!.digest });
    // Confirming does not decide what is already waiting.
    await panel('decide', { approval_id: pending.approval.approval_id, decision: 'once' });
    await pending.call;
    expect(await hub.invoke('test:alpha', 'write', { text: 'y' }, { agent: builder })).toEqual({ written: 1 });
    expect((await hub.doctor()).warnings ?? []).not.toContainEqual(expect.stringMatching(/proposed/));
    expect(statSync(join(dir, 'confirmed-rules.json')).mode & 0o777).toBe(0o600);
    expect(hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason)).toContain('standing rule by-hand confirmed: write on test:a for any agent');

    // Widened by hand: proposed again, so the call asks.
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { rules: [{ id: 'by-hand', channel: 'test:*', op: 'write' }] } }));
    await waitForRule(panel, (r) => r.channel === 'test:*');
    expect(((await panel('listRules')) as ApprovalRule[])[0]).toMatchObject({ proposed: true });
    const asks = await prompted(hub, builder);
    await panel('revokeRule', { rule_id: 'by-hand' });
    expect(hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason)).toContain('standing rule by-hand discarded (it was proposed)');
    await panel('decide', { approval_id: asks.approval.approval_id, decision: 'deny' });
    await failure(asks.call);
  });
});

describe('the confirmations file', () => {
  it('an unreadable confirmations file confirms nothing, and doctor says so', async () => {
    const dir = tmpDataDir();
    writeConfirmedConfig(dir, { approvals: { when_no_panel: 'deny', rules: [{ id: 'made-in-panel', channel: 'test:a', op: 'write' }] } });
    writeFileSync(join(dir, 'confirmed-rules.json'), '{ not json');
    const { hub } = openHub({ dir });
    await expect(hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: builder })).rejects.toThrow(/no Uplink panel/);
    expect(hub.listRules()[0]).toMatchObject({ id: 'made-in-panel', proposed: true });
    expect((await hub.doctor()).warnings).toContainEqual(expect.stringContaining('confirmed-rules.json cannot be read'));
  });

  it('a confirmed rule deleted from config.json and written back by hand is proposed again', async () => {
    const dir = tmpDataDir();
    const rule = { id: 'kept', channel: 'test:a', op: 'write' };
    writeConfirmedConfig(dir, { approvals: { rules: [rule] } });
    const { hub } = openHub({ dir });
    const panel = panelOn(hub);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { rules: [] } }));
    await waitForRules(panel, (rules) => rules.length === 0);
    // Any confirmation the panel makes meanwhile drops confirmations of rules no longer in the file.
    const { call, approval } = await prompted(hub, builder);
    await panel('decide', { approval_id: approval.approval_id, decision: 'always', scope: { ops: ['write', 'login'] } });
    await call;
    const current = configRules(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { rules: [...current, rule] } }));
    await waitForRules(panel, (rules) => rules.some((r) => r.rule_id === 'kept'));
    expect(((await panel('listRules')) as ApprovalRule[]).find((r) => r.rule_id === 'kept')).toMatchObject({ proposed: true });
  });
});

async function waitForRule(panel: (m: string, p?: unknown) => Promise<unknown>, match: (r: ApprovalRule) => boolean): Promise<void> {
  return waitForRules(panel, (rules) => rules.some(match));
}

async function waitForRules(panel: (m: string, p?: unknown) => Promise<unknown>, match: (r: ApprovalRule[]) => boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (match((await panel('listRules')) as ApprovalRule[])) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the hand edit was not reloaded');
}

describe('argument constraints', () => {
  it('a rule with arg constraints covers a matching call, asks for any other, and reads and digests with them', async () => {
    const { hub, dir } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder, 'write', { text: 'git status' });
    const args = { text: { glob: 'git status*' } };
    const decided = (await panel('decide', { approval_id: approval.approval_id, decision: 'always', scope: { args } })) as DecideResult;
    expect(decided).toMatchObject({ accepted: true, granted: true });
    await call;
    expect(configRules(dir)).toEqual([expect.objectContaining({ id: decided.rule_id, channel: 'test:a', op: 'write', args })]);
    expect(await hub.invoke('test:alpha', 'write', { text: 'git status --short' }, { agent: builder })).toEqual({ written: 18 });

    for (const other of [{ text: 'rm -rf /' }, { text: 'git status', sensitive: true }]) {
      const asks = await prompted(hub, builder, 'write', other);
      await panel('decide', { approval_id: asks.approval.approval_id, decision: 'deny' });
      await failure(asks.call);
    }
    const [rule] = (await panel('listRules')) as ApprovalRule[];
    expect(rule).toMatchObject({ rule_id: decided.rule_id, args, proposed: false, uses: 1 });

    // Edited to an exact value: checked, recorded in words, and in force.
    await panel('updateRule', { rule_id: decided.rule_id, channel: 'test:a', ops: ['write'], agent: 'builder', args: { text: 'ls' } });
    expect(hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason)).toContain(
      `standing rule ${decided.rule_id} edited: write on test:a with text = "ls" for agent builder (was write on test:a with text like "git status*" for agent builder)`,
    );
    expect(await hub.invoke('test:alpha', 'write', { text: 'ls' }, { agent: builder })).toEqual({ written: 2 });
  });

  it('a hand-written rule with constraints is confirmed with them; a hand edit of them is proposed again; one on a sensitive arg cannot be confirmed', async () => {
    const dir = tmpDataDir();
    const rules = (args: object) => JSON.stringify({ approvals: { rules: [{ id: 'by-hand', channel: 'test:a', op: ['write', 'login'], args }] } });
    writeFileSync(join(dir, 'config.json'), rules({ text: { glob: 'ls*' } }));
    const { hub } = openHub({ dir });
    const panel = panelOn(hub);
    const [rule] = (await panel('listRules')) as ApprovalRule[];
    await panel('confirmRule', { rule_id: 'by-hand', digest: rule!.digest });
    expect(await hub.invoke('test:alpha', 'write', { text: 'ls -l' }, { agent: builder })).toEqual({ written: 5 });
    expect(hub.queryAudit({ type: 'decision' }).entries.map((e) => e.reason)).toContain(
      'standing rule by-hand confirmed: write, login on test:a with text like "ls*" for any agent',
    );

    writeFileSync(join(dir, 'config.json'), rules({ text: { glob: '*' } }));
    await waitForRule(panel, (r) => JSON.stringify(r.args) === '{"text":{"glob":"*"}}');
    expect(((await panel('listRules')) as ApprovalRule[])[0]).toMatchObject({ proposed: true });

    writeFileSync(join(dir, 'config.json'), rules({ password: 'hunter2' }));
    await waitForRule(panel, (r) => r.args?.password !== undefined);
    const [secret] = (await panel('listRules')) as ApprovalRule[];
    await expect(panel('confirmRule', { rule_id: 'by-hand', digest: secret!.digest })).rejects.toThrow(/arg "password" is sensitive and cannot be constrained/);
  });

  it('a session grant with arg constraints covers matching calls only', async () => {
    const { hub } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder, 'write', { text: 'yes' });
    await panel('decide', { approval_id: approval.approval_id, decision: 'session', scope: { args: { text: 'yes' } } });
    await call;
    expect(await panel('listSessionGrants')).toEqual([expect.objectContaining({ channel: 'test:alpha', ops: ['write'], args: { text: 'yes' } })]);
    expect(await hub.invoke('test:alpha', 'write', { text: 'yes' }, { agent: builder })).toEqual({ written: 3 });
    const asks = await prompted(hub, builder, 'write', { text: 'no' });
    await panel('decide', { approval_id: asks.approval.approval_id, decision: 'deny' });
    await failure(asks.call);
  });

  it('constraints naming no parameter, a sensitive arg, a bad glob, or not met by the request are refused in one line and the prompt stays', async () => {
    const { hub, dir } = openHub();
    const panel = panelOn(hub);
    const { call, approval } = await prompted(hub, builder, 'login', { user: 'u', password: 'p' });
    const refusals: Array<[object, RegExp]> = [
      [{ args: { color: 'red' } }, /arg "color" is not a parameter of the ops covered \(test:login\)/],
      [{ args: { password: 'p' } }, /arg "password" is sensitive and cannot be constrained/],
      [{ args: { user: { glob: 'a\nb' } } }, /the glob for "user" must be 1 to 512 characters/],
      [{ args: { user: { glob: '' } } }, /the glob for "user" must be 1 to 512 characters/],
      [{ args: { user: 'someone-else' } }, /the request's args do not meet user = "someone-else"/],
    ];
    for (const [scope, why] of refusals) {
      for (const decision of ['always', 'session']) {
        const answer = (await panel('decide', { approval_id: approval.approval_id, decision, scope })) as DecideResult;
        expect(answer.accepted).toBe(false);
        expect(answer.message).toMatch(why);
        expect(answer.message).toMatch(/^uplink error \[core:Invalid\]: [^\n]+ — hint: [^\n]+$/);
      }
    }
    expect(hub.pendingApprovals().map((p) => p.approval_id)).toEqual([approval.approval_id]);
    expect(statSync(join(dir, 'config.json'), { throwIfNoEntry: false })).toBeUndefined();
    await panel('decide', { approval_id: approval.approval_id, decision: 'once' });
    expect(await call).toEqual({ ok: true });

    // Text hidden under the request's own sensitive flag cannot be constrained either.
    const flagged = await prompted(hub, builder, 'write', { text: 'hunter2', sensitive: true });
    const answer = (await panel('decide', {
      approval_id: flagged.approval.approval_id,
      decision: 'session',
      scope: { args: { text: 'hunter2' } },
    })) as DecideResult;
    expect(answer.message).toMatch(/arg "text" is sensitive/);
    await panel('decide', { approval_id: flagged.approval.approval_id, decision: 'deny' });
    await failure(flagged.call);
  });
});

describe('an open panel follows config.json', () => {
  it('a hand edit of config.json redraws the rules and settings of a panel that is already open', async () => {
    const { hub, dir } = openHub();
    const events: Array<{ event: string; payload: unknown }> = [];
    const session = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), (event, payload) => events.push({ event, payload }), Date.now());
    panels.push(() => session.close());
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 45_000, rules: [{ id: 'by-hand', channel: 'test:a', op: 'write' }] } }));
    await vi.waitFor(() => {
      expect(events).toContainEqual({ event: 'rulesChanged', payload: [expect.objectContaining({ rule_id: 'by-hand', proposed: true })] });
      expect(events).toContainEqual({ event: 'settingsChanged', payload: expect.objectContaining({ approval_timeout_ms: 45_000 }) });
    });
    events.length = 0;
    writeFileSync(join(dir, 'config.json'), '{ "approvals": ');
    await vi.waitFor(() =>
      expect(events).toContainEqual({ event: 'settingsChanged', payload: expect.objectContaining({ config_error: expect.stringContaining('invalid JSON') }) }),
    );
  });
});
