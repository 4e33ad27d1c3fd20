/**
 * The tmux flows through the `uplink` CLI (a human at a terminal: calls run through the kernel
 * and audit, and still meet the driver's own guards). Each command is a fresh process and driver.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tmpDataDir, type TestBuild } from '../../fixtures/hub-build';
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
    expect((await uplink('invoke', `tmux:${peer}`, 'type', '{"text": "secret", "sensitive": true}')).code).toBe(0);
    const log = await uplink('log', '--json', '--limit', '200');
    expect(log.stdout).not.toContain('"secret"');
  });

  it('ask returns the transcript delta', async () => {
    const { server, uplink } = setup();
    const peer = server.split(`sh -c 'while IFS= read -r line; do echo cli-answer; done'`);
    server.setOption(peer, '@uplink_profile', 'operator');
    const out = await uplink('invoke', `tmux:${peer}`, 'ask', '{"message": "status?", "quiet_ms": 1500, "timeout_ms": 30000}');
    expect(out.code).toBe(0);
    expect((JSON.parse(out.stdout) as { transcript: string }).transcript).toContain('cli-answer');
  });

  it('doctor explains an unreachable server in one line with a hint', async () => {
    const dataDir = tmpDataDir('uplink-tmux-cli-');
    writeConfig(dataDir, {});
    const out = await runCli(b, dataDir, ['doctor'], { UPLINK_TEST_TMUX_SOCKET: `${dataDir}/no-server.sock` });
    expect(out.code).toBe(1);
    expect(`${out.stdout}${out.stderr}`).toMatch(/server: not reachable at \S+no-server\.sock .* — hint: start tmux/);
  });
});
