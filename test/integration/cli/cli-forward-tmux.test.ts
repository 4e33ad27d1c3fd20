/**
 * The CLI forwarded to a running `uplink serve` on a private tmux server: the same channel listing
 * as an embedded hub, the read-first guard and tiers as one hub sees them, and the audit names the
 * CLI user.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { userInfo } from 'node:os';
import { runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
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
});
