/**
 * `uplink driver run tmux`: the built-in tmux driver served over the driver protocol, its config
 * read from the data dir's config.json, and no hub started.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DriverClient } from '../../fixtures/driver-client';
import { buildForTests, type TestBuild } from '../../fixtures/hub-build';
import { TmuxTestServer } from '../../fixtures/tmux-server';

let b: TestBuild;
let server: TmuxTestServer | undefined;
let client: DriverClient | undefined;

beforeAll(async () => {
  b = await buildForTests();
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  server?.stop();
  server = undefined;
});

describe('uplink driver run tmux', () => {
  it('answers initialize and lists a real pane of the server its config names', async () => {
    server = TmuxTestServer.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'uplink-driver-run-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ tmux: { socket: server.socket } }));
    client = DriverClient.spawn([process.execPath, b.launcher, 'driver', 'run', 'tmux'], { env: TmuxTestServer.cleanEnv({ UPLINK_DATA_DIR: dataDir }) });
    const init = await client.initialize();
    expect(init.protocol_version).toBe('3');
    expect(init.info.id).toBe('tmux');
    expect(init.extensions).toEqual(expect.arrayContaining(['preview', 'precheck', 'set_tier', 'shutdown']));
    const channels = (await client.call('channels')) as Array<{ channel: string }>;
    expect(channels.map((c) => c.channel)).toContain(`tmux:${server.firstPane}`);
    const ops = (await client.call('ops')) as Array<{ op: string }>;
    expect(ops.map((o) => o.op)).toContain('read');
    expect(await client.call('shutdown')).toBeNull();
    expect(await client.exited()).toBe(0);
    expect(client.junk).toEqual([]);
    // No hub: it would have written its audit and hub.json into the data dir.
    expect(existsSync(join(dataDir, 'hub.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'audit.sqlite'))).toBe(false);
  });

  it('is listed by uplink --help', async () => {
    client = DriverClient.spawn([process.execPath, b.launcher, '--help']);
    let out = '';
    client.child!.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    expect(await client.exited()).toBe(0);
    expect(out).toContain('uplink driver run <tmux|desktop>');
  });

  it('refuses a driver it does not have with a usage error', async () => {
    client = DriverClient.spawn([process.execPath, b.launcher, 'driver', 'run', 'nope']);
    expect(await client.exited()).toBe(2);
    expect(client.stderr).toContain('uplink error [core:Invalid]: no built-in driver "nope" — hint: use one of tmux, desktop');
  });
});
