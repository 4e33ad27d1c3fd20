/**
 * The built product (`npm run build`, then `bin/uplink serve`) serves the panel: the bundle is
 * split into chunks, and the panel's code must still find `dist/renderer` from inside one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildForTests, ROOT, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served } from '../../fixtures/hub-build';

const running: Served[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe('the built uplink serve', () => {
  it.skipIf(!existsSync(join(ROOT, 'dist/renderer/index.html')))('serves the panel page from dist/renderer', async () => {
    const fixture = await buildForTests();
    const served = await startServe({ ...fixture, launcher: join(ROOT, 'bin/uplink') }, tmpDataDir());
    running.push(served);
    const res = await fetch(`${served.url}/`);
    expect(await res.text()).toMatch(/^<!doctype html>/i);
    expect(res.status).toBe(200);
  });
});
