import { afterEach, describe, expect, it } from 'vitest';
import { ControlClient } from '../../../src/main/drivers/tmux/control-client';
import { TmuxTransport, tmuxFailure } from '../../../src/main/drivers/tmux/transport';
import { DriverError } from '../../../src/main/drivers/contract';
import { TmuxTestServer, eventually } from '../../fixtures/tmux-server';

let server: TmuxTestServer | undefined;
const disposers: Array<() => unknown> = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
  server?.stop();
  server = undefined;
});

/** A control-mode client of the private server's session `it`, closed after the test. */
async function attachControl(on: TmuxTestServer): Promise<ControlClient> {
  const client = await ControlClient.attach({
    tmux: 'tmux',
    globalArgs: ['-S', on.socket],
    session: 'it',
    env: TmuxTestServer.cleanEnv(),
    failure: (text) => tmuxFailure(text, on.socket),
  });
  disposers.push(() => client.close());
  return client;
}

describe('tmux transport', () => {
  it('runs a one-shot command against a private server', async () => {
    server = TmuxTestServer.start();
    const t = new TmuxTransport({ socket: () => server!.socket, env: TmuxTestServer.cleanEnv() });
    disposers.push(() => t.dispose());
    expect(await t.oneShot(['display-message', '-p', '-t', 'it', 'ok-#{session_name}'])).toEqual(['ok-it']);
  });

  it('attaches in control mode, runs commands and reports %output events', async () => {
    server = TmuxTestServer.start('cat');
    const client = await attachControl(server);
    expect(await client.run(['display-message', '-p', '-t', 'it', "cm-#{session_name} it's"])).toEqual(["cm-it it's"]);
    const seen: string[] = [];
    client.onOutput((pane, data) => {
      if (pane === server!.firstPane) seen.push(data.toString('utf8'));
    });
    server.tmux('send-keys', '-t', server.firstPane, '-l', 'uplink-evt-marker ❯');
    await eventually(() => seen.join('').includes('uplink-evt-marker ❯'), 10_000, '%output with the marker');
    // tmux's own errors come back as DriverErrors through the control connection too.
    await expect(client.run(['capture-pane', '-p', '-t', '%999'])).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('runs a command sequence as one line: a block per command, the nested command of an if-shell -F in its own, replies aligned after', async () => {
    server = TmuxTestServer.start('cat');
    const client = await attachControl(server);
    const pane = server.firstPane;
    const say = (text: string): string[] => ['display-message', '-p', text];
    expect(await client.runSequence([say('one'), say('two; #{session_name}')])).toEqual([['one'], ['two; it']]);
    // Each branch of an if-shell -F runs as a command of its own, answered right after the if-shell.
    const branch = (condition: string): string[] => ['if-shell', '-F', '-t', pane, condition, 'display-message -p then', 'display-message -p else'];
    expect(await client.runSequence([say('a'), branch('1')], 3)).toEqual([['a'], [], ['then']]);
    expect(await client.runSequence([branch('0'), say('b')], 3)).toEqual([[], ['else'], ['b']]);
    // A failing command ends the sequence: tmux runs nothing after it, and the next reply is the next command's.
    const failed = client.runSequence([say('c'), ['capture-pane', '-p', '-t', '%999'], say('never')]);
    const next = client.run(say('next'));
    await expect(failed).rejects.toMatchObject({ kind: 'NotFound' });
    expect(await next).toEqual(['next']);
    // tmux's own search of the screen, as a verified send uses it.
    server.tmux('send-keys', '-t', pane, '-l', 'marker-id:0badcafe here');
    await eventually(() => server!.capture(pane).includes('marker-id:0badcafe'));
    expect(await client.runSequence([branch('#{C:id:0badcafe}')], 2)).toEqual([[], ['then']]);
    expect(await client.runSequence([branch('#{C:id:feedf00d}')], 2)).toEqual([[], ['else']]);
    expect(await client.run(say('still aligned'))).toEqual(['still aligned']);
  });

  it('uses control mode when available and reconnects after the server restarts', async () => {
    server = TmuxTestServer.start('cat');
    const t = new TmuxTransport({ socket: () => server!.socket, env: TmuxTestServer.cleanEnv() });
    disposers.push(() => t.dispose());
    expect(await t.run(['display-message', '-p', '-t', 'it', '#{session_name}'])).toEqual(['it']);
    expect(t.mode).toBe('control');
    server.tmux('kill-server');
    await expect(t.run(['list-sessions'])).rejects.toMatchObject({ kind: 'Unavailable' });
    server.tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'again', 'cat');
    await eventually(
      async () => (await t.run(['display-message', '-p', '-t', 'again', '#{session_name}']))[0] === 'again',
      15_000,
      'a working connection after restart',
    );
    await eventually(
      async () => {
        await t.run(['list-sessions']);
        return t.mode === 'control';
      },
      15_000,
      'control mode re-attached',
    );
  });

  it('watches panes of another session through its own client, which detaches when unused', async () => {
    server = TmuxTestServer.start('cat');
    const other = server.session('other', 'cat');
    const t = new TmuxTransport({ socket: () => server!.socket, env: TmuxTestServer.cleanEnv(), idleDetachMs: 200 });
    disposers.push(() => t.dispose());
    await t.run(['list-sessions']);
    const sessionId = server.tmux('display-message', '-p', '-t', other, '#{session_id}').trim();
    const seen: string[] = [];
    const unwatch = await t.watch(sessionId, other, (data) => seen.push(data.toString()));
    expect(unwatch).toBeTypeOf('function');
    const clients = () => server!.tmux('list-clients', '-F', '#{client_control_mode} #{session_name}').trim().split('\n').filter(Boolean);
    expect(clients()).toHaveLength(2);
    server.tmux('send-keys', '-t', other, '-l', 'other-session-output');
    await eventually(() => seen.join('').includes('other-session-output'));
    unwatch!();
    await eventually(() => clients().length === 1, 10_000, 'the watch client to detach');
  });

  it('dispose resolves only once every control client has detached', async () => {
    server = TmuxTestServer.start('cat');
    const other = server.session('other', 'cat');
    const t = new TmuxTransport({ socket: () => server!.socket, env: TmuxTestServer.cleanEnv() });
    await t.run(['list-sessions']);
    const sessionId = server.tmux('display-message', '-p', '-t', other, '#{session_id}').trim();
    await t.watch(sessionId, other, () => undefined);
    expect(server.tmux('list-clients').trim().split('\n')).toHaveLength(2);
    await t.dispose();
    expect(server.tmux('list-clients').trim()).toBe('');
  });

  it('explains an unreachable server with a hint', async () => {
    const t = new TmuxTransport({ socket: () => '/tmp/uplink-no-such-dir/sock', env: TmuxTestServer.cleanEnv() });
    const error = await t.run(['list-sessions']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DriverError);
    expect(error).toMatchObject({ kind: 'Unavailable', message: 'tmux server not reachable at /tmp/uplink-no-such-dir/sock' });
    expect((error as DriverError).hint).toMatch(/start tmux/);
  });
});
