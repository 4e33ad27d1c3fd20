/**
 * The CLI forwarded to a running `uplink serve` on a private tmux server: the same channel listing
 * as an embedded hub, the read-first guard and tiers as one hub sees them, and the audit names the
 * CLI user.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { cliEnv, runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
import { runInPane } from '../../fixtures/in-pane';
import type { Served } from '../../fixtures/hub-build';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';
import { buildTmuxHub, writeConfig } from '../tmux/hub-helpers';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('tmux through a running hub', () => {
  it('channels, read, keys, tier and send: as embedded, recorded as the CLI user', async () => {
    const b = await buildTmuxHub();
    const server = TmuxTestServer.start('sh');
    cleanup.push(() => server.stop());
    const peer = server.split('cat');
    server.setOption(peer, '@name', 'peer');
    const dataDir = tmpDataDir('uplink-tmux-forward-');
    writeConfig(dataDir, {});
    const extra = { UPLINK_TEST_TMUX_SOCKET: server.socket, UPLINK_TEST_TMUX_PANE: server.firstPane };
    const uplink = (...args: string[]): ReturnType<typeof runCli> => runCli(b, dataDir, args, extra);

    const embedded = await uplink('channels');
    const hub: Served = await startServe(b, dataDir, extra);
    cleanup.push(() => hub.stop());
    expect(await uplink('channels')).toEqual(embedded);
    expect(embedded.stdout).toMatch(new RegExp(`^tmux:${peer}\\s+\\[peer\\]`, 'm'));

    server.typeLine(peer, 'forward-marker');
    await eventually(async () => (await uplink('invoke', 'tmux:peer', 'read', '{"lines": 10}')).stdout.includes('forward-marker'));
    expect((await uplink('invoke', 'tmux:peer', 'keys', '{"keys": ["Enter"]}')).stderr).toMatch(/needs tier operator/);
    expect((await uplink('tier', 'tmux:peer', 'operator')).stdout).toBe('tmux:peer tier set to operator\n');
    const keys = await uplink('invoke', 'tmux:peer', 'keys', '{"keys": ["Enter"]}');
    expect(keys.code).toBe(0);
    expect(JSON.parse(keys.stdout)).toEqual({ sent: 1 });
    const sent = await uplink('send', 'tmux:peer', 'hello through the hub', '--reply-hint', 'none');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^delivered \(correlation [0-9a-f]{8}/);

    const log = await uplink('log', '--json', '--limit', '200');
    const decisions = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.type === 'decision');
    expect(decisions.map((e) => e.op)).toEqual(['keys', 'set-tier', 'keys', 'send']);
    for (const e of decisions) expect(e).toMatchObject({ authorized: 'cli', by: userInfo().username });
  });

  it('a forwarded command run inside a pane is known by that pane; one that only claims it is not', async () => {
    const b = await buildTmuxHub();
    const server = TmuxTestServer.start('sh');
    cleanup.push(() => server.stop());
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    const dataDir = tmpDataDir('uplink-tmux-forward-pane-');
    writeConfig(dataDir, {});
    // The hub runs outside tmux: its own environment names no pane.
    const hub: Served = await startServe(b, dataDir, { UPLINK_TEST_TMUX_SOCKET: server.socket });
    cleanup.push(() => hub.stop());
    const env = cliEnv(b, dataDir) as Record<string, string>;
    const inPane = await runInPane(server, [process.execPath, b.launcher, 'send', `tmux:${peer}`, 'from a pane', '--reply-hint', 'short', '--json'], {
      UPLINK_DATA_DIR: env.UPLINK_DATA_DIR!,
    });
    expect(inPane.code, inPane.stderr).toBe(0);
    const id = (JSON.parse(inPane.stdout) as { correlation_id: string }).correlation_id;
    await eventually(() => /\[uplink from:uplink-cli pane:%\d+ id:/.test(server.capture(peer)), 10_000, 'the envelope of the CLI in its pane');
    const line = server
      .capture(peer)
      .split('\n')
      .find((l) => l.includes(`id:${id}]`))!;
    const cliPane = /pane:(%\d+)/.exec(line)![1]!;
    expect([server.firstPane, peer]).not.toContain(cliPane);
    // The same command from outside, its environment naming the first pane: a claim, no pane.
    const claimed = spawnSync(process.execPath, [b.launcher, 'send', `tmux:${peer}`, 'claimed', '--reply-hint', 'short', '--json'], {
      env: { ...env, ...server.ownEnv(), UPLINK_DATA_DIR: dataDir },
      encoding: 'utf8',
    });
    expect(claimed.status, claimed.stderr).toBe(0);
    const claimedId = (JSON.parse(claimed.stdout) as { correlation_id: string }).correlation_id;
    await eventually(() => server.capture(peer).includes(`[uplink from:uplink-cli pane:none id:${claimedId}] claimed`), 10_000, 'pane:none');
  });
});
