/**
 * `uplink fleet init`: each hub's own seed (0600), the roster of public keys, and a server config
 * that admits exactly those keys, each only on its own hub's subjects; nothing is overwritten
 * without --force, and --force keeps the keys of hubs whose seed is there.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hubPermissions, initFleet } from '../../../src/main/hub/fleet/init';
import { readFleetRoster, readFleetSeed } from '../../../src/main/hub/fleet/auth';
import { main } from '../../../src/main/edges/cli/main';
import { tmpDataDir } from '../../fixtures/hub-build';

afterEach(() => vi.restoreAllMocks());

describe('fleet init', () => {
  it('writes a seed per hub (0600), the roster of their public keys, and a loopback JetStream server config', () => {
    const out = join(tmpDataDir('uplink-fleet-init-'), 'keys');
    const r = initFleet({ hubs: ['fa', 'fb', 'fc'], out, port: 4333, fleet: 'lab' });
    const roster = readFleetRoster(join(out, 'roster.json'));
    expect(roster).toEqual(r.roster);
    expect(roster).toMatchObject({ fleet: 'lab', version: 1 });
    for (const hub of ['fa', 'fb', 'fc']) {
      expect(statSync(join(out, `${hub}.nk`)).mode & 0o777).toBe(0o600);
      expect(readFleetSeed(join(out, `${hub}.nk`)).getPublicKey()).toBe(roster.hubs[hub]);
      expect(r.configs[hub]).toEqual({ url: 'nats://127.0.0.1:4333', name: hub, seed_file: join(out, `${hub}.nk`), roster_file: join(out, 'roster.json') });
    }
    const conf = readFileSync(join(out, 'nats-server.conf'), 'utf8');
    expect(conf).toContain('listen: 127.0.0.1:4333');
    expect(conf).toMatch(/jetstream \{ store_dir: /);
    for (const key of Object.values(roster.hubs)) expect(conf).toContain(`nkey: ${key}`);
    // No seed ever lands in the server's config.
    expect(conf).not.toMatch(/SU[A-Z2-7]{50}/);
  });

  it('lets a hub subscribe to its own call subject only, and publish only its own presence, prompts, history and checkpoints', () => {
    const p = hubPermissions('fb');
    expect(p.subscribe).toContain('uplink.fb.call');
    expect(p.subscribe.filter((s) => s.includes('.call'))).toEqual(['uplink.fb.call']);
    expect(p.subscribe).not.toContain('_INBOX.>');
    expect(p.publish).toEqual(expect.arrayContaining(['uplink.presence.fb', 'uplink.prompts.fb', 'uplink.history.fb', 'uplink.checkpoint.fb']));
    expect(p.publish.filter((s) => /^uplink\.(presence|prompts|history|checkpoint)\./.test(s))).toHaveLength(4);
    expect(p.publish.some((s) => /PURGE|STREAM\.DELETE|MSG\.DELETE|STREAM\.UPDATE/.test(s))).toBe(false);
  });

  it('refuses to overwrite without --force; with it, a hub whose seed is there keeps its key and the roster version goes up', () => {
    const out = tmpDataDir('uplink-fleet-init-');
    const first = initFleet({ hubs: ['fa', 'fb'], out });
    expect(() => initFleet({ hubs: ['fa', 'fb'], out })).toThrow(/already exist.* — hint: pass --force/);
    const second = initFleet({ hubs: ['fa', 'fb', 'fc'], out, force: true });
    expect(second.roster.version).toBe(2);
    expect(second.roster.hubs.fa).toBe(first.roster.hubs.fa);
    expect(second.roster.hubs.fb).toBe(first.roster.hubs.fb);
    expect(second.roster.hubs.fc).toMatch(/^U/);
  });

  it('takes only valid, distinct hub names', () => {
    const out = tmpDataDir('uplink-fleet-init-');
    expect(() => initFleet({ hubs: ['fa', 'Fb'], out })).toThrow(/"Fb" is not a hub name — hint: /);
    expect(() => initFleet({ hubs: ['fa', 'presence'], out })).toThrow(/presence is a word the fleet's own subjects use/);
    expect(() => initFleet({ hubs: ['fa', 'fa'], out })).toThrow(/hub fa is named twice/);
    expect(() => initFleet({ hubs: [], out })).toThrow(/no hubs/);
  });

  it('is `uplink fleet init` on the command line, printing each hub’s fleet section', async () => {
    const out = tmpDataDir('uplink-fleet-init-');
    let printed = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((printed += String(s)), true));
    expect(await main(['fleet', 'init', '--hubs', 'fa,fb', '--out', out, '--port', '4444'])).toBe(0);
    expect(printed).toContain(
      `"fleet": {"url":"nats://127.0.0.1:4444","name":"fa","seed_file":"${join(out, 'fa.nk')}","roster_file":"${join(out, 'roster.json')}"}`,
    );
    expect(printed).toContain(`nats-server -c ${join(out, 'nats-server.conf')}`);
    printed = '';
    let errors = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((errors += String(s)), true));
    expect(await main(['fleet', 'init', '--hubs', 'fa,fb', '--out', out])).not.toBe(0);
    expect(errors).toMatch(/already exist.* — hint: pass --force/);
    expect(await main(['fleet', 'init', '--out', out])).toBe(2);
  });
});
