/**
 * Listing panes without a UTF-8 locale. MCP clients start stdio servers with little more than
 * PATH and HOME; tmux then printed every byte outside printable ASCII as `_` to us, the pane
 * format's field separator included, so every pane was dropped and `channel_list` said `[]`.
 * Real tmux servers started in a UTF-8 and in the C locale, the driver, the built `bin/uplink`
 * and the real MCP SDK client, each with nothing but PATH (and HOME) in its environment.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChannelEntry, Driver } from '../../../src/main/drivers/contract';
import { tmuxDriverForTest, VIA_PROTOCOL, describeInProcess } from '../../fixtures/tmux-driver';
import { ROOT } from '../../fixtures/hub-build';
import { TmuxTestServer } from '../../fixtures/tmux-server';
import { validated } from '../../fixtures/validated-driver';

/** What `env -i PATH=$PATH` leaves: no LANG, no LC_*, so the C locale. */
const MINIMAL: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
/** A title with non-ASCII text and the characters a printable separator would be made of. */
const TITLE = 'build # 1 · café ✓ | _ ; , \' " \\ $HOME %1 ~';
/** `select-pane -T` expands formats: `##` is a literal `#`. */
const TITLE_ARG = TITLE.replace('#', '##');
const LABEL = 'büro#2';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A private server started in `serverEnv`, with a peer pane titled TITLE and labelled LABEL. */
function serverWithPeer(serverEnv: NodeJS.ProcessEnv): { server: TmuxTestServer; peer: string } {
  const server = TmuxTestServer.start('sh', serverEnv);
  cleanup.push(() => server.stop());
  const peer = server.split('cat');
  server.tmux('select-pane', '-t', peer, '-T', TITLE_ARG);
  server.setOption(peer, '@name', LABEL);
  return { server, peer };
}

function expectPeerListed(channels: ChannelEntry[], server: TmuxTestServer, peer: string): void {
  expect(channels.map((c) => c.channel).sort()).toEqual([`tmux:${server.firstPane}`, `tmux:${peer}`].sort());
  expect(channels.find((c) => c.channel === `tmux:${peer}`)).toMatchObject({ labels: [LABEL], detail: { target: 'it:0.1', command: 'cat', title: TITLE } });
}

/** A HOME whose default data dir names the private server and runs only the tmux driver. */
function homeFor(server: TmuxTestServer): string {
  const home = mkdtempSync(join(tmpdir(), 'uplink-locale-home-'));
  cleanup.push(() => rmSync(home, { recursive: true, force: true }));
  const dataDir = join(home, '.local', 'share', 'uplink');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ hub: { drivers: ['tmux'] }, tmux: { socket: server.socket } }));
  return home;
}

function requireBuild(): string {
  const launcher = join(ROOT, 'bin', 'uplink');
  if (!existsSync(join(ROOT, 'dist', 'cli.mjs'))) throw new Error('uplink is not built — hint: run `npm run build` first');
  return launcher;
}

const SERVER_LOCALES: Array<[string, NodeJS.ProcessEnv]> = [
  ['a UTF-8 locale', TmuxTestServer.cleanEnv({ LANG: 'C.UTF-8' })],
  ['the C locale (env -i)', MINIMAL],
];

describe.each(SERVER_LOCALES)('a tmux server started in %s', (_name, serverEnv) => {
  // One-shot mode is an in-process option (`controlMode`); `driver run` always uses control mode.
  it.each([['control mode', true], ...(VIA_PROTOCOL ? [] : [['one-shot commands', false] as const])] as Array<readonly [string, boolean]>)(
    'is listed in full by a driver with only PATH in its environment (%s)',
    async (_mode, controlMode) => {
      const { server, peer } = serverWithPeer(serverEnv);
      if (serverEnv === MINIMAL) expect(server.tmux('show-environment', '-g')).not.toMatch(/^(LANG|LC_\w+)=/m);
      const driver: Driver = validated(tmuxDriverForTest({ socket: server.socket, env: { ...MINIMAL }, controlMode }));
      cleanup.push(() => driver.dispose?.());

      expectPeerListed(await driver.channels(), server, peer);
      // By label (the whole list) and by id (one display-message line).
      expect(await driver.invoke(LABEL, 'read', { lines: 5 })).toHaveProperty('text');
      expect(await driver.invoke(peer, 'read', { lines: 5 })).toHaveProperty('text');
      const doctor = await driver.doctor();
      expect(doctor.ok).toBe(true);
      expect(doctor.lines).toContain(`server: reachable at ${server.socket} (1 session, 2 panes)`);
    },
  );
});

// bin/uplink runs dist's own drivers, in process whichever way this suite runs.
describeInProcess('uplink under a minimal environment (PATH and HOME only)', () => {
  it('bin/uplink channels --json lists the panes of a server started in the C locale, titles intact', async () => {
    const launcher = requireBuild();
    const { server, peer } = serverWithPeer(MINIMAL);
    const home = homeFor(server);
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [launcher, 'channels', '--json'], { env: { ...MINIMAL, HOME: home }, cwd: home });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expectPeerListed(JSON.parse(out.stdout) as ChannelEntry[], server, peer);
  });

  it('uplink mcp answers channel_list with the panes, and channel_doctor is healthy', async () => {
    const launcher = requireBuild();
    const { server, peer } = serverWithPeer(TmuxTestServer.cleanEnv());
    const home = homeFor(server);
    const client = new Client({ name: 'inspector', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [launcher, 'mcp'], env: { ...MINIMAL, HOME: home }, cwd: home, stderr: 'pipe' }),
    );
    cleanup.push(() => client.close());
    const answer = async <T>(name: string): Promise<T> => {
      const r = (await client.callTool({ name, arguments: {} })) as CallToolResult;
      expect(r.isError ?? false).toBe(false);
      return r.structuredContent as T;
    };
    expectPeerListed((await answer<{ channels: ChannelEntry[] }>('channel_list')).channels, server, peer);
    const doctor = await answer<{ drivers: Array<{ lines: string[] }> }>('channel_doctor');
    expect(doctor.drivers.flatMap((d) => d.lines).join('\n')).toMatch(/server: reachable at .* \(1 session, 2 panes\)/);
  });
});
