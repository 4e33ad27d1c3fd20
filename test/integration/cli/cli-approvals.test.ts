/**
 * `uplink approvals`, `approve`, `deny` against a real `uplink serve`: a real MCP agent waits on a
 * prompt while a panel (a raw `ws` socket, signed in as docs/panel-protocol.md says) is attached,
 * and the operator decides from a terminal. Decisions are the panel's decisions — the same grants
 * and rules, the same audit rows — recorded `<user> via cli`; the route they use takes the operator
 * key only, and the CLI reads that key only from a small owner-only regular file.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildForTests, runCli, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  b = await buildForTests();
});

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const user = userInfo().username;

async function serve(d: string): Promise<Served> {
  const s = await startServe(b, d);
  cleanup.push(() => s.stop());
  return s;
}

/** A signed-in panel over a raw WebSocket: its calls, and every event it was sent. */
interface RawPanel {
  call(method: string, params?: unknown): Promise<unknown>;
  events: Array<{ event: string; payload: unknown }>;
}

/** Signs in with a fresh `uplink panel-url` link and attaches a panel (the documented steps). */
async function attachPanel(served: Served, d: string): Promise<RawPanel> {
  const link = JSON.parse((await runCli(b, d, ['panel-url', '--json'])).stdout) as { panel_url: string };
  const url = new URL(link.panel_url);
  const code = url.hash.slice('#code='.length);
  const res = await fetch(new URL('/panel/session', url.origin), {
    method: 'POST',
    headers: { origin: url.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  expect(res.status).toBe(200);
  const { key } = (await res.json()) as { key: string };
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const ws = new WebSocket(`ws://${url.host}/panel/ws`, 'uplink-panel.v1', { origin: url.origin, headers: { cookie } });
  cleanup.push(async () => ws.close());
  const events: RawPanel['events'] = [];
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { t: string; id?: number; result?: unknown; error?: { message: string }; event?: string; payload?: unknown };
    if (frame.t === 'ready') ready();
    else if (frame.t === 'event') events.push({ event: frame.event!, payload: frame.payload });
    else if (frame.t === 'result') waiting.get(frame.id!)?.resolve(frame.result);
    else if (frame.t === 'error' && typeof frame.id === 'number') waiting.get(frame.id)?.reject(new Error(frame.error!.message));
  });
  await new Promise<void>((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  ws.send(JSON.stringify({ t: 'hello', key }));
  await isReady;
  let next = 1;
  return {
    events,
    call: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ t: 'call', id, method, params }));
      }),
  };
}

/** An MCP agent over HTTP with the data dir's token (or another bearer). */
async function agent(served: Served, d: string, bearer = readFileSync(join(d, 'token'), 'utf8').trim()): Promise<Client> {
  const c = new Client({ name: 'test-agent', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(served.mcp_url), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
  cleanup.push(() => c.close());
  return c;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
/** A mutating call that waits for the operator. */
function write(c: Client, text: string): Promise<ToolResult> {
  return c.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text } } }) as Promise<ToolResult>;
}
const textOf = (r: ToolResult): string => r.content.map((x) => x.text ?? '').join('\n');

