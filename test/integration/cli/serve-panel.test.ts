/**
 * The built product (`npm run build`, then `bin/uplink serve`) serves the panel: the bundle is
 * split into chunks, and the panel's code must still find `dist/renderer` from inside one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildForTests, ROOT, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served } from '../../fixtures/hub-build';
import { prerequisite } from '../../fixtures/prerequisite';

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

const built = prerequisite('the built panel (dist/renderer/index.html)', existsSync(join(ROOT, 'dist/renderer/index.html')), 'npm run build');

describe('the built uplink serve', () => {
  it.skipIf(built.skip)('serves the panel page from dist/renderer', async () => {
    built.check();
    const fixture = await buildForTests();
    const served = await startServe({ ...fixture, launcher: join(ROOT, 'bin/uplink') }, tmpDataDir());
    running.push(served);
    const res = await fetch(`${served.url}/`);
    expect(await res.text()).toMatch(/^<!doctype html>/i);
    expect(res.status).toBe(200);
  });
});
