/**
 * The tmux flows through the `uplink` CLI (a human at a terminal: calls run through the kernel
 * and audit, and still meet the driver's own guards). Each command is a fresh process and driver.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditFiles, runCli, tmpDataDir, type TestBuild } from '../../fixtures/hub-build';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';
import { buildTmuxHub, writeConfig } from './hub-helpers';

let b: TestBuild;
const servers: TmuxTestServer[] = [];

beforeEach(async () => {
  b = await buildTmuxHub();
}, 120_000);

afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

function setup(): { server: TmuxTestServer; dataDir: string; uplink(...args: string[]): ReturnType<typeof runCli> } {
  const server = TmuxTestServer.start('sh');
  servers.push(server);
  const dataDir = tmpDataDir('uplink-tmux-cli-');
  writeConfig(dataDir, {});
  const extra = { UPLINK_TEST_TMUX_SOCKET: server.socket, UPLINK_TEST_TMUX_PANE: server.firstPane };
  return { server, dataDir, uplink: (...args: string[]) => runCli(b, dataDir, args, extra) };
}

describe('tmux through the CLI', () => {
  it('recv lists a reply typed into our own pane, as text and as the RecvBatch with --json', async () => {
    const { server, uplink } = setup();
    server.typeLine(server.firstPane, "echo '[reply id:c0ffee12] done from the peer'");
    const batch = await eventually(async () => {
      const r = await uplink('recv', '--json');
      const parsed = JSON.parse(r.stdout) as { items: Array<{ id?: string; raw: string; cursor: number }>; next_cursor: number };
      return parsed.items.some((i) => i.id === 'c0ffee12') && parsed;
    });
    const item = batch.items.find((i) => i.id === 'c0ffee12')!;
    expect(item.raw).toContain('[reply id:c0ffee12] done from the peer');
    expect(batch.next_cursor).toBe(item.cursor + 1);
    const human = await uplink('recv');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/id=c0ffee12\n {4}.*\[reply id:c0ffee12\] done from the peer/);
    const after = JSON.parse((await uplink('recv', '--json', '--cursor', String(batch.next_cursor))).stdout) as { items: unknown[] };
    expect(after.items).toEqual([]);
    expect((await uplink('recv', '--cursor', 'x')).code).toBe(2);
  });

  it('tmux-snippet prints a config fragment to paste and touches no tmux server', async () => {
    const { uplink } = setup();
    const out = await uplink('tmux-snippet');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('pane-border-format');
    expect(out.stdout).toContain('@uplink_profile');
    expect((await uplink('tmux-snippet', 'extra')).code).toBe(2);
  });

  it('channels, read by label, and send with verification', async () => {
    const { server, uplink } = setup();
    const peer = server.split('cat');
    server.setOption(peer, '@name', 'peer');
    const channels = await uplink('channels', '--json');
    expect(channels.code).toBe(0);
    expect(JSON.parse(channels.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ channel: `tmux:${peer}`, labels: ['peer'] })]));
    server.typeLine(peer, 'cli-read-marker');
    await eventually(async () => (await uplink('invoke', 'tmux:peer', 'read', '{"lines": 10}')).stdout.includes('cli-read-marker'));

    const denied = await uplink('send', 'tmux:peer', 'hello from the cli');
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/uplink error \[tmux:Rejected\]: send needs tier operator/);
    expect((await uplink('tier', 'tmux:peer', 'operator')).code).toBe(0);
    expect(server.tmux('show-options', '-p', '-v', '-t', peer, '@uplink_profile').trim()).toBe('operator');
    const sent = await uplink('send', 'tmux:peer', 'hello from the cli', '--reply-hint', 'none');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^delivered \(correlation [0-9a-f]{8}/);
    expect(sent.stdout).toContain('hello from the cli');
    expect((await uplink('send', `tmux:${server.firstPane}`, 'loop')).stderr).toMatch(/\[tmux:Rejected\]: send to our own pane/);
    expect((await uplink('send', 'tmux:peer', 'two\nlines')).stderr).toMatch(/\[tmux:Invalid\]/);
  });

  it('keys need a read first, which holds across CLI commands; chords need godmode', async () => {
    const { server, uplink } = setup();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    const early = await uplink('invoke', `tmux:${peer}`, 'keys', '{"keys": ["Enter"]}');
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/\[tmux:Rejected\].* — hint: read first/);
    expect((await uplink('invoke', `tmux:${peer}`, 'read')).code).toBe(0);
    const keys = await uplink('invoke', `tmux:${peer}`, 'keys', '{"keys": ["Enter"]}');
    expect(keys.code).toBe(0);
    expect(JSON.parse(keys.stdout)).toEqual({ sent: 1 });
    expect((await uplink('invoke', `tmux:${peer}`, 'keys', '{"keys": ["C-c"]}')).stderr).toMatch(/needs tier godmode; pane %\d+ is operator/);
    expect((await uplink('invoke', `tmux:${peer}`, 'keys', '{"keys": ["C-rm -rf /"]}')).stderr).toMatch(
      /^uplink error \[tmux:Invalid\]: unknown key "C-rm -rf \/".* — hint: .*type op/,
    );
    expect((await uplink('invoke', `tmux:${peer}`, 'type', '{"text": "secret", "sensitive": true}')).code).toBe(0);
    const log = await uplink('log', '--json', '--limit', '200');
    expect(log.stdout).not.toContain('"secret"');
  });

  it('type is gated by tier, and sensitive text stays out of the audit store (uplink log and the SQLite files)', async () => {
    const { server, dataDir, uplink } = setup();
    const peer = server.split("sh -c 'cat > /dev/null'");
    expect((await uplink('invoke', `tmux:${peer}`, 'read')).code).toBe(0);
    const token = 'hunter2-tmux-cli-7f3a';
    // Refused at the tier: the error names both tiers and whom to ask; the text is still kept out.
    const denied = await uplink('invoke', `tmux:${peer}`, 'type', JSON.stringify({ text: token, sensitive: true }));
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(
      new RegExp(
        `^uplink error \\[tmux:Rejected\\]: type needs tier operator; pane ${peer} is observer \\(from default\\) — hint: ask the operator to grant operator on this pane in the Uplink panel`,
      ),
    );
    expect(denied.stderr).not.toContain(token);
    expect((await uplink('tier', `tmux:${peer}`, 'operator')).code).toBe(0);
    const typed = await uplink('invoke', `tmux:${peer}`, 'type', JSON.stringify({ text: token, sensitive: true }));
    expect(typed.code).toBe(0);
    expect(JSON.parse(typed.stdout)).toEqual({ typed: token.length, enter: false });
    // It really reached the pane (so what follows is not vacuous)…
    await eventually(() => server.capture(peer).includes(token), 10_000, 'the typed text on screen');
    // …and neither the log nor any byte of the audit database (WAL included) holds it.
    const log = await uplink('log', '--json', '--limit', '500');
    expect(log.code).toBe(0);
    expect(log.stdout).toContain('"type"');
    expect(log.stdout).not.toContain(token);
    const files = auditFiles(dataDir);
    expect(files.map((f) => f.file)).toContain(join(dataDir, 'audit.sqlite'));
    for (const { bytes } of files) expect(bytes.includes(token)).toBe(false);
  });

  it('read-blocked panes reject content ops through the CLI, and a rename cannot lift a config read-deny', async () => {
    const { server, dataDir, uplink } = setup();
    const off = server.split('cat');
    const secret = server.split('cat');
    server.setOption(off, '@uplink_profile', 'godmode');
    server.setOption(off, '@uplink_read', 'off');
    server.setOption(secret, '@name', 'customer-1');
    server.setOption(secret, '@uplink_profile', 'operator');
    writeConfig(dataDir, { tmux: { read_deny: ['customer-*'] } });
    for (const args of [
      ['invoke', `tmux:${off}`, 'read'],
      ['send', `tmux:${off}`, 'hi'],
      ['invoke', `tmux:${off}`, 'type', '{"text": "x"}'],
      ['invoke', `tmux:${off}`, 'keys', '{"keys": ["Enter"]}'],
      ['invoke', `tmux:${off}`, 'ask', '{"message": "hi", "timeout_ms": 2000}'],
      ['invoke', 'tmux:customer-1', 'read'],
    ]) {
      const out = await uplink(...args);
      expect(out.code, args.join(' ')).toBe(1);
      expect(out.stderr).toMatch(
        /^uplink error \[tmux:Rejected\]: \w+ refused: pane %\d+.* is read-blocked \(.*\) — hint: only the operator can lift a read block/,
      );
    }
    const idle = await uplink('invoke', `tmux:${off}`, 'await-idle', '{"quiet_ms": 300, "timeout_ms": 10000}');
    expect(JSON.parse(idle.stdout)).toEqual({ idle: true });
    // Each CLI command is a fresh driver: the human label carried in the pane keeps the deny.
    expect((await uplink('invoke', 'tmux:customer-1', 'label', '{"name": "harmless"}')).stderr).toMatch(/\[tmux:Rejected\].*read-blocked/);
    expect(server.capture(off)).not.toContain('[uplink');
  });

  it('await-idle through the CLI: idle for a quiet pane, not idle during an in-place redraw', async () => {
    const { server, uplink } = setup();
    const quiet = server.split('cat');
    const spinner = server.split(`sh -c 'while :; do printf "\\r%s" "-"; sleep 0.1; printf "\\r%s" "+"; sleep 0.1; done'`);
    expect(JSON.parse((await uplink('invoke', `tmux:${quiet}`, 'await-idle', '{"quiet_ms": 500, "timeout_ms": 10000}')).stdout)).toEqual({ idle: true });
    expect(JSON.parse((await uplink('invoke', `tmux:${spinner}`, 'await-idle', '{"quiet_ms": 1500, "timeout_ms": 4000}')).stdout)).toEqual({ idle: false });
  });

  it('ask returns the transcript delta', async () => {
    const { server, uplink } = setup();
    const peer = server.split(`sh -c 'while IFS= read -r line; do echo cli-answer; done'`);
    server.setOption(peer, '@uplink_profile', 'operator');
    const out = await uplink('invoke', `tmux:${peer}`, 'ask', '{"message": "status?", "quiet_ms": 1500, "timeout_ms": 30000}');
    expect(out.code).toBe(0);
    const result = JSON.parse(out.stdout) as { transcript: string; receipt: { correlation_id: string } };
    expect(result.transcript).toContain('cli-answer');
    // The question carries no reply block: the line ends with the message.
    const shown = server
      .capture(peer)
      .split('\n')
      .find((l) => l.includes(`id:${result.receipt.correlation_id}]`))!;
    expect(shown.trimEnd()).toBe(`[uplink from:uplink-cli pane:${server.firstPane} id:${result.receipt.correlation_id}] status?`);
  });

  it('doctor explains an unreachable server in one line with a hint', async () => {
    const dataDir = tmpDataDir('uplink-tmux-cli-');
    writeConfig(dataDir, {});
    const out = await runCli(b, dataDir, ['doctor'], { UPLINK_TEST_TMUX_SOCKET: `${dataDir}/no-server.sock` });
    expect(out.code).toBe(1);
    expect(`${out.stdout}${out.stderr}`).toMatch(/server: not reachable at \S+no-server\.sock .* — hint: start tmux/);
  });

  it('doctor explains a dead server whose socket is left behind in one line with a hint', async () => {
    const server = TmuxTestServer.start('cat');
    servers.push(server);
    const pid = Number(server.tmux('display-message', '-p', '#{pid}').trim());
    process.kill(pid, 'SIGKILL');
    await eventually(
      () => {
        try {
          server.tmux('list-sessions');
          return false;
        } catch {
          return true;
        }
      },
      10_000,
      'the server to die',
    );
    const dataDir = tmpDataDir('uplink-tmux-cli-');
    writeConfig(dataDir, {});
    const out = await runCli(b, dataDir, ['doctor'], { UPLINK_TEST_TMUX_SOCKET: server.socket });
    expect(out.code).toBe(1);
    const lines = `${out.stdout}${out.stderr}`.split('\n').filter((l) => l.includes('server: not reachable'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /server: not reachable at \S+sock \(.*\) — hint: start tmux \(e\.g\. `tmux new -s work`\), run Uplink inside tmux, or set tmux\.socket in config\.json$/,
    );
  });
});