interface Listed {
  approval_id: string;
  op: string;
  channel: string;
  summary: string;
  age_ms: number;
  expires_in_ms: number;
  agent: { agent_id?: string; name: string };
}
/** `uplink approvals --json` once `n` prompts are pending. */
async function pending(d: string, n = 1): Promise<Listed[]> {
  return waitFor(
    async () => {
      const r = await runCli(b, d, ['approvals', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const list = JSON.parse(r.stdout) as Listed[];
      return list.length >= n ? list : undefined;
    },
    20_000,
    `${n} pending approval(s)`,
  );
}

/** The audit entries of one op, as `uplink log --json` prints them. */
async function logOf(d: string, op: string): Promise<Array<Record<string, unknown>>> {
  const r = await runCli(b, d, ['log', '--json', '--op', op, '--limit', '1000']);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The id without `appr-`, cut to `n` characters: what a person types. */
const prefix = (id: string, n = 6): string => id.replace(/^appr-/, '').slice(0, n);

describe('uplink approvals / approve / deny', () => {
  it('lists a pending prompt: id, age, agent, channel, op, summary, time left', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    await attachPanel(served, d);
    const call = write(await agent(served, d), 'hello from the agent');
    const [listed] = await pending(d);
    expect(listed).toMatchObject({ op: 'write', channel: 'test:alpha', agent: { agent_id: 'default', name: 'test-agent' } });
    expect(listed!.approval_id).toMatch(/^appr-[0-9a-f]{12}$/);
    // The driver's preview in words (the fixture's says what it will write), else the args.
    expect(listed!.summary).toBe('write on alpha with {"text":"hello from the agent"}');
    expect(listed!.age_ms).toBeGreaterThanOrEqual(0);
    expect(listed!.expires_in_ms).toBeGreaterThan(60_000);
    const human = await runCli(b, d, ['approvals']);
    expect(human.code).toBe(0);
    const [head, row, help] = human.stdout.trim().split('\n');
    expect(head).toMatch(/^ID\s+AGE\s+AGENT\s+CHANNEL\s+OP\s+LEFT\s+SUMMARY$/);
    expect(row).toContain(listed!.approval_id);
    expect(row).toMatch(/default \(declares "test-agent@1\.0\.0"\)\s+test:alpha\s+write\s+\d+m\d\ds\s+write on alpha with \{"text":"hello from the agent"\}/);
    expect(help).toContain('uplink approve <id>');
    await runCli(b, d, ['deny', listed!.approval_id]);
    await call;
  });

  it('approve runs the call; the audit and the panel say it was decided via cli', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    const panel = await attachPanel(served, d);
    const call = write(await agent(served, d), 'run me');
    const [listed] = await pending(d);
    const r = await runCli(b, d, ['approve', prefix(listed!.approval_id)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${listed!.approval_id} approved once: write on test:alpha for default (declares "test-agent@1.0.0") (by ${user} via cli)\n`);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('"written"');
    const log = await logOf(d, 'write');
    expect(log.find((e) => e.type === 'decision')).toMatchObject({ authorized: 'operator', granted: true, decision: 'once', by: `${user} via cli` });
    expect(log.some((e) => e.kind === 'succeeded')).toBe(true);
    // In words, as the panel's timeline and `uplink log` show it.
    expect((await runCli(b, d, ['log', '--op', 'write'])).stdout).toContain(`approved once by the operator (${user} via cli)`);
    await waitFor(() => panel.events.find((e) => e.event === 'approvalResolved'));
    expect(panel.events.find((e) => e.event === 'approvalResolved')!.payload).toMatchObject({
      approval_id: listed!.approval_id,
      granted: true,
      decision: 'once',
      by: `${user} via cli`,
    });
    // Decided is final: a second answer is refused (exit 1), and nothing is pending.
    const again = await runCli(b, d, ['approve', listed!.approval_id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^uplink error \[core:NotFound\]: no pending approval matches "appr-[0-9a-f]{12}" — hint: nothing is pending now/);
  });

  it('deny sends the reason to the agent', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    await attachPanel(served, d);
    const call = write(await agent(served, d), 'rm -rf /');
    const [listed] = await pending(d);
    const r = await runCli(b, d, ['deny', prefix(listed!.approval_id, 4), '--reason', 'not on my watch']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('denied: write on test:alpha');
    expect(r.stdout).toContain('reason sent to the agent: "not on my watch"');
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('not on my watch');
    expect((await logOf(d, 'write')).find((e) => e.type === 'decision')).toMatchObject({
      granted: false,
      decision: 'deny',
      by: `${user} via cli`,
      reason: 'not on my watch',
    });
  });

  it('--session and --always create the grant and the rule the panel buttons create, and every panel hears of them', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    const panel = await attachPanel(served, d);
    const c = await agent(served, d);
    const first = write(c, 'one');
    const [one] = await pending(d);
    const session = await runCli(b, d, ['approve', one!.approval_id, '--session', '--json']);
    expect(session.code, session.stderr).toBe(0);
    expect(JSON.parse(session.stdout)).toMatchObject({ approval_id: one!.approval_id, decision: 'session', granted: true, by: `${user} via cli` });
    expect((await first).isError).toBeFalsy();
    const grants = (await panel.call('listSessionGrants')) as Array<{ channel: string; ops: string[]; granted_by: string; agent: string }>;
    expect(grants).toEqual([expect.objectContaining({ channel: 'test:alpha', ops: ['write'], agent: 'default', granted_by: `${user} via cli` })]);
    await waitFor(() => panel.events.find((e) => e.event === 'sessionGrantsChanged'));
    // The same session's next write runs on the grant, without asking.
    expect((await write(c, 'two')).isError).toBeFalsy();
    expect(JSON.parse((await runCli(b, d, ['approvals', '--json'])).stdout)).toEqual([]);

    // Another session of the same agent is not covered: it asks, and --always answers for good.
    const other = await agent(served, d);
    const third = write(other, 'three');
    const [three] = await pending(d);
    const always = await runCli(b, d, ['approve', prefix(three!.approval_id), '--always']);
    expect(always.code, always.stderr).toBe(0);
    expect(always.stdout).toMatch(/approved always: write on test:alpha for default .*, as standing rule rule-[0-9a-f]{12} \(by .* via cli\)/);
    expect((await third).isError).toBeFalsy();
    const rules = (await panel.call('listRules')) as Array<{ rule_id: string; ops: string[]; created_by: string; proposed: boolean }>;
    expect(rules).toEqual([expect.objectContaining({ ops: ['write'], created_by: `${user} via cli`, proposed: false })]);
    await waitFor(() => panel.events.find((e) => e.event === 'rulesChanged'));
    expect((await write(await agent(served, d), 'four')).isError).toBeFalsy();
  });

  it('takes a unique prefix with or without appr-; a short, unknown or mistyped id is one line with a hint', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    await attachPanel(served, d);
    const c = await agent(served, d);
    const calls = [write(c, 'a'), write(c, 'b')];
    const [a, z] = await pending(d, 2);
    const short = await runCli(b, d, ['approve', 'ab']);
    expect(short.code).toBe(2);
    expect(short.stderr).toBe(
      'uplink error [core:Invalid]: approval id "ab" is too short: give at least 4 characters of it — hint: copy it from `uplink approvals`; see `uplink --help`\n',
    );
    // `appr-` says nothing: it does not count towards the four characters.
    expect((await runCli(b, d, ['approve', 'appr-12'])).code).toBe(2);
    const unknown = await runCli(b, d, ['deny', 'zzzzzz']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'uplink error [core:NotFound]: no pending approval matches "zzzzzz" — hint: it may have been decided or timed out already: list what is pending with `uplink approvals`\n',
    );
    const usage = await runCli(b, d, ['approve', a!.approval_id, '--session', '--always']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('approve takes --session or --always, not both');
    expect((await runCli(b, d, ['deny', a!.approval_id, '--session'])).code).toBe(2);
    expect((await runCli(b, d, ['approve', a!.approval_id, '--reason', 'x'])).code).toBe(2);
    // Both prompts are still pending after all that.
    expect(await pending(d, 2)).toHaveLength(2);
    expect((await runCli(b, d, ['approve', `appr-${prefix(a!.approval_id, 5)}`])).code).toBe(0);
    expect((await runCli(b, d, ['deny', prefix(z!.approval_id, 5)])).code).toBe(0);
    const results = await Promise.all(calls);
    expect(results.map((r) => !!r.isError).sort()).toEqual([false, true]);
  });

  it('with no panel attached the empty list says so, and what agents meet meanwhile', async () => {
    const d = tmpDataDir();
    await serve(d);
    const r = await runCli(b, d, ['approvals']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("no approvals pending (no panel is attached: agents' mutating calls wait here until they time out");
    expect((await runCli(b, d, ['approvals', '--json'])).stdout).toBe('[]\n');
  });

  it('without a running hub: exit 2 and where prompts live', async () => {
    const d = tmpDataDir();
    for (const args of [['approvals'], ['approve', 'abcd1234'], ['deny', 'abcd1234', '--reason', 'no']]) {
      const r = await runCli(b, d, args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^uplink error \[core:Unavailable\]: no hub is running for this data directory .*, so no approval is pending — hint: prompts wait in a running hub/,
      );
    }
  });
});

/** A POST with full control of the headers (Host included). */
function post(url: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('operator authority', () => {
  it('an agent cannot decide: its MCP token, a named agent token, no key, a web page or a foreign Host are refused and the prompt stays', async () => {
    const d = tmpDataDir();
    const served = await serve(d);
    const panel = await attachPanel(served, d);
    const named = JSON.parse((await runCli(b, d, ['agents', 'create', 'bot', '--out', join(d, 'bot.token'), '--json'])).stdout) as { token_file: string };
    const botToken = readFileSync(named.token_file, 'utf8').trim();
    const call = write(await agent(served, d, botToken), 'let me in');
    const [listed] = await pending(d);
    const token = readFileSync(join(d, 'token'), 'utf8').trim();
    const key = readFileSync(join(d, 'operator.key'), 'utf8').trim();
    const host = new URL(served.url).host;
    const body = JSON.stringify({ command: 'approve', args: { id: listed!.approval_id, decision: 'always' }, user: 'mallory' });
    const refusals: Array<[Record<string, string>, number, string]> = [
      [{ authorization: `Bearer ${token}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${token}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Bearer ${botToken}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${botToken}` }, 401, 'missing or wrong operator key'],
      [{}, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${key}`, origin: 'http://evil.example' }, 403, 'origin http://evil.example is not allowed'],
      [{ authorization: `Operator ${key}`, origin: served.url }, 403, 'CLI calls are not taken from web pages'],
      [{ authorization: `Operator ${key}`, host: 'evil.example' }, 403, 'host evil.example is not this hub'],
      [{ authorization: `Operator ${key}`, host: `localhost.evil.example:${new URL(served.url).port}` }, 403, 'is not this hub'],
    ];
    for (const [headers, status, message] of refusals) {
      const r = await post(served.url, '/cli', { host, ...headers }, body);
      expect(r.status, JSON.stringify(headers)).toBe(status);
      expect(r.body).toContain(message);
    }
    // Nothing was decided: the prompt waits, no rule exists, no decision names mallory.
    expect((await pending(d))[0]!.approval_id).toBe(listed!.approval_id);
    expect(await panel.call('listRules')).toEqual([]);
    expect((await logOf(d, 'write')).filter((e) => e.type === 'decision')).toEqual([]);
    // The key itself decides (so the refusals above were about the credential), as the body's user.
    const ok = await post(
      served.url,
      '/cli',
      { host, authorization: `Operator ${key}` },
      JSON.stringify({ ...JSON.parse(body), args: { id: listed!.approval_id, decision: 'once' } }),
    );
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ result: { approval_id: listed!.approval_id, granted: true, by: 'mallory via cli' } });
    expect((await call).isError).toBeFalsy();
  });

  it('operator.key is read only as a small owner-only regular file: a FIFO, a device or a loose mode is one line, at once', async () => {
    const d = tmpDataDir();
    await serve(d);
    const path = join(d, 'operator.key');
    const cases: Array<[string, () => void, string]> = [
      ['a FIFO', () => (rmSync(path), execFileSync('mkfifo', [path])), 'is refused: it is a FIFO, not a regular file'],
      ['a symlink to /dev/zero', () => (rmSync(path), symlinkSync('/dev/zero', path)), 'is refused: it is a character device, not a regular file'],
      ['an oversized file', () => (rmSync(path), writeFileSync(path, 'k'.repeat(8192), { mode: 0o600 })), 'is refused: it is over 4096 bytes'],
      ['a group-readable file', () => (rmSync(path), writeFileSync(path, 'k'.repeat(43)), chmodSync(path, 0o640)), 'is readable by others (mode 640)'],
    ];
    for (const [what, replace, says] of cases) {
      replace();
      for (const args of [['approvals'], ['channels'], ['panel-url']]) {
        const started = Date.now();
        const r = await runCli(b, d, args);
        expect(Date.now() - started, `${what}: ${args[0]}`).toBeLessThan(10_000);
        expect(r.code, `${what}: ${args[0]}`).toBe(1);
        expect(r.stderr, `${what}: ${args[0]}`).toMatch(
          new RegExp(
            `^uplink error \\[core:Unavailable\\]: a hub \\(pid \\d+\\) runs for this data directory but its operator key \\S+ ${says.replace(/[()]/g, '\\$&')} — hint: `,
          ),
        );
        expect(r.stderr.trim().split('\n'), `${what}: ${args[0]}`).toHaveLength(1);
      }
    }
  }, 90_000);
});
