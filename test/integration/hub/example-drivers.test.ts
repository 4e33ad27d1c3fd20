/**
 * The shipped example drivers, each admitted through `external_drivers` with its integrity like a
 * user would configure it: channels listed, a read runs, an append waits for the operator, an error
 * renders with the configured id.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { AgentIdentity, Hub } from '../../../src/main/hub';
import { tmpDataDir } from '../../fixtures/hub-build';
import { failure, nextPrompt } from './helpers';

const ROOT = join(__dirname, '..', '..', '..');
const agent: AgentIdentity = { kind: 'mcp', name: 'claude-code', agent_id: 'default' };
const open: Hub[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

const EXAMPLES: Array<[string, string, string[]]> = [
  ['the TypeScript example (uplink/driver-sdk)', join(ROOT, 'examples/drivers/notes-ts/driver.mjs'), [process.execPath]],
  ['the Python example (uplink_driver.py)', join(ROOT, 'examples/drivers/notes-py/driver.py'), ['/usr/bin/python3']],
];

describe.each(EXAMPLES)('%s through external_drivers', (_, file, runner) => {
  it('is admitted by its hash; reads run, appends wait for the operator, errors carry the configured id', async () => {
    const notes = mkdtempSync(join(tmpdir(), 'uplink-notes-'));
    writeFileSync(join(notes, 'todo.md'), 'buy milk\n');
    const dir = tmpDataDir();
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ external_drivers: [{ id: 'notes', command: [...runner, file, notes], integrity: { file, sha256 } }] }),
    );
    const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false });
    open.push(hub);

    expect((await hub.listChannels()).map((c) => c.channel)).toEqual(['notes:todo']);
    expect(await hub.invoke('notes:todo', 'read', {}, { agent, expect: 'read_only' })).toEqual({ text: 'buy milk\n' });

    hub.attachPanel();
    const prompt = nextPrompt(hub);
    const call = hub.invoke('notes:todo', 'append', { text: 'buy bread' }, { agent, expect: 'mutating' });
    const p = await prompt;
    expect(p).toMatchObject({ channel: 'notes:todo', op: 'append' });
    await hub.decide(p.approval_id, { kind: 'once', by: 'alice' });
    expect(await call).toMatchObject({ bytes: expect.any(Number) });
    expect(readFileSync(join(notes, 'todo.md'), 'utf8')).toBe('buy milk\nbuy bread\n');

    const missing = await failure(hub.invoke('notes:nope', 'read', {}, { agent, expect: 'read_only' }));
    expect(missing.rendered).toMatch(/^uplink error \[notes:NotFound\]: /);
    expect((await hub.driverStatus())[0]).toMatchObject({ id: 'notes', admission: 'admitted', state: 'running', protocol_version: '3' });
  });
});
