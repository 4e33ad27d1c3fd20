/** The product driver set: tmux and desktop become kernel providers with their config schemas. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDrivers } from '../../../src/main/hub';
import { createHub } from '../../../src/main/hub/hub-core';

describe('loadDrivers', () => {
  it('enables tmux and desktop, one provider per interaction kind, and validates their config sections', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-drivers-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ tmux: { socket: 42 } }));
    const set = await loadDrivers(dir);
    expect(Object.keys(set.configSchemas).sort()).toEqual(['desktop', 'tmux']);
    const hub = createHub({ dataDir: dir, drivers: set, watchConfig: false });
    try {
      const ids = hub
        .providers()
        .map((p) => p.provider_id)
        .sort();
      expect(ids).toEqual(expect.arrayContaining(['uplink/tmux', 'uplink/desktop-semantic', 'uplink/desktop-visual']));
      const tmux = hub.providers().find((p) => p.provider_id === 'uplink/tmux')!;
      expect(tmux.capabilities).toEqual(expect.arrayContaining(['tmux.read', 'tmux.send', 'tmux.await-idle']));
      const doctor = await hub.doctor();
      expect(doctor.config.ok).toBe(false);
      expect(doctor.config.error).toContain('/tmux/socket must be string');
    } finally {
      await hub.close();
    }
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    delete (globalThis as { plantedDrivers?: boolean }).plantedDrivers;
  });

  it('ignores UPLINK_TEST_DRIVERS: the environment cannot plant a module into a hub', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uplink-drivers-'));
    const planted = join(dir, 'planted.mjs');
    writeFileSync(
      planted,
      'globalThis.plantedDrivers = true;\nexport const configSchemas = { planted: {} };\nexport function createDrivers() { return []; }\n',
    );
    vi.stubEnv('UPLINK_TEST_DRIVERS', planted);
    const set = await loadDrivers(dir);
    expect((globalThis as { plantedDrivers?: boolean }).plantedDrivers).toBeUndefined();
    expect(Object.keys(set.configSchemas).sort()).toEqual(['desktop', 'tmux']);
  });
});
