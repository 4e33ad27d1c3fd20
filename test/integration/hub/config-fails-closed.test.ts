/**
 * A broken config.json fails closed in a real hub over a real tmux server: tmux.read_deny keeps
 * hiding a pane when the file is emptied, deleted, oversized or nested too deeply, while running
 * and after a restart, and doctor says which file is broken and which config is in force.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTmuxDriver, tmuxConfigSchema } from '../../../src/main/drivers/tmux';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub, HubError } from '../../../src/main/hub';
import { sectionSchema } from '../../../src/main/hub/driver-admin/default';
import { tmpDataDir } from '../../fixtures/hub-build';
import { TmuxTestServer, eventually } from '../../fixtures/tmux-server';

const servers: TmuxTestServer[] = [];
const hubs: Hub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const s of servers.splice(0)) s.stop();
});

function setup(): { server: TmuxTestServer; secret: string; dir: string; open: () => Hub } {
  const server = TmuxTestServer.start();
  servers.push(server);
  const secret = server.split("sh -c 'echo top-secret-text; exec cat'");
  const dir = tmpDataDir();
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ tmux: { read_deny: [secret] } }));
  const env = TmuxTestServer.cleanEnv();
  const open = (): Hub => {
    const hub = createHub({
      dataDir: dir,
      drivers: {
        configSchemas: { tmux: sectionSchema(tmuxConfigSchema) },
        create: (section) => [createTmuxDriver({ socket: server.socket, env, config: section('tmux') })],
      },
    });
    hubs.push(hub);
    return hub;
  };
  return { server, secret, dir, open };
}

const agent = { kind: 'mcp' as const, name: 'test-agent' };

async function readRefused(hub: Hub, pane: string): Promise<HubError> {
  try {
    await hub.invoke(`tmux:${pane}`, 'read', {}, { agent });
  } catch (e) {
    return e as HubError;
  }
  throw new Error(`read of ${pane} was allowed`);
}

const BREAKAGES: Array<[string, (path: string) => void, RegExp]> = [
  ['emptied', (p) => writeFileSync(p, ''), /is empty/],
  ['deleted', (p) => rmSync(p), /is missing/],
  ['a directory in its place', (p) => (rmSync(p), mkdirSync(p)), /cannot read/],
  ['oversized', (p) => writeFileSync(p, JSON.stringify({ note: 'x'.repeat(1024 * 1024) })), /too large/],
  ['nested 100,000 deep', (p) => writeFileSync(p, '['.repeat(100_000)), /nests deeper than 64 levels/],
];

describe('config.json fails closed', () => {
  for (const [name, breakIt, error] of BREAKAGES) {
    it(`${name}: read_deny still holds while running and after a restart, and doctor says so`, async () => {
      const { secret, dir, open } = setup();
      const hub = open();
      expect((await readRefused(hub, secret)).message).toMatch(/read_deny/);
      const path = join(dir, 'config.json');
      breakIt(path);
      await eventually(async () => !(await hub.doctor()).config.ok, 5000, 'doctor to see the broken file');
      const doctor = await hub.doctor();
      expect(doctor.config.error).toMatch(error);
      expect(doctor.config.error).toContain(path);
      expect(doctor.config.error).toContain('the last good config stays in use');
      expect((await readRefused(hub, secret)).message).toMatch(/read_deny/);
      expect(hub.configStatus()).toEqual(doctor.config);
      const panel = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
      expect((await panel.handlers.getSettings({})).config_error).toBe(doctor.config.error);
      panel.close();
      await hub.close();

      const restarted = open();
      const after = await restarted.doctor();
      expect(after.config.ok).toBe(false);
      expect(after.config.error).toMatch(error);
      expect(after.config.error).toContain(`the last good config (saved in ${join(dir, 'config.last-good.json')}) stays in use`);
      expect((await readRefused(restarted, secret)).message).toMatch(/read_deny/);
    });
  }

  it('a fresh data dir with no config.json runs on the defaults and doctor says config ok', async () => {
    const { secret, dir, open } = setup();
    rmSync(join(dir, 'config.json'));
    const hub = open();
    expect((await hub.doctor()).config).toEqual({ ok: true, path: join(dir, 'config.json') });
    expect(await hub.invoke(`tmux:${secret}`, 'read', {}, { agent })).toMatchObject({ text: expect.stringContaining('top-secret-text') });
  });
});
