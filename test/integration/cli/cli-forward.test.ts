/**
 * The CLI with a hub running for its data directory: every command goes to the hub's `POST /cli`
 * with the operator key, prints exactly what the embedded hub prints, and loads none of the hub.
 * The route takes the operator key only; a hub that dies mid-call is one error line, never a
 * second run in an embedded hub.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { buildForTests, cliEnv, ROOT, runCli, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
const running: Served[] = [];

beforeAll(async () => {
  b = await buildForTests();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(dataDir: string, extra: Record<string, string> = {}): Promise<Served> {
  const s = await startServe(b, dataDir, extra);
  running.push(s);
  return s;
}

/** A POST to the hub with full control of the headers (Host included). */
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

/** Starts `uplink <args>` without waiting for it. */
function startCli(
  dataDir: string,
  args: string[],
): {
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stdout(): string;
  kill(signal: NodeJS.Signals): void;
} {
  const child = spawn(process.execPath, [b.launcher, ...args], { env: cliEnv(b, dataDir), cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return {
    done: new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))),
    stdout: () => stdout,
    kill: (signal) => child.kill(signal),
  };
}

/** The slow call's entries in the hub's log, read through the CLI. */
async function slowStates(dataDir: string): Promise<string[]> {
  const log = await runCli(b, dataDir, ['log', '--json', '--op', 'slow']);
  return log.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { kind?: string }).kind ?? '');
}

