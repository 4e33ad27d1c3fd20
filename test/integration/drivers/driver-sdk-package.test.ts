/**
 * `uplink/driver-sdk` as a third party gets it: a project that depends on Uplink (`file:`)
 * imports the subpath by name, type-checks against its declarations under node16 resolution, and
 * serves a driver whose stray console output never reaches stdout.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DriverClient } from '../../fixtures/driver-client';
import { ROOT } from '../../fixtures/hub-build';

let project: string;

const DRIVER_TS = `import { DriverError, serveDriver, type Driver, type OpSpec } from 'uplink/driver-sdk';
const ops: OpSpec[] = [{ op: 'shout', summary: 'upper-case a text', mutating: false, params_schema: { type: 'object' }, result_schema: { type: 'string' } }];
const driver: Driver = {
  info: () => ({ id: 'shout', kind: 'capability', summary: 'shouts' }),
  channels: async () => [{ channel: 'shout:x', labels: [], detail: null }],
  ops: () => ops,
  send: async () => { throw new DriverError('Invalid', 'no messages'); },
  invoke: async (_addr, _op, args) => { console.log('invoked'); return String((args as { text?: string }).text).toUpperCase(); },
  recv: async () => ({ items: [], next_cursor: 0 }),
  doctor: async () => ({ driver: 'shout', ok: true, lines: [] }),
};
void serveDriver(driver);
console.log('a banner some library prints');
process.stdout.write('a raw write\\n');
`;

function tsc(file: string) {
  return spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--module',
      'node16',
      '--moduleResolution',
      'node16',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules/@types'),
      file,
    ],
    { cwd: project, encoding: 'utf8' },
  );
}

beforeAll(() => {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), 'driver-sdk'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  project = mkdtempSync(join(tmpdir(), 'uplink-sdk-user-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-driver', private: true, type: 'module', dependencies: { uplink: `file:${ROOT}` } }));
  const npm = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, encoding: 'utf8' });
  expect(npm.status, npm.stderr).toBe(0);
  writeFileSync(join(project, 'driver.ts'), DRIVER_TS);
  // The same driver, as the JavaScript Node runs (types stripped by hand).
  writeFileSync(
    join(project, 'driver.mjs'),
    DRIVER_TS.replace(', type Driver, type OpSpec', '')
      .replace(/: (OpSpec\[\]|Driver)/g, '')
      .replace(' as { text?: string }', ''),
  );
}, 60_000);

describe('uplink/driver-sdk from a project that depends on Uplink', () => {
  it('type-checks a driver against the contract declarations, and catches a wrong one', () => {
    const ok = tsc('driver.ts');
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    writeFileSync(join(project, 'wrong.ts'), DRIVER_TS.replace("'Invalid'", "'Bogus'"));
    const wrong = tsc('wrong.ts');
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toContain('"Bogus"');
  }, 60_000);

  it('serves over stdio with console output diverted to stderr', async () => {
    const client = DriverClient.spawn([process.execPath, join(project, 'driver.mjs')], { cwd: project });
    try {
      expect((await client.initialize()).extensions).toEqual(['shutdown']);
      expect(await client.call('invoke', { addr: 'x', op: 'shout', args: { text: 'hi' }, context: {} })).toBe('HI');
      expect(await client.call('shutdown')).toBeNull();
      expect(await client.exited()).toBe(0);
      expect(client.junk).toEqual([]);
      expect(client.stderr).toContain('a banner some library prints');
      expect(client.stderr).toContain('invoked');
      expect(client.stderr).toContain('a raw write');
    } finally {
      await client.close();
    }
  });
});
