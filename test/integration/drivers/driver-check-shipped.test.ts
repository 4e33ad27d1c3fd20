/**
 * The conformance kit passes what Uplink ships: the built-in tmux driver served over the protocol
 * and both example drivers. (That each check can fail is shown on broken fixtures elsewhere.)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildForTests, type TestBuild } from '../../fixtures/hub-build';
import { TmuxTestServer } from '../../fixtures/tmux-server';

const ROOT = join(__dirname, '..', '..', '..');
let b: TestBuild;
let server: TmuxTestServer | undefined;

beforeAll(async () => {
  b = await buildForTests();
});

afterEach(() => {
  server?.stop();
  server = undefined;
});

function check(command: string[], env: NodeJS.ProcessEnv): { code: number | null; lines: string[] } {
  const r = spawnSync(process.execPath, [b.launcher, 'driver', 'check', '--', ...command], { cwd: ROOT, env, encoding: 'utf8', timeout: 90_000 });
  return { code: r.status, lines: `${r.stdout}${r.stderr}`.trim().split('\n') };
}

function notesDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-notes-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'todo.md'), 'buy milk\n');
  return dir;
}

describe('uplink driver check on what Uplink ships', () => {
  it('passes the built-in tmux driver served by `uplink driver run tmux`', () => {
    server = TmuxTestServer.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'uplink-check-tmux-'));
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ tmux: { socket: server.socket } }));
    const r = check([process.execPath, b.launcher, 'driver', 'run', 'tmux'], TmuxTestServer.cleanEnv({ UPLINK_DATA_DIR: dataDir }));
    expect(
      r.lines.filter((l) => l.startsWith('fail')),
      r.lines.join('\n'),
    ).toEqual([]);
    expect(r.lines.filter((l) => l.startsWith('pass')).length).toBeGreaterThanOrEqual(12);
    expect(r.code).toBe(0);
  });

  it.each([
    ['the TypeScript example', [process.execPath, join(ROOT, 'examples/drivers/notes-ts/driver.mjs')]],
    ['the Python example', ['/usr/bin/python3', join(ROOT, 'examples/drivers/notes-py/driver.py')]],
  ])('passes %s', (_, command) => {
    const r = check([...command, notesDir()], { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() });
    expect(
      r.lines.filter((l) => l.startsWith('fail')),
      r.lines.join('\n'),
    ).toEqual([]);
    expect(r.code).toBe(0);
  });
});
