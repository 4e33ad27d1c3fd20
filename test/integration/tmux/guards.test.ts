import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ControlClient } from '../../../src/main/drivers/tmux/control-client';
import { tmuxDriverForTest, itInProcess } from '../../fixtures/tmux-driver';
import { eventually } from '../../fixtures/tmux-server';
import { failure, rig, useRigs } from './helpers';
import { validated } from '../../fixtures/validated-driver';

useRigs();

describe('tmux driver: guards and tiers', () => {
  itInProcess('keys require a read of that pane within the last 60 s', async () => {
    let clock = 1_000_000;
    const { server, driver } = rig({ now: () => clock });
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    const first = await failure(driver.invoke(peer, 'keys', { keys: ['Enter'] }));
    expect(first.kind).toBe('Rejected');
    expect(first.hint).toMatch(/read first/);
    await driver.invoke(peer, 'read', { lines: 5 });
    expect(await driver.invoke(peer, 'keys', { keys: ['Enter', 'Up'] })).toEqual({ sent: 2 });
    clock += 61_000;
    expect((await failure(driver.invoke(peer, 'keys', { keys: ['Enter'] }))).kind).toBe('Rejected');
  });

  itInProcess('type requires a read of that pane within the last 60 s, and a read of another pane does not count', async () => {
    let clock = 5_000_000;
    const { server, driver } = rig({ now: () => clock });
    const peer = server.split("sh -c 'cat > /dev/null'");
    const other = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    await driver.invoke(other, 'read', {});
    const first = await failure(driver.invoke(peer, 'type', { text: 'x' }));
    expect(first.kind).toBe('Rejected');
    expect(first.message).toMatch(/type needs a read of %\d+ within the last 60 s/);
    expect(first.hint).toBe(`read first: invoke the read op on tmux:${peer}, then retry`);
    await driver.invoke(peer, 'read', {});
    clock += 59_000;
    expect(await driver.invoke(peer, 'type', { text: 'x' })).toEqual({ typed: 1, enter: false });
    clock += 2_000;
    expect((await failure(driver.invoke(peer, 'type', { text: 'x' }))).hint).toMatch(/read first/);
  });

  it('the read guard holds across driver instances (each CLI command is a fresh driver)', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    await driver.invoke(peer, 'read', {});
    const other = validated(tmuxDriverForTest({ env: server.ownEnv() }));
    try {
      expect(await other.invoke(peer, 'keys', { keys: ['Enter'] })).toEqual({ sent: 1 });
    } finally {
      await other.dispose?.();
    }
  });

  itInProcess('reads of a polled pane rewrite its read mark at most every 5 s; the mark is never later than the last read', async () => {
    let clock = 7_000_000;
    const { server, driver } = rig({ now: () => clock });
    const peer = server.split('cat');
    const mark = (): string => server.tmux('show-options', '-p', '-v', '-t', peer, '@uplink_last_read').trim();
    await driver.invoke(peer, 'read', {});
    expect(mark()).toBe('7000000');
    clock += 4_000;
    await driver.invoke(peer, 'read', {});
    expect(mark()).toBe('7000000');
    clock += 1_000;
    await driver.invoke(peer, 'read', {});
    expect(mark()).toBe('7005000');
  });

  it('a send decided on an earlier lookup types only if tmux finds the pane unchanged; a changed pane is decided afresh', async () => {
    const { server, driver, config } = rig();
    const peer = server.split('cat');
    const marker = `${server.dir}/expanded`;
    // A label that would run a shell command, and end or nest the comparison, were tmux to read it as a format.
    server.setOption(peer, '@name', `#(touch ${marker})#{session_name},#}}#S`);
    server.setOption(peer, '@uplink_profile', 'operator');
    const submitted = async (message: string): Promise<void> => {
      const { correlation_id: id } = await driver.send(peer, { message, reply_hint: 'none' });
      // cat's copy after the echo: Enter was pressed.
      await eventually(() => server.capture(peer).split(`id:${id}] ${message}`).length - 1 === 2, 10_000, `"${message}" submitted`);
    };
    await submitted('one');
    await submitted(`two #{session_name} #(touch ${marker}) ';' "x"`);
    expect(existsSync(marker)).toBe(false);

    const refused = async (change: () => void, message: RegExp): Promise<void> => {
      change();
      const error = await failure(driver.send(peer, { message: 'refused-send', reply_hint: 'none' }));
      expect(error.kind).not.toBe('Timeout');
      expect(error.message).toMatch(message);
    };
    await refused(() => server.setOption(peer, '@uplink_profile', 'observer'), /needs tier operator/);
    server.setOption(peer, '@uplink_profile', 'operator');
    await submitted('three');
    await refused(() => server.setOption(peer, '@uplink_read', 'off'), /read-blocked/);
    server.tmux('set-option', '-p', '-u', '-t', peer, '@uplink_read');
    await submitted('four');
    // An option that makes the pane's line unparsable fails closed, whichever field it is in.
    await refused(() => server.setOption(peer, '@uplink_last_read', 'x\u001fy'), /could not be parsed/);
    server.tmux('set-option', '-p', '-u', '-t', peer, '@uplink_last_read');
    await submitted('five');
    await refused(() => server.tmux('copy-mode', '-t', peer), /copy mode/);
    server.tmux('send-keys', '-t', peer, '-X', 'cancel');
    await submitted('six');
    await refused(() => {
      config.read_deny = ['secret-*'];
      server.setOption(peer, '@name', 'secret-pane');
    }, /read_deny/);
    expect(server.capture(peer, 200)).not.toContain('refused-send');
  });

  itInProcess('a repeated send to a pane found unchanged is typed in the step that looks the pane up', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@name', '#{pane_id},}#');
    server.setOption(peer, '@uplink_profile', 'operator');
    await driver.send(peer, { message: 'first', reply_hint: 'none' });
    const run = vi.spyOn(ControlClient.prototype, 'run');
    const sequence = vi.spyOn(ControlClient.prototype, 'runSequence');
    try {
      await driver.send(peer, { message: 'second', reply_hint: 'none' });
      // No lookup and no typing of its own: tmux compared the pane with the earlier lookup and typed, in one step.
      expect(run.mock.calls.map(([args]) => args[0])).toEqual([]);
      const steps = sequence.mock.calls.map(([commands]) => commands.map((c) => c[0]).join(' ; '));
      expect(steps).toEqual(['if-shell', 'capture-pane ; if-shell']);
      expect(sequence.mock.calls[0]![0][0]![4]).toMatch(/^#\{==:/);
    } finally {
      run.mockRestore();
      sequence.mockRestore();
    }
    await eventually(() => server.capture(peer).split('] second').length - 1 === 2, 10_000, 'the second line submitted');
  });

  it('concurrent sends to one pane do not interleave', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    const receipts = await Promise.all([1, 2, 3, 4].map((n) => driver.send(peer, { message: `parallel-${n}`, reply_hint: 'none' })));
    for (const r of receipts) expect(r.delivered).toBe(true);
    // Each line intact twice (the echo, then cat's copy after Enter): nothing was interleaved.
    const intact = (id: string): number =>
      server
        .capture(peer)
        .split('\n')
        .filter((l) => l.includes(`id:${id}]`) && /parallel-\d$/.test(l.trimEnd())).length;
    await eventually(() => receipts.every((r) => intact(r.correlation_id) === 2), 10_000, 'every line echoed and submitted whole');
  });

  it('unknown key names are invalid with a hint to use type', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    const error = await failure(driver.invoke(peer, 'keys', { keys: ['DoRootThings'] }));
    expect(error.kind).toBe('Invalid');
    expect(error.hint).toMatch(/type op/);
  });

  it('type is fire-and-forget and gated by tier and the read guard', async () => {
    const { server, driver, own } = rig();
    const peer = server.split("sh -c 'cat > /dev/null'");
    await driver.invoke(peer, 'read', {});
    const denied = await failure(driver.invoke(peer, 'type', { text: 'hello' }));
    expect(denied.kind).toBe('Rejected');
    expect(denied.message).toContain('needs tier operator');
    expect(denied.message).toContain('is observer');
    expect(denied.hint).toBe('ask the operator to grant operator on this pane in the Uplink panel');

    server.setOption(peer, '@uplink_profile', 'operator');
    const started = Date.now();
    // A silent consumer never echoes: type still returns at once (no verification wait).
    expect(await driver.invoke(peer, 'type', { text: 'hello Enter world', enter: true })).toEqual({ typed: 17, enter: true });
    expect(Date.now() - started).toBeLessThan(4000);
    expect((await failure(driver.invoke(peer, 'type', { text: 'two\nlines' }))).kind).toBe('Invalid');
    server.setOption(own, '@uplink_profile', 'godmode');
    await driver.invoke(own, 'read', {});
    expect((await failure(driver.invoke(own, 'type', { text: 'x' }))).kind).toBe('Rejected');
  });

  it('dangerous keys need godmode', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'operator');
    await driver.invoke(peer, 'read', {});
    await driver.invoke(peer, 'keys', { keys: ['Enter'] });
    const error = await failure(driver.invoke(peer, 'keys', { keys: ['C-c'] }));
    expect(error.kind).toBe('Rejected');
    expect(error.message).toContain('needs tier godmode');
    server.setOption(peer, '@uplink_profile', 'godmode');
    expect(await driver.invoke(peer, 'keys', { keys: ['C-c'] })).toEqual({ sent: 1 });
    // C-c ended cat, and with it the pane.
    await eventually(async () => !(await driver.channels()).some((c) => c.channel === `tmux:${peer}`), 10_000, 'the pane to close');
  });

  it('a grant change in the config takes effect without restart, and the pane option wins', async () => {
    const { server, driver, config } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@name', 'hot1');
    await driver.invoke(peer, 'read', {});
    expect((await failure(driver.invoke(peer, 'type', { text: 'x' }))).kind).toBe('Rejected');
    config.write_allow = [{ pattern: 'hot*', tier: 'operator' }];
    expect(await driver.invoke(peer, 'type', { text: 'x' })).toEqual({ typed: 1, enter: false });
    expect((await driver.channels()).find((c) => c.channel === `tmux:${peer}`)!.detail).toMatchObject({ tier: 'operator', tier_source: 'config' });
    // An explicit observer in the pane option pins the pane down despite the glob.
    server.setOption(peer, '@uplink_profile', 'observer');
    expect((await failure(driver.invoke(peer, 'type', { text: 'x' }))).kind).toBe('Rejected');
    // Junk in the pane option never grants.
    server.setOption(peer, '@uplink_profile', 'Godmode');
    expect((await failure(driver.invoke(peer, 'type', { text: 'x' }))).kind).toBe('Rejected');
    // A glob on the pane id works too.
    server.tmux('set-option', '-p', '-u', '-t', peer, '@uplink_profile');
    config.write_allow = [{ pattern: peer, tier: 'operator' }];
    expect(await driver.invoke(peer, 'type', { text: 'y' })).toEqual({ typed: 1, enter: false });
  });

  it('a read-blocked pane rejects content ops (read, ask, send, type, keys, label)', async () => {
    const { server, driver, config } = rig();
    const peer = server.split('cat');
    server.setOption(peer, '@uplink_profile', 'godmode');
    await driver.invoke(peer, 'read', {});
    server.setOption(peer, '@uplink_read', 'off');
    // All at once, each refusal caught as it comes (in whatever order the driver answers).
    for (const refused of [
      driver.invoke(peer, 'read', {}),
      driver.invoke(peer, 'ask', { message: 'hi', timeout_ms: 2000 }),
      driver.send(peer, { message: 'hi', reply_hint: 'none' }),
      driver.invoke(peer, 'type', { text: 'x' }),
      driver.invoke(peer, 'keys', { keys: ['Enter'] }),
      driver.invoke(peer, 'label', { name: 'renamed' }),
    ].map(failure)) {
      const error = await refused;
      expect(error.kind).toBe('Rejected');
      expect(error.message).toContain('read-blocked');
    }
    // await-idle reveals only whether the pane is busy, so it stays allowed.
    expect(await driver.invoke(peer, 'await-idle', { quiet_ms: 200, timeout_ms: 5000 })).toEqual({ idle: true });
    expect((await driver.channels()).find((c) => c.channel === `tmux:${peer}`)!.detail).toMatchObject({ readable: false, title: '' });
    // The config glob blocks the same way.
    server.tmux('set-option', '-p', '-u', '-t', peer, '@uplink_read');
    config.read_deny = [peer];
    expect((await failure(driver.invoke(peer, 'read', {}))).message).toContain('tmux.read_deny');
    expect(server.capture(peer)).not.toContain('[uplink');
  });

  it('a config read-deny matches an emoji-named pane with the shared glob (? is one code point, * crosses /)', async () => {
    const { server, driver, config } = rig();
    const vault = server.split('cat');
    server.setOption(vault, '@name', '🔒 vault/prod');
    config.read_deny = ['? vault*'];
    expect((await failure(driver.invoke('🔒 vault/prod', 'read', {}))).message).toContain('tmux.read_deny "? vault*"');
    config.read_deny = ['?? vault*'];
    await driver.invoke('🔒 vault/prod', 'read', {});
  });

  it('a rename cannot escape a config read-deny or raise a tier', async () => {
    const { server, driver, config } = rig();
    const secret = server.split('cat');
    const worker = server.split('cat');
    server.setOption(secret, '@name', 'customer-nas');
    server.setOption(secret, '@uplink_profile', 'operator');
    server.setOption(worker, '@name', 'scratch');
    server.setOption(worker, '@uplink_profile', 'operator');
    config.read_deny = ['customer-*'];
    config.write_allow = [{ pattern: 'lab-*', tier: 'godmode' }];
    expect((await failure(driver.invoke('customer-nas', 'read', {}))).kind).toBe('Rejected');

    // Renaming the denied pane is refused anyway (it is read-blocked), and even a rename done
    // behind the driver's back (tmux set @name) does not lift the deny: the old label is remembered.
    expect((await failure(driver.invoke(secret, 'label', { name: 'harmless' }))).kind).toBe('Rejected');
    server.setOption(secret, '@name', 'harmless');
    expect((await failure(driver.invoke('harmless', 'read', {}))).message).toContain('customer-*');
    expect((await failure(driver.invoke(secret, 'read', {}))).kind).toBe('Rejected');

    // An operator pane renaming itself into a godmode glob is refused…
    const raise = await failure(driver.invoke(worker, 'label', { name: 'lab-1' }));
    expect(raise.kind).toBe('Rejected');
    expect(raise.message).toContain('never raise a tier');
    // …and a label an agent set never grants, even when the config changes later.
    server.tmux('set-option', '-p', '-u', '-t', worker, '@uplink_profile');
    config.write_allow = [{ pattern: 'scratch', tier: 'operator' }];
    expect(await driver.invoke(worker, 'label', { name: 'lab-1' })).toEqual({ label: 'lab-1' });
    config.write_allow = [
      { pattern: 'lab-*', tier: 'godmode' },
      { pattern: 'scratch', tier: 'operator' },
    ];
    await driver.invoke('lab-1', 'read', {});
    const chord = await failure(driver.invoke('lab-1', 'keys', { keys: ['C-c'] }));
    expect(chord.message).toContain('is operator');
    expect((await driver.channels()).find((c) => c.channel === `tmux:${worker}`)!.detail).toMatchObject({ tier: 'operator' });
  });

  it('setTier stores a human grant in the pane option, visible in tmux', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    await driver.setTier!(peer, 'operator');
    expect(server.tmux('show-options', '-p', '-v', '-t', peer, '@uplink_profile').trim()).toBe('operator');
    await driver.invoke(peer, 'read', {});
    expect(await driver.invoke(peer, 'type', { text: 'ok' })).toEqual({ typed: 2, enter: false });
    await driver.setTier!(peer, 'default');
    expect((await failure(driver.invoke(peer, 'type', { text: 'no' }))).kind).toBe('Rejected');
    expect((await failure(driver.setTier!(peer, 'root'))).kind).toBe('Invalid');
  });

  it('declares its tiers, least power first, and each declared tier is one setTier takes and channels report', async () => {
    const { server, driver } = rig();
    const peer = server.split('cat');
    // A driver out of process declares itself in its handshake, so ask it something first.
    await driver.channels();
    const declared = driver.info().tiers ?? [];
    expect(declared.map((t) => [t.name, t.risk])).toEqual([
      ['observer', 'low'],
      ['operator', 'medium'],
      ['godmode', 'high'],
    ]);
    for (const t of declared) {
      expect(t.description.length).toBeGreaterThan(0);
      await driver.setTier!(peer, t.name);
      expect((await driver.channels()).find((c) => c.channel === `tmux:${peer}`)!.detail).toMatchObject({ tier: t.name, tier_source: 'pane option' });
    }
  });
});
