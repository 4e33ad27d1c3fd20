/**
 * The hub masks its live secrets in whatever a driver hands back: a pane that shows the MCP token,
 * a sign-in code or a named agent's token is read with the marker in its place, by the agent, in
 * the audit and in the panel's live timeline — results, errors (message, hint, evidence), recv
 * items, channel listings. A code that was used or a token that was revoked is no longer a secret.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DriverError } from '../../../src/main/drivers/contract';
import type { JsonValue } from '../../../src/main/kernel/types';
import type { AgentIdentity, AuditEntry } from '../../../src/main/hub';
import { createOperatorAuth, ensureToken, SECRET_MARKER } from '../../../src/main/hub/credentials';
import { createTestDriver } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';
import { closeHubs, failure, nextPrompt, openHub } from './helpers';
import { createHub } from '../../../src/main/hub/hub-core';

const agent: AgentIdentity = { kind: 'mcp', agent_id: 'default', name: 'claude', session: 's1' };

afterEach(closeHubs);

/** The fixture driver whose pane "shows" `screen()`: `echo` reads it, `fail` quotes it in its error, channel titles carry it. */
function leakyDriver(screen: () => string): ReturnType<typeof createTestDriver> {
  const driver = createTestDriver();
  const invoke = driver.invoke.bind(driver);
  const channels = driver.channels.bind(driver);
  driver.invoke = async (addr, op, args, ctx, signal): Promise<JsonValue> => {
    if (op === 'echo') return { text: `$ uplink panel-url\n${screen()}\n$ ` };
    if (op === 'fail') throw new DriverError('Upstream', `the pane printed ${screen()}`, { hint: `clear ${screen()}`, evidence: `last line: ${screen()}` });
    return invoke(addr, op, args, ctx, signal);
  };
  driver.channels = async () => (await channels()).map((c) => ({ ...c, detail: { title: `bash: ${screen()}` } }));
  return driver;
}

describe('secret masking in the call path', () => {
  it('the MCP token, a live sign-in code and a named agent token never reach the agent, the audit or the live timeline', async () => {
    const dir = tmpDataDir();
    const token = ensureToken(dir);
    const operator = createOperatorAuth(dir, () => 7420);
    const code = operator.mintCode();
    let screen = `token ${token}\nhttp://127.0.0.1:7420/#code=${code}`;
    const { hub } = openHub({ dir, driver: leakyDriver(() => screen) });
    const { token: agentToken } = await hub.createAgent('claude-build', 'alice');
    screen += `\nexport UPLINK_AGENT_TOKEN=${agentToken}`;
    const live: AuditEntry[] = [];
    hub.subscribe((e) => live.push(e));
    const secrets = [token, code, agentToken];
    const clean = (value: unknown): void => {
      const text = JSON.stringify(value);
      for (const s of secrets) expect(text).not.toContain(s);
    };

    const read = (await hub.invoke('test:alpha', 'echo', { text: 'x' }, { agent })) as { text: string };
    expect(read.text).toBe(
      `$ uplink panel-url\ntoken ${SECRET_MARKER}\nhttp://127.0.0.1:7420/#code=${SECRET_MARKER}\nexport UPLINK_AGENT_TOKEN=${SECRET_MARKER}\n$ `,
    );
    const err = await failure(hub.invoke('test:alpha', 'fail', {}, { agent }));
    expect(err.message).toContain(SECRET_MARKER);
    expect(err.hint).toContain(SECRET_MARKER);
    clean({ message: err.message, hint: err.hint, evidence: err.evidence, rendered: err.rendered });
    // An agent that sends a secret somewhere and reads it back through recv.
    await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent: { kind: 'cli', name: 'cli', user: 'alice' } });
    await hub.send('test:alpha', { message: `copy of ${code}` }, { agent: { kind: 'cli', name: 'cli', user: 'alice' } });
    const batch = await hub.recv(undefined, { agent });
    expect(batch.items.map((i) => i.raw)).toEqual([`copy of ${SECRET_MARKER}`]);
    clean(await hub.listChannels());
    clean(await hub.describe('test:alpha'));

    const stored = hub.queryAudit({ limit: 1000 }).entries;
    expect(stored.some((e) => JSON.stringify(e).includes(SECRET_MARKER))).toBe(true);
    clean(stored);
    clean(live);
    expect(live.length).toBeGreaterThan(0);
  });

  it("a precheck's reason shown on a pending prompt (would fail) is masked like a preview", async () => {
    const dir = tmpDataDir();
    const token = ensureToken(dir);
    const driver = leakyDriver(() => `token ${token}`);
    let failing = false;
    driver.precheck = async () => {
      if (failing) throw new DriverError('Rejected', `the pane now shows token ${token}`, { hint: `read it again: ${token}` });
    };
    const hub = createHub({ dataDir: dir, drivers: [driver], progressIntervalMs: 50, recheckMs: 50 });
    try {
      hub.attachPanel();
      const prompt = nextPrompt(hub);
      const call = hub.invoke('test:alpha', 'write', { text: 'x' }, { agent });
      const { approval_id } = await prompt;
      failing = true;
      await vi.waitFor(() => expect(hub.pendingApprovals().find((p) => p.approval_id === approval_id)?.would_fail).toBeDefined(), { timeout: 5000 });
      const shown = JSON.stringify(hub.pendingApprovals());
      expect(shown).toContain(SECRET_MARKER);
      expect(shown).not.toContain(token);
      await hub.decide(approval_id, { kind: 'deny', by: 'alice' });
      await failure(call);
    } finally {
      await hub.close();
    }
  });

  it('a long pane read is masked in full for the agent and as stored (bounded) in the audit', async () => {
    const dir = tmpDataDir();
    const token = ensureToken(dir);
    const screen = `${token}\n${'scrollback line\n'.repeat(2000)}${token}`;
    const { hub } = openHub({ dir, driver: leakyDriver(() => screen) });
    const read = (await hub.invoke('test:alpha', 'echo', { text: 'x' }, { agent })) as { text: string };
    expect(read.text.startsWith(`$ uplink panel-url\n${SECRET_MARKER}\n`)).toBe(true);
    expect(read.text.endsWith(`${SECRET_MARKER}\n$ `)).toBe(true);
    const stored = hub.queryAudit({ limit: 100 }).entries.find((e) => e.kind === 'succeeded');
    expect(JSON.stringify(stored?.output)).toContain(SECRET_MARKER);
    expect(JSON.stringify(hub.queryAudit({ limit: 100 }))).not.toContain(token);
  });

  it('a used code and a revoked token are no longer masked; the session the code opened is', async () => {
    const dir = tmpDataDir();
    const operator = createOperatorAuth(dir, () => 7420);
    const code = operator.mintCode();
    let screen = code;
    const { hub } = openHub({ dir, driver: leakyDriver(() => screen) });
    const echo = async (): Promise<string> => ((await hub.invoke('test:alpha', 'echo', { text: 'x' }, { agent })) as { text: string }).text;
    expect(await echo()).not.toContain(code);
    const session = operator.redeem(code)!;
    expect(await echo()).toContain(code);
    screen = `key ${session.key}, cookie ${session.id}`;
    expect(await echo()).toContain(`key ${SECRET_MARKER}, cookie ${SECRET_MARKER}`);
    const { token } = await hub.createAgent('short-lived', 'alice');
    screen = token;
    expect(await echo()).not.toContain(token);
    await hub.revokeAgent('short-lived', 'alice');
    expect(await echo()).toContain(token);
  });
});
