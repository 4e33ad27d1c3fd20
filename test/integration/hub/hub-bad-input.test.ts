/**
 * Every bad input of the issue, one by one, against the in-process hub with a real SQLite store:
 * the caller gets the exact rendered error, the hub keeps serving, and the audit records it —
 * before the error reaches the caller (read back from the database file by a second connection).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { HubError } from '../../../src/main/hub';
import { auditRowsIfKilledNow, closeHubs, failure, openHub } from './helpers';
import { waitFor } from '../../fixtures/hub-build';

const agent: AgentIdentity = { kind: 'mcp', name: 'bad-agent', version: '0.0.1' };

afterEach(closeHubs);

/** Rows of the audit file as another process would see them right now (no flush by the hub). */
function rowsOnDisk(dir: string): Array<Record<string, unknown>> {
  const db = new Database(join(dir, 'audit.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM entries ORDER BY id').all() as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

async function stillServes(hub: Hub): Promise<void> {
  expect(await hub.invoke('test:alpha', 'noop', {}, { agent })).toEqual({ ok: true });
}

describe('bad input: a clear error, the hub keeps serving, the audit records it', () => {
  const cli: AgentIdentity = { kind: 'cli', name: 'uplink-cli', user: 'alice' };
  const cases: Array<{ what: string; call: (hub: Hub) => Promise<unknown>; error: RegExp; row: Record<string, unknown> }> = [
    {
      what: 'args failing params_schema',
      call: (hub) => hub.invoke('test:alpha', 'echo', { text: 5 }, { agent }),
      error: /^uplink error \[test:Invalid\]: args for echo do not match its params_schema: .*\/args\/text.* — hint: see the op's params_schema/,
      row: { type: 'rejected', op: 'echo', error_kind: 'Invalid', error_code: 'input_schema_violation' },
    },
    {
      what: 'unknown channel',
      call: (hub) => hub.invoke('test:nope', 'noop', {}, { agent }),
      error: /^uplink error \[test:NotFound\]: no channel test:nope — hint: list channels with the channel_list tool or `uplink channels`$/,
      row: { type: 'rejected', channel: 'test:nope', error_kind: 'NotFound' },
    },
    {
      what: 'unknown driver',
      call: (hub) => hub.invoke('ghost:1', 'noop', {}, { agent }),
      error: /^uplink error \[ghost:NotFound\]: no driver named ghost/,
      row: { type: 'rejected', channel: 'ghost:1', error_kind: 'NotFound' },
    },
    {
      what: 'wrong tool class (mutating op through channel_observe)',
      call: (hub) => hub.invoke('test:alpha', 'write', { text: 'x' }, { agent, expect: 'read_only' }),
      error: /^uplink error \[test:Invalid\]: write is mutating; call it with channel_act, not channel_observe — hint: use the channel_act tool$/,
      row: { type: 'rejected', op: 'write', error_kind: 'Invalid' },
    },
    {
      what: 'wrong tool class (read-only op through channel_act)',
      call: (hub) => hub.invoke('test:alpha', 'noop', {}, { agent, expect: 'mutating' }),
      error: /^uplink error \[test:Invalid\]: noop is read-only; call it with channel_observe, not channel_act — hint: use the channel_observe tool$/,
      row: { type: 'rejected', op: 'noop', error_kind: 'Invalid' },
    },
    {
      what: 'an op name that does not exist',
      call: (hub) => hub.invoke('test:alpha', 'teleport', {}, { agent }),
      error: /^uplink error \[test:NotFound\]: test has no op "teleport" \(ops: noop, echo/,
      row: { type: 'rejected', op: 'teleport', error_kind: 'NotFound' },
    },
    {
      what: 'a message over 64 KiB',
      call: (hub) => hub.send('test:alpha', { message: 'x'.repeat(64 * 1024 + 1) }, { agent: cli }),
      error: /^uplink error \[test:Invalid\]: the send payload is \d+ bytes; the limit is 65536 bytes \(64 KiB\) — hint: split it/,
      row: { type: 'rejected', op: 'send', error_kind: 'Invalid' },
    },
    {
      what: 'a driver that throws',
      call: (hub) => hub.invoke('test:alpha', 'crash', {}, { agent }),
      error: /^uplink error \[test:Upstream\]: the driver failed unexpectedly — hint: /,
      row: { type: 'event', kind: 'failed', op: 'crash', error_kind: 'Upstream', error_code: 'provider_failed' },
    },
    {
      what: 'a driver that hangs past its timeout',
      call: (hub) => hub.invoke('test:alpha', 'hang', {}, { agent }),
      error: /^uplink error \[test:Timeout\]: test\.hang did not finish within \d+ s — hint: /,
      row: { type: 'event', kind: 'failed', op: 'hang', error_kind: 'Timeout' },
    },
    {
      what: 'a driver whose output breaks its result_schema',
      call: (hub) => hub.invoke('test:alpha', 'bad-output', {}, { agent }),
      error: /^uplink error \[test:Invalid\]: the driver's result for bad-output breaks its result_schema: .*\/ok/,
      row: { type: 'event', kind: 'failed', op: 'bad-output', error_kind: 'Invalid', error_code: 'output_schema_violation' },
    },
  ];

  for (const c of cases) {
    it(`${c.what}`, async () => {
      const { hub, dir } = openHub({ driverTimeoutMs: 200 });
      const err = await failure(c.call(hub));
      expect(err).toBeInstanceOf(HubError);
      expect(err.rendered).toMatch(c.error);
      // Recorded before the caller heard of it: a kill -9 now would not lose it.
      const row = auditRowsIfKilledNow(dir).find((r) => Object.entries(c.row).every(([k, v]) => r[k] === v));
      expect(row, `audit row ${JSON.stringify(c.row)}`).toBeDefined();
      expect(row!.message).toBe(err.message);
      expect(row).toMatchObject({ agent_name: expect.any(String) });
      // …and in the file itself within a batch (20 ms), for `uplink log` and the panel's history.
      await waitFor(() => rowsOnDisk(dir).find((r) => Object.entries(c.row).every(([k, v]) => r[k] === v)), 2000, 'committed audit row');
      await stillServes(hub);
    });
  }

  it('a corrupt config file', async () => {
    const { hub, dir } = openHub();
    writeFileSync(join(dir, 'config.json'), '{ "approvals": { "rules": [ }');
    const doctor = await waitFor(
      async () => {
        const d = await hub.doctor();
        return d.config.ok ? undefined : d;
      },
      5000,
      'config error',
    );
    expect(doctor.ok).toBe(false);
    expect(doctor.config.error).toMatch(/config\.json: invalid JSON at line 1, column \d+ .*\(the last good config stays in use\)$/);
    await waitFor(() => rowsOnDisk(dir).find((r) => r.op === 'config' && r.type === 'rejected' && r.error_kind === 'Invalid'), 5000, 'audited config error');
    await stillServes(hub);
  });
});
