/**
 * The `uplink` CLI as a user runs it: human output, `--json` payloads, rendered errors on stderr
 * with non-zero exit codes, and `log --follow`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildForTests, cliEnv, ROOT, runCli, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
let dir: string;

beforeAll(async () => {
  b = await buildForTests();
  dir = tmpDataDir();
});

describe('uplink CLI', () => {
  it('doctor exits 0 when every driver is healthy, 1 otherwise', async () => {
    const ok = await runCli(b, dir, ['doctor']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('ok   test');
    expect(ok.stdout).toContain('healthy');
    const bad = await runCli(b, dir, ['doctor', '--json'], { UPLINK_TEST_UNHEALTHY: '1' });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, drivers: [{ driver: 'test', ok: false }] });
  });

  it('doctor reports a corrupt config file with its location and exits 1', async () => {
    const d = tmpDataDir();
    writeFileSync(join(d, 'config.json'), '{ "approvals": { "rules": [ }');
    const r = await runCli(b, d, ['doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL config .*config\.json\n\s+.*invalid JSON at line 1, column \d+/);
    expect(r.stdout).toContain('(the defaults are in use: no good config was loaded before)');
    // The hub still serves with the last good (default) config.
    expect((await runCli(b, d, ['invoke', 'test:alpha', 'noop'])).code).toBe(0);
  });

  it('a config broken between runs: doctor exits 1 and says the last good one stays in use', async () => {
    const d = tmpDataDir();
    writeFileSync(join(d, 'config.json'), JSON.stringify({ approvals: { timeout_ms: 4321 } }));
    expect((await runCli(b, d, ['doctor'])).code).toBe(0);
    writeFileSync(join(d, 'config.json'), '{ "approvals": { "timeout_ms": 4321, }');
    const r = await runCli(b, d, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { ok: boolean; config: { ok: boolean; error: string } };
    expect(report).toMatchObject({ ok: false, config: { ok: false } });
    expect(report.config.error).toMatch(/invalid JSON at line 1, column \d+ .*\(the last good config \(saved in .*config\.last-good\.json\) stays in use\)$/);
    const human = await runCli(b, d, ['doctor']);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('stays in use');
    expect(human.stdout).toContain('NOT healthy');
  });

  it('channels prints every channel; --json prints the ChannelEntry objects', async () => {
    const human = await runCli(b, dir, ['channels']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^test:alpha\s+\[a\]\s+\{"n":1\}$/m);
    const json = await runCli(b, dir, ['channels', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      { channel: 'test:alpha', labels: ['a'], detail: { n: 1 } },
      { channel: 'test:beta', labels: [], detail: { n: 2 } },
    ]);
  });

  it("ops lists a channel's ops with class and tool", async () => {
    const r = await runCli(b, dir, ['ops', 'test:alpha']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^write\s+mutating\s+channel_act\s+Writes text/m);
    expect(r.stdout).toMatch(/^noop\s+read-only\s+channel_observe/m);
    const missing = await runCli(b, dir, ['ops', 'test:nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('uplink error [test:NotFound]: no channel test:nope — hint: list channels with the channel_list tool or `uplink channels`\n');
    const log = await runCli(b, dir, ['log', '--json', '--state', 'rejected', '--channel', 'test:nope']);
    expect(log.stdout).toContain('"error_kind":"NotFound"');
  });

  it('send --json prints the SendReceipt; it is authorized as cli with the OS user', async () => {
    const r = await runCli(b, dir, ['send', 'test:alpha', 'hello there', '--reply-hint', 'short', '--json']);
    expect(r.code).toBe(0);
    // Exactly the SendReceipt of the contract: {delivered, correlation_id, verify_excerpt?, injected_at}.
    const receipt = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(receipt).sort()).toEqual(['correlation_id', 'delivered', 'injected_at']);
    expect(receipt).toMatchObject({ delivered: true, correlation_id: 'c1', injected_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const log = await runCli(b, dir, ['log', '--json', '--op', 'send']);
    const decision = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.type === 'decision');
    expect(decision).toMatchObject({ authorized: 'cli', by: userInfo().username, granted: true });
    const human = await runCli(b, dir, ['log', '--op', 'send']);
    expect(human.stdout).toContain(`decision  test:alpha  send  agent=cli:uplink-cli(${userInfo().username})`);
    expect(human.stdout).toMatch(new RegExp(`run from the CLI by ${userInfo().username}`));
  });

  it('invoke with args nested 6,000 deep: one line, exit 1, and the next call works', async () => {
    const deep = `{"text":"x","deep":${'{"a":'.repeat(6000)}{}${'}'.repeat(6000)}}`;
    const r = await runCli(b, dir, ['invoke', 'test:alpha', 'echo', deep]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'uplink error [core:Invalid]: args nest deeper than 64 levels — hint: flatten the args (at most 64 levels of objects and arrays)',
    );
    expect((await runCli(b, dir, ['invoke', 'test:alpha', 'echo', '{"text":"after"}'])).code).toBe(0);
  });

  it('invoke prints the op result (class-agnostic) and honours --interaction/--provider', async () => {
    const r = await runCli(b, dir, ['invoke', 'test:alpha', 'write', '{"text":"abcd"}', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ written: 4 });
    expect(JSON.parse((await runCli(b, dir, ['invoke', 'test:alpha', 'pick', '--interaction', 'visual_ui'])).stdout)).toEqual({ interaction: 'visual_ui' });
    expect(JSON.parse((await runCli(b, dir, ['invoke', 'test:alpha', 'pick', '--provider', 'uplink/test-semantic'])).stdout)).toEqual({
      interaction: 'semantic_ui',
    });
  });

  it('errors go to stderr as the rendered line with a non-zero exit code', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['invoke', 'test:alpha', 'echo', '{"text":'], 1, /^uplink error \[test:Invalid\]: json-args is not valid JSON .* — hint: quote it for the shell/],
      [['invoke', 'test:alpha', 'echo', '{"text":1}'], 1, /^uplink error \[test:Invalid\]: args for echo do not match its params_schema/],
      [['invoke', 'test:alpha', 'fail'], 1, /^uplink error \[test:Rejected\]: the fixture refuses — hint: do something else$/],
      [['invoke', 'ghost:1', 'noop'], 1, /^uplink error \[ghost:NotFound\]: no driver named ghost/],
      [['invoke', 'test:alpha', 'pick', '--interaction', 'typed'], 1, /^uplink error \[test:Invalid\]: pick is not offered under interaction typed/],
      [['send', 'test:alpha', 'x', '--reply-hint', 'loud'], 2, /^uplink error \[core:Invalid\]: --reply-hint must be full, short or none/],
      [['send', 'test:alpha', 'x'.repeat(70 * 1024)], 1, /^uplink error \[test:Invalid\]: the send payload is \d+ bytes; the limit is 65536 bytes/],
      [['frobnicate'], 2, /^uplink error \[core:Invalid\]: unknown command "frobnicate" — hint: see `uplink --help`$/],
      [['channels', '--bogus'], 2, /^uplink error \[core:Invalid\]: unknown option --bogus/],
      [['ops'], 2, /^uplink error \[core:Invalid\]: ops needs <channel>/],
    ];
    for (const [args, code, re] of cases) {
      const r = await runCli(b, dir, args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.stderr.trim(), args.join(' ')).toMatch(re);
      expect(r.stdout).toBe('');
    }
    // The rejected requests are in the audit too.
    const log = await runCli(b, dir, ['log', '--json', '--state', 'rejected', '--limit', '100']);
    expect(log.stdout).toContain('json-args is not valid JSON');
  });

  it('log prints the timeline; --follow streams new entries', async () => {
    const d = tmpDataDir();
    expect((await runCli(b, d, ['invoke', 'test:alpha', 'noop'])).code).toBe(0);
    const plain = await runCli(b, d, ['log']);
    expect(plain.stdout).toMatch(/#\d+\s+succeeded\s+test:alpha\s+noop\s+agent=cli:uplink-cli/);
    const follow = spawn(process.execPath, [b.launcher, 'log', '--follow', '--json'], { env: cliEnv(b, d), cwd: ROOT });
    let out = '';
    follow.stdout.on('data', (x: Buffer) => (out += x.toString()));
    try {
      await waitFor(() => out.includes('"op":"noop"') || undefined, 20_000, 'initial log');
      expect((await runCli(b, d, ['invoke', 'test:beta', 'echo', '{"text":"later"}'])).code).toBe(0);
      await waitFor(() => out.includes('"channel":"test:beta"') || undefined, 20_000, 'followed entry');
    } finally {
      follow.kill('SIGINT');
    }
    const code = await new Promise<number | null>((resolve) => follow.once('close', resolve));
    expect(code).toBe(0);
  });

  it('tier sets a channel tier as a human (audited as cli); an unknown channel fails', async () => {
    const d = tmpDataDir();
    const r = await runCli(b, d, ['tier', 'test:alpha', 'operator']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('test:alpha tier set to operator\n');
    const log = await runCli(b, d, ['log', '--json', '--op', 'set-tier']);
    expect(JSON.parse(log.stdout.trim())).toMatchObject({ authorized: 'cli', reason: 'tier set to operator', channel: 'test:alpha' });
    const bad = await runCli(b, d, ['tier', 'test:nope', 'operator']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^uplink error \[test:NotFound\]/);
  });

  it('serve on a busy port fails with a clear error and exits', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const r = await runCli(b, tmpDataDir(), ['serve', '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `uplink error [core:Unavailable]: cannot listen on 127.0.0.1:${port} (EADDRINUSE) — hint: another hub or program uses it; pass --port N, or --port 0 for any free port\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it('--help prints usage', async () => {
    const r = await runCli(b, dir, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('uplink invoke <channel> <op> [json-args]');
  });

  it('bin/uplink runs the built bundle (or says how to build it)', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/uplink'), '--help'], { encoding: 'utf8', env: cliEnv(b, dir) });
    if (existsSync(join(ROOT, 'dist/cli.mjs'))) {
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('Usage:');
    } else {
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('run `npm run build`');
    }
  });
});
