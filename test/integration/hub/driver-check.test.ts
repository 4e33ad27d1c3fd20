/**
 * The driver conformance kit against real driver processes: drivers written from the protocol's
 * page pass every check that applies to them, and each broken driver fails exactly the check it
 * breaks, with the others passing.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, checkDriver } from '../../../src/main/hub/driver-admin/check';
import type { CheckName, CheckResult } from '../../../src/main/hub/driver-admin/check';
import { formatCheck } from '../../../src/main/edges/cli/driver-check';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external');
const broken = (name: string): string => join(FIXTURES, 'broken', `${name}.mjs`);

async function check(script: string, args: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<Record<CheckName, CheckResult>> {
  const results = await checkDriver({ command: [process.execPath, script, ...args], timeoutMs: 2000, env });
  expect(results.map((r) => r.name)).toEqual([...CHECK_NAMES]);
  return Object.fromEntries(results.map((r) => [r.name, r])) as Record<CheckName, CheckResult>;
}

const statuses = (r: Record<CheckName, CheckResult>): Record<string, string> => Object.fromEntries(Object.values(r).map((c) => [c.name, c.status]));

describe('uplink driver check', () => {
  it('passes the raw notes driver on every check that applies, and says why it skips the others', async () => {
    const r = await check(join(FIXTURES, 'notes-driver.mjs'));
    const lines = Object.values(r).map(formatCheck);
    expect(lines.filter((l) => !l.startsWith('pass '))).toEqual([
      'skip recv: a capability driver serves no recv',
      'skip deadline: the driver offers no read-only uplink-check-slow op when UPLINK_DRIVER_CHECK=1',
      'skip large_result: the driver offers no read-only uplink-check-large op when UPLINK_DRIVER_CHECK=1',
    ]);
    expect(r.errors.why).toBe(
      'uplink error [notes:NotFound]: no note named uplink-check-no-such-channel-' + process.pid + ' — hint: list notes with channel_list',
    );
    expect(r.invalid_args.why).toMatch(/relies on the hub's validation/);
    expect(r.malformed.why).toBe('answered -32700, -32601');
    expect(r.crash_restart.status).toBe('pass');
  });

  it("passes a driver that offers the kit's ops on every check, recv included", async () => {
    const r = await check(broken('base'), ['--kind', 'both']);
    expect(
      Object.values(r)
        .filter((c) => c.status !== 'pass')
        .map(formatCheck),
    ).toEqual([]);
    expect(r.cancel.why).toBe('cancelled uplink-check-slow in flight');
    expect(r.crash_restart.why).toBe('the call in flight failed as Unavailable, the next call restarted it');
    expect(r.large_result.why).toBe('8 MiB');
  });

  // [script, the check it breaks, why, its argv, its env, other checks the same flaw changes]
  const cases: Array<[string, CheckName, RegExp, string[]?, Record<string, string>?, Partial<Record<CheckName, string>>?]> = [
    ['bad-extension', 'handshake', /extensions lists "teleport", not a known extension/],
    ['info-mismatch', 'info', /info says "someone-else" \("capability"\), initialize said "probe"/],
    // Without a channel listing the kit has nothing to call (the hub would not list one either).
    ['channel-prefix', 'channels', /listed a channel outside probe: \("main"\)/, [], {}, { invalid_args: 'skip', deadline: 'skip', large_result: 'skip' }],
    ['op-name', 'ops', /the op name "Set_Value" cannot be offered/],
    ['schema-typo', 'schemas', /set's params_schema does not compile .* strict mode: .*requried/],
    ['mutating-missing', 'mutating', /^set does not declare "mutating"/],
    ['doctor-shape', 'doctor', /not a DoctorReport/],
    ['recv-shape', 'recv', /not a RecvBatch/, ['--kind', 'both']],
    ['error-no-data', 'errors', /carries no DriverError in its data/],
    ['invalid-args-crash', 'invalid_args', /echo with args its params_schema refuses .* failed as .*exited with code 1/],
    ['unknown-method-null', 'unknown_method', /answered the unknown method uplink-check-no-such-method with null/],
    ['malformed-exit', 'malformed', /fell over after a line that is not JSON/],
    // A call past its deadline is cancelled too, so the same flaw shows there.
    ['cancel-answered', 'cancel', /after a cancel/, [], {}, { deadline: 'fail' }],
    ['slow-blocking', 'deadline', /did not answer info while a slow call was in flight/],
    ['large-truncated', 'large_result', /answered 1048576 characters/],
    [
      'lock-file',
      'crash_restart',
      /did not start again after being killed: .*already running/,
      [],
      { PROBE_LOCK: join(tmpdir(), `uplink-check-lock-${process.pid}`) },
    ],
  ];

  it.each(cases)('%s fails exactly the check %s', { timeout: 30_000 }, async (script, name, why, args = [], env = {}, also = {}) => {
    const r = await check(broken(script), args, { ...process.env, ...env });
    try {
      const expected = Object.fromEntries(
        CHECK_NAMES.map((n) => [n, n === name ? 'fail' : (also[n] ?? (n === 'recv' && !args.includes('both') ? 'skip' : 'pass'))]),
      );
      expect(statuses(r)).toEqual(expected);
      expect(r[name].why).toMatch(why);
      expect(formatCheck(r[name])).toMatch(new RegExp(`^fail ${name}: .+ — hint: .+`));
    } finally {
      if (env.PROBE_LOCK) rmSync(env.PROBE_LOCK, { force: true });
    }
  });

  it('skips every other check when the driver cannot start', async () => {
    const r = await check(join(FIXTURES, 'notes-driver.mjs'), ['--speaks', '2']);
    expect(formatCheck(r.handshake)).toMatch(/^fail handshake: .*speaks driver protocol 2, this Uplink speaks 3 — hint: /);
    expect(
      Object.values(r)
        .slice(1)
        .every((c) => c.status === 'skip' && c.why === 'the driver did not start'),
    ).toBe(true);
  });

  it('says what to check when the command cannot be started at all', async () => {
    const results = await checkDriver({ command: ['/nonexistent/uplink-driver'], timeoutMs: 2000 });
    expect(formatCheck(results[0]!)).toBe(
      'fail handshake: the driver could not be started (ENOENT: /nonexistent/uplink-driver) — hint: check the command: its program must exist and be executable (an argv vector, no shell)',
    );
  });

  it("takes the driver's own id, and fails the handshake on one that cannot name a driver", async () => {
    expect((await check(join(FIXTURES, 'notes-driver.mjs'), ['--id', 'wiki'])).errors.why).toMatch(/^uplink error \[wiki:NotFound\]: /);
    const r = await check(join(FIXTURES, 'notes-driver.mjs'), ['--id', 'Wiki_Notes']);
    expect(formatCheck(r.handshake)).toBe(
      'fail handshake: the driver calls itself "Wiki_Notes", which is not a driver id — hint: an id is a lowercase letter, then lowercase letters, digits and "-"',
    );
  });
});
