import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tmuxSnippet } from '../../../src/main/drivers/tmux';
import { tmuxDriverForTest, VIA_PROTOCOL, describeInProcess } from '../../fixtures/tmux-driver';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';
import { failure, rig, useRigs } from './helpers';
import { validated } from '../../fixtures/validated-driver';

useRigs();

const SPINNER = `sh -c 'while :; do printf "\\r%s" "-"; sleep 0.1; printf "\\r%s" "\\\\"; sleep 0.1; printf "\\r%s" "|"; sleep 0.1; printf "\\r%s" "/"; sleep 0.1; done'`;

describe('tmux driver: await-idle', () => {
  it('reports idle for a quiet pane', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    expect(await driver.invoke(peer, 'await-idle', { quiet_ms: 600, timeout_ms: 15_000 })).toEqual({ idle: true });
  });

  it('reports not idle while a pane redraws in place (a spinner), in our session or another', async () => {
    const { server, driver } = rig();
    const here = server.split(SPINNER);
    const elsewhere = server.session('other', SPINNER);
    for (const pane of [here, elsewhere]) {
      expect(await driver.invoke(pane, 'await-idle', { quiet_ms: 1500, timeout_ms: 4000 })).toEqual({ idle: false });
    }
  });

  it('can be cancelled through the signal', async () => {
    const { server, driver } = rig();
    const peer = server.split(SPINNER);
    const controller = new AbortController();
    const pending = driver.invoke(peer, 'await-idle', { quiet_ms: 800, timeout_ms: 30_000 }, undefined, controller.signal);
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    await failure(pending);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

// One-shot mode is an in-process option (`controlMode`); `driver run` always uses control mode.
describeInProcess('tmux driver without control mode (one-shot commands and polling)', () => {
  it('reads, sends with verification, and tells quiet from a spinner by screen hashing', async () => {
    const { server, driver } = rig({ controlMode: false });
    const peer = server.split('cat');
    const spinner = server.split(SPINNER);
    server.setOption(peer, '@uplink_profile', 'operator');
    const receipt = await driver.send(peer, { message: 'one-shot hello', reply_hint: 'none' });
    expect(receipt.delivered).toBe(true);
    expect(((await driver.invoke(peer, 'read', {})) as { text: string }).text).toContain('one-shot hello');
    expect(await driver.invoke(peer, 'await-idle', { quiet_ms: 600, timeout_ms: 15_000 })).toEqual({ idle: true });
    expect(await driver.invoke(spinner, 'await-idle', { quiet_ms: 1500, timeout_ms: 4000 })).toEqual({ idle: false });
    expect((await driver.doctor()).lines.join('\n')).toMatch(/control mode: unavailable \(disabled\)/);
  });
});

describe('tmux driver: doctor, preview, snippet', () => {
  it('doctor reports version, server, control mode, own pane and config problems', async () => {
    const { driver, config, own } = rig();
    const report = await driver.doctor();
    expect(report.ok).toBe(true);
    expect(report.lines.join('\n')).toMatch(/^tmux: tmux \d/m);
    expect(report.lines.join('\n')).toMatch(/server: reachable at .*sock \(1 session, 1 pane\)/);
    expect(report.lines.join('\n')).toMatch(/control mode: attached/);
    expect(report.lines.join('\n')).toContain(`own pane: ${own}`);
    (config as Record<string, unknown>).write_allow = [{ pattern: 'x', tier: 'root' }];
    const bad = await driver.doctor();
    expect(bad.ok).toBe(false);
    // Out of process the config file is checked against the section's schema first, which names the path.
    expect(bad.lines.join('\n')).toMatch(
      VIA_PROTOCOL
        ? /config file: .*: \/tmux\/write_allow\/0\/tier must be one of "operator", "godmode" \(enum\) \(the last good config .*stays in use\)/
        : /write_allow\[0\]\.tier/,
    );
  });

  it('finds the server from the config socket without $TMUX, and follows a config edit to another server', async () => {
    const first = TmuxTestServer.start('cat');
    const second = TmuxTestServer.start('cat');
    second.split('cat');
    let socket = first.socket;
    const driver = validated(tmuxDriverForTest({ env: TmuxTestServer.cleanEnv(), config: () => ({ socket }) }));
    try {
      expect((await driver.channels()).map((c) => c.channel)).toEqual([`tmux:${first.firstPane}`]);
      const report = await driver.doctor();
      expect(report.lines.join('\n')).toContain(`server: reachable at ${first.socket} (1 session, 1 pane)`);
      expect(report.lines.join('\n')).toMatch(/own pane: unknown/);
      socket = second.socket;
      expect(await driver.channels()).toHaveLength(2);
      expect((await driver.doctor()).lines.join('\n')).toContain(`server: reachable at ${second.socket} (1 session, 2 panes)`);
    } finally {
      await driver.dispose?.();
      first.stop();
      second.stop();
    }
  });

  it('reconnects on demand when the server restarts, and forgets the old panes', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    await driver.invoke(peer, 'read', {});
    server.tmux('kill-server');
    expect((await failure(driver.channels())).kind).toBe('Unavailable');
    expect((await driver.doctor()).ok).toBe(false);
    server.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'again', '-x', '120', '-y', '30', 'cat');
    server.tmux('split-window', '-d', '-t', 'again', 'cat');
    const channels = await eventually(async () => (await driver.channels()).length === 2 && driver.channels());
    expect(channels.map((c) => (c.detail as { target: string }).target).sort()).toEqual(['again:0.0', 'again:0.1']);
    await eventually(async () => (await driver.doctor()).lines.some((l) => l.startsWith('control mode: attached')), 15_000, 'control mode again');
    // The new server reuses pane ids: the old read does not unlock keys on the new pane.
    const reused = channels.find((c) => c.channel === `tmux:${peer}`);
    if (reused) {
      server.setOption(peer, '@uplink_profile', 'operator');
      expect((await failure(driver.invoke(peer, 'keys', { keys: ['Enter'] }))).hint).toMatch(/read first/);
    }
  });

  it('doctor explains an unreachable server and a missing tmux in one line with a hint', async () => {
    const gone = validated(tmuxDriverForTest({ socket: '/tmp/uplink-doctor-missing/sock', env: TmuxTestServer.cleanEnv() }));
    const report = await gone.doctor();
    expect(report.ok).toBe(false);
    const line = report.lines.find((l) => l.startsWith('server:'))!;
    expect(line).toMatch(/^server: not reachable at \/tmp\/uplink-doctor-missing\/sock .* — hint: start tmux/);
    expect(report.lines.join('\n')).toMatch(/own pane: unknown/);
    await gone.dispose?.();
    // Out of process the binary cannot be named; a PATH without tmux is the same absence.
    const missing = validated(
      VIA_PROTOCOL
        ? tmuxDriverForTest({ env: TmuxTestServer.cleanEnv({ PATH: '/nonexistent' }) })
        : tmuxDriverForTest({ tmux: '/nonexistent/tmux', env: TmuxTestServer.cleanEnv() }),
    );
    const none = await missing.doctor();
    // The host adds one line of its own about the process.
    const host = VIA_PROTOCOL ? [expect.stringMatching(/^external driver: pid \d+, protocol 3, 0 restart\(s\)$/)] : [];
    expect(none).toMatchObject({
      ok: false,
      lines: ['tmux: not installed (not found on PATH) — hint: install tmux (e.g. `apt-get install tmux` or `brew install tmux`)', ...host],
    });
  });

  it('preview says the action in words and hides sensitive text', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@name', 'codex');
    expect((await driver.preview!('codex', 'send', { message: 'hello there', reply_hint: 'full' }))!.text).toMatch(
      new RegExp(`^send "hello there" to ${peer} \\(codex\\)`),
    );
    const hidden = (await driver.preview!(peer, 'type', { text: 'hunter2', sensitive: true, enter: true }))!.text!;
    expect(hidden).toContain('7 characters (sensitive, hidden)');
    expect(hidden).not.toContain('hunter2');
    expect((await driver.preview!(peer, 'keys', { keys: ['C-c'] }))!.text).toContain('needs godmode');
    // A long text is cut in the middle: its dangerous end stays in the summary, with its length.
    const long = (await driver.preview!(peer, 'type', { text: `echo ${'x'.repeat(400)} ; rm -rf app/important`, enter: true }))!.text!;
    expect(long).toMatch(/^type "echo x+…\[\d+ chars cut\]…x+ ; rm -rf app\/important" \(428 chars\) into /);
  });

  it("preview carries the pane's last lines, and none of a read-blocked pane's", async () => {
    const { server, driver, config } = rig();
    const peer = server.split(`sh -c 'seq -f "row %g" 1 30; printf "wide %0300d\\n" 0; exec cat'`);
    await eventually(() => server.capture(peer).includes('wide 000'), 10_000, 'the rows on screen');
    const shown = (await driver.preview!(peer, 'type', { text: 'ls', enter: true }))!;
    expect(shown.lines).toHaveLength(12);
    expect(shown.lines!.slice(-2, -1)[0]).toBe('row 30');
    const wide = shown.lines![11]!;
    expect(wide.startsWith('wide 000')).toBe(true);
    expect([...wide].length).toBeLessThanOrEqual(240);
    expect(wide.endsWith('…')).toBe(true);
    expect(shown.lines_hidden).toBeUndefined();

    config.read_deny = [peer];
    const denied = (await driver.preview!(peer, 'type', { text: 'ls', enter: true }))!;
    expect(denied.lines).toBeUndefined();
    expect(denied.lines_hidden).toBe(`pane content hidden: config tmux.read_deny "${peer}" matches it`);
    expect(JSON.stringify(denied)).not.toContain('row 30');

    config.read_deny = [];
    server.setOption(peer, '@uplink_read', 'off');
    const off = (await driver.preview!(peer, 'keys', { keys: ['Enter'] }))!;
    expect(off.lines).toBeUndefined();
    expect(off.lines_hidden).toContain('@uplink_read is off');
    expect(JSON.stringify(off)).not.toContain('row 30');
  });

  it('the tmux snippet shows tiers in pane borders and binds a grant menu', () => {
    const snippet = tmuxSnippet();
    expect(snippet).toContain('pane-border-format');
    expect(snippet).toContain('#{@uplink_profile}');
    expect(snippet).toMatch(/bind-key g display-menu/);
    expect(snippet).toContain('set-option -p @uplink_profile operator');
  });

  it('the tmux snippet is valid tmux config', () => {
    const server = TmuxTestServer.start('cat');
    try {
      const file = `${server.dir}/uplink.tmux`;
      writeFileSync(file, tmuxSnippet());
      server.tmux('source-file', file);
      expect(server.tmux('show-options', '-g', '-v', 'pane-border-format')).toContain('@uplink_profile');
      expect(server.tmux('list-keys', '-T', 'prefix', 'g')).toContain('display-menu');
      // The border as tmux renders it: the tier (or [config]), the read block, id, label, command.
      const pane = server.firstPane;
      const border = (): string =>
        server
          .tmux('display-message', '-p', '-t', pane, server.tmux('show-options', '-g', '-v', 'pane-border-format').replace(/\n$/, ''))
          .replace(/\n$/, '')
          .replace(/#\[[^\]]*\]/g, '');
      expect(border()).toBe(` [config] ${pane}: cat `);
      server.setOption(pane, '@uplink_profile', 'operator');
      server.setOption(pane, '@uplink_read', 'off');
      server.setOption(pane, '@name', 'codex');
      expect(border()).toBe(` [operator] [no-read] ${pane} codex: cat `);
      // The menu's grant command is what the driver reads as a human grant.
      server.tmux('set-option', '-p', '-t', pane, '@uplink_profile', 'godmode');
      expect(server.tmux('show-options', '-p', '-v', '-t', pane, '@uplink_profile').trim()).toBe('godmode');
    } finally {
      server.stop();
    }
  });
});
