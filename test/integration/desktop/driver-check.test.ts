/**
 * The conformance kit passes the built-in desktop driver served by `uplink driver run desktop`, on
 * a private display with a real GTK window to call.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForTests, tmpDataDir, type TestBuild } from '../../fixtures/hub-build';
import { startFixture, type App } from './apps';
import { startSession, type DesktopSession } from './session';

let b: TestBuild;
let session: DesktopSession;
let app: App;

beforeAll(async () => {
  [b, session] = await Promise.all([buildForTests(), startSession()]);
  app = await startFixture(session, ['--title', 'Driver Check']);
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await session?.stop();
});

describe('uplink driver check on the desktop driver', () => {
  it('passes every check it can run, with a window to call', () => {
    const env = { ...session.env, UPLINK_DATA_DIR: tmpDataDir() };
    const r = spawnSync(process.execPath, [b.launcher, 'driver', 'check', '--', process.execPath, b.launcher, 'driver', 'run', 'desktop'], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const lines = `${r.stdout}${r.stderr}`.trim().split('\n');
    expect(
      lines.filter((l) => l.startsWith('fail')),
      lines.join('\n'),
    ).toEqual([]);
    expect(lines).toContainEqual(expect.stringMatching(/^pass channels \(\d+ channel/));
    expect(lines).toContain('pass schemas');
    expect(r.status).toBe(0);
  }, 150_000);
});