describe('the CLI with a hub running', () => {
  it('prints what the embedded hub prints, with the same exit codes, for every command', async () => {
    const d = tmpDataDir();
    const mark = { UPLINK_TEST_MARK: 'm' };
    const commands: string[][] = [
      ['doctor'],
      ['doctor', '--json'],
      ['channels'],
      ['channels', '--json'],
      ['ops', 'test:alpha'],
      ['ops', 'test:alpha', '--json'],
      ['ops', 'test:nope'],
      ['invoke', 'test:alpha', 'write', '{"text":"abcd"}', '--json'],
      ['invoke', 'test:alpha', 'pick', '--interaction', 'visual_ui'],
      ['invoke', 'test:alpha', 'echo', '{"text":'],
      ['invoke', 'test:alpha', 'echo', '{"text":1}'],
      ['invoke', 'test:alpha', 'fail'],
      ['invoke', 'test:alpha', 'crash'],
      ['invoke', 'ghost:1', 'noop'],
      ['send', 'test:alpha', 'x'.repeat(70 * 1024)],
      ['send', 'test:alpha', 'x', '--reply-hint', 'loud'],
      ['recv', '--json'],
      ['recv', '--driver', 'ghost'],
      ['tier', 'test:alpha', 'operator'],
      ['tier', 'test:nope', 'operator'],
      ['agents'],
      ['agents', 'revoke', 'nobody'],
      ['agents', 'frob'],
    ];
    const embedded = [];
    for (const c of commands) embedded.push(await runCli(b, d, c, mark));
    const hub = await serve(d, mark);
    for (const [i, c] of commands.entries()) expect(await runCli(b, d, c, mark), c.join(' ').slice(0, 80)).toEqual(embedded[i]);
    // The hub served them: its channels carry its mark, not this process's.
    const served = await runCli(b, d, ['channels', '--json'], { UPLINK_TEST_MARK: 'cli' });
    expect((JSON.parse(served.stdout) as Array<{ detail: { mark?: string } }>)[0]!.detail.mark).toBe('m');
    // The same log through the hub as read from the store once it is gone.
    const viaHub = await runCli(b, d, ['log', '--json', '--limit', '1000']);
    const human = await runCli(b, d, ['log', '--limit', '1000']);
    expect(viaHub.stdout.split('\n').length).toBeGreaterThan(40);
    await hub.stop();
    expect(await runCli(b, d, ['log', '--json', '--limit', '1000'])).toEqual(viaHub);
    expect(await runCli(b, d, ['log', '--limit', '1000'])).toEqual(human);
  });

  it('a forwarded mutating invoke and send are recorded as authorized=cli with the OS user', async () => {
    const d = tmpDataDir();
    await serve(d);
    expect((await runCli(b, d, ['invoke', 'test:alpha', 'write', '{"text":"hi"}'])).code).toBe(0);
    const sent = await runCli(b, d, ['send', 'test:alpha', 'hello', '--json']);
    expect(JSON.parse(sent.stdout)).toMatchObject({ delivered: true });
    const log = await runCli(b, d, ['log', '--json', '--state', 'succeeded']);
    expect(log.code).toBe(0);
    const decisions = (await runCli(b, d, ['log', '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.type === 'decision');
    expect(decisions.map((e) => e.op)).toEqual(['write', 'send']);
    for (const e of decisions)
      expect(e).toMatchObject({
        authorized: 'cli',
        by: userInfo().username,
        granted: true,
        agent: { kind: 'cli', agent_id: 'uplink-cli', user: userInfo().username },
      });
  });

  it("log --follow streams the hub's new entries and stops on Ctrl-C with exit 0", async () => {
    const d = tmpDataDir();
    await serve(d);
    expect((await runCli(b, d, ['invoke', 'test:alpha', 'noop'])).code).toBe(0);
    const follow = startCli(d, ['log', '--follow', '--json']);
    try {
      await waitFor(() => follow.stdout().includes('"op":"noop"') || undefined, 20_000, 'the initial log');
      expect((await runCli(b, d, ['invoke', 'test:beta', 'echo', '{"text":"later"}'])).code).toBe(0);
      await waitFor(() => follow.stdout().includes('"channel":"test:beta"') || undefined, 20_000, 'the followed entry');
    } finally {
      follow.kill('SIGINT');
    }
    const r = await follow.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('Ctrl-C on a waiting invoke cancels the call in the hub', async () => {
    const d = tmpDataDir();
    await serve(d);
    const cli = startCli(d, ['invoke', 'test:alpha', 'slow', '{"ms":60000,"timeout_ms":90000}']);
    await waitFor(async () => (await slowStates(d)).includes('started') || undefined, 20_000, 'the slow call to start');
    cli.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    await waitFor(async () => (await slowStates(d)).includes('cancelled') || undefined, 20_000, 'the slow call to be cancelled');
  });

  it('a hub killed mid-invoke: one Unavailable line, exit 1, and no second run', async () => {
    const d = tmpDataDir();
    const hub = await serve(d);
    const cli = startCli(d, ['invoke', 'test:alpha', 'slow', '{"ms":60000,"timeout_ms":90000}']);
    await waitFor(async () => (await slowStates(d)).includes('started') || undefined, 20_000, 'the slow call to start');
    running.splice(running.indexOf(hub), 1);
    hub.child.kill('SIGKILL');
    const r = await cli.done;
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      new RegExp(
        `^uplink error \\[core:Unavailable\\]: the hub at ${hub.url.replace(/[.]/g, '\\.')} stopped answering before invoke finished \\([^)]+\\) — hint: the call may have run: check \`uplink log\`[^\\n]*\\n$`,
      ),
    );
    // Only the hub's run is recorded: the CLI did not start the call again in a hub of its own.
    expect((await slowStates(d)).filter((k) => k === 'accepted')).toHaveLength(1);
  });

  it('the forwarding path loads none of the hub: no SQLite, ajv, MCP SDK or drivers', async () => {
    const d = tmpDataDir();
    await serve(d);
    const loaded = async (args: string[]): Promise<string[]> => {
      const log = join(tmpDataDir('uplink-modules-'), 'modules.txt');
      const child = spawn(process.execPath, ['--import', join(ROOT, 'test/fixtures/module-log.mjs'), b.launcher, ...args], {
        env: cliEnv(b, d, { UPLINK_MODULE_LOG: log }),
        cwd: ROOT,
        stdio: 'ignore',
      });
      expect(await new Promise((resolve) => child.once('close', resolve))).toBe(0);
      return readFileSync(log, 'utf8').trim().split('\n');
    };
    const heavy = /better-sqlite3|\/ajv\/|@modelcontextprotocol|\/embedded-|\/stdio-|\/serve-/;
    const forwarded = await loaded(['channels']);
    expect(forwarded.some((u) => u.endsWith('/cli.mjs'))).toBe(true);
    expect(forwarded.filter((u) => heavy.test(u))).toEqual([]);
    // The same probe sees them when the command does load the hub (no hub: embedded).
    await Promise.all(running.splice(0).map((s) => s.stop()));
    const embedded = await loaded(['channels']);
    expect(embedded.some((u) => /better-sqlite3/.test(u))).toBe(true);
    expect(embedded.some((u) => /\/embedded-/.test(u))).toBe(true);
  });
});

describe('POST /cli', () => {
  it('takes the operator key only: not the MCP token, an agent token, no key, a web page, or a foreign Host', async () => {
    const d = tmpDataDir();
    const hub = await serve(d);
    const key = readFileSync(join(d, 'operator.key'), 'utf8').trim();
    const token = readFileSync(join(d, 'token'), 'utf8').trim();
    const agent = JSON.parse((await runCli(b, d, ['agents', 'create', 'bot', '--json'])).stdout) as { token: string };
    const host = new URL(hub.url).host;
    const body = JSON.stringify({ command: 'tier', args: { channel: 'test:alpha', tier: 'godmode' }, user: 'mallory' });
    const refusals: Array<[Record<string, string>, number, string]> = [
      [{ authorization: `Bearer ${token}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${token}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Bearer ${agent.token}` }, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${agent.token}` }, 401, 'missing or wrong operator key'],
      [{}, 401, 'missing or wrong operator key'],
      [{ authorization: `Operator ${key}`, origin: 'http://evil.example' }, 403, 'origin http://evil.example is not allowed'],
      [{ authorization: `Operator ${key}`, origin: hub.url }, 403, 'CLI calls are not taken from web pages'],
      [{ authorization: `Operator ${key}`, host: 'evil.example' }, 403, 'host evil.example is not this hub'],
    ];
    for (const [headers, status, message] of refusals) {
      const r = await post(hub.url, '/cli', { host, ...headers }, body);
      expect(r.status, JSON.stringify(headers)).toBe(status);
      expect(r.body).toContain(message);
    }
    // None of them ran: the tier is untouched, and no decision by "mallory" exists.
    const log = await runCli(b, d, ['log', '--json', '--op', 'set-tier']);
    expect(log.stdout).toBe('');
    // The key itself opens it (so the refusals above are about the credential).
    const ok = await post(hub.url, '/cli', { host, authorization: `Operator ${key}` }, body);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('{"result":null}\n');
    expect((await runCli(b, d, ['log', '--json', '--op', 'set-tier'])).stdout).toContain('"by":"mallory"');
  });

  it('refuses a malformed body in one line, naming the problem', async () => {
    const d = tmpDataDir();
    const hub = await serve(d);
    const key = readFileSync(join(d, 'operator.key'), 'utf8').trim();
    const auth = { authorization: `Operator ${key}` };
    const cases: Array<[string, number, string]> = [
      ['{', 400, 'request body is not valid JSON'],
      ['[]', 400, 'the body must be a JSON object'],
      [JSON.stringify({ command: 'rm', args: {}, user: 'u' }), 400, 'command must be one of'],
      [JSON.stringify({ command: 'ops', args: {}, user: 'u' }), 400, 'ops needs args.channel'],
      [JSON.stringify({ command: 'ops', args: { channel: 1 }, user: 'u' }), 400, 'args.channel must be a string'],
      [JSON.stringify({ command: 'ops', args: { channel: 'test:alpha', extra: 1 }, user: 'u' }), 400, 'ops takes no argument \\"extra\\"'],
      [JSON.stringify({ command: 'log', args: { follow: false, limit: 0 }, user: 'u' }), 400, 'args.limit must be an integer from 1 to 1000000'],
      [JSON.stringify({ command: 'channels', args: {}, user: 'u'.repeat(300) }), 400, 'user must be a string of 1 to 256 characters'],
      [
        JSON.stringify({ command: 'send', args: { channel: 'test:alpha', message: 'x'.repeat(2 * 1024 * 1024), reply_hint: 'full' }, user: 'u' }),
        413,
        'request body over 1048576 bytes',
      ],
    ];
    for (const [body, status, message] of cases) {
      const r = await post(hub.url, '/cli', auth, body);
      expect(r.status, body.slice(0, 60)).toBe(status);
      expect(r.body.trim().split('\n')).toHaveLength(1);
      expect(r.body).toContain(message);
      expect(JSON.parse(r.body)).toMatchObject({ error: { driver: 'core', kind: 'Invalid' } });
    }
  });
});
