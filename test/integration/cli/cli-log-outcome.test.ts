/**
 * `uplink log --state <outcome>`: the calls an agent made through a hub, picked by how they ended,
 * the human line naming the outcome and `--json` carrying it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import { createTestDriver } from '../../fixtures/test-driver';
import { buildForTests, runCli, tmpDataDir } from '../../fixtures/hub-build';
import type { TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
let dir: string;

beforeAll(async () => {
  b = await buildForTests();
  dir = tmpDataDir();
  // An agent's calls: one runs, one is denied (no panel to ask, and refused at once then), one fails in the driver.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ approvals: { when_no_panel: 'deny' } }));
  const hub = createHub({ dataDir: dir, drivers: [createTestDriver()] });
  const agent = { kind: 'mcp' as const, agent_id: 'builder', name: 'claude-code', session: 's1' };
  await hub.invoke('test:alpha', 'echo', { text: 'hi' }, { agent });
  await hub.invoke('test:alpha', 'write', { text: 'x' }, { agent }).catch(() => undefined);
  await hub.invoke('test:alpha', 'fail', {}, { agent }).catch(() => undefined);
  await hub.close();
});

describe('uplink log --state', () => {
  it('--state denied shows the denied call, its line naming the outcome', async () => {
    const r = await runCli(b, dir, ['log', '--state', 'denied']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    // Named by how it ended (the panel's word), not by its record's kind (`rejected`).
    expect(lines[0]).toMatch(/#\d+\s+denied\s+test:alpha\s+write\s+agent=mcp:builder .*\s+error=Rejected: /);
    expect(lines[0]).not.toMatch(/\srejected\s|outcome=/);
  });

  it('--json carries the outcome; each outcome picks its own calls', async () => {
    const pick = async (state: string) =>
      (await runCli(b, dir, ['log', '--json', '--state', state])).stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { op: string; outcome: string });
    expect((await pick('denied')).map((e) => [e.op, e.outcome])).toEqual([['write', 'denied']]);
    expect((await pick('succeeded')).map((e) => [e.op, e.outcome])).toEqual([['echo', 'succeeded']]);
    expect((await pick('failed')).map((e) => [e.op, e.outcome])).toEqual([['fail', 'failed']]);
    expect(await pick('timed_out')).toEqual([]);
  });

  it('an unknown outcome is one line, the hint listing the outcomes', async () => {
    const r = await runCli(b, dir, ['log', '--state', 'running']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'uplink error [core:Invalid]: --state cannot be "running" — hint: use one of succeeded, failed, denied, timed_out, cancelled, lost, rejected; see `uplink --help`\n',
    );
  });
});
