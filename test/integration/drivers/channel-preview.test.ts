/**
 * A channel page's preview, as the panel asks for it on opening the page, on an external driver:
 * it reads with the op's default args once they satisfy its schema, and otherwise calls nothing,
 * so opening a page never leaves a refused call in the audit in the operator's name.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Hub } from '../../../src/main/hub';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { tmpDataDir } from '../../fixtures/hub-build';

const DRIVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'external', 'notes-driver.mjs');
const SHA = createHash('sha256').update(readFileSync(DRIVER)).digest('hex');
const open: Hub[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

function hubWith(args: string[] = []): Hub {
  const dir = tmpDataDir();
  const entry = { id: 'notes', command: [process.execPath, DRIVER, ...args], integrity: { file: DRIVER, sha256: SHA } };
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ external_drivers: [entry] }));
  const hub = createHub({ dataDir: dir, drivers: [], watchConfig: false });
  open.push(hub);
  return hub;
}

function panel(hub: Hub) {
  return openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
}

describe("an external driver's channel page", () => {
  it('previews by reading with the args its read takes (none), and records no refused call', async () => {
    const hub = hubWith();
    const session = panel(hub);
    expect(await session.handlers.previewChannel({ channel: 'notes:todo' })).toEqual({ text: 'buy milk' });
    session.close();
    const entries = hub.queryAudit({ limit: 100 }).entries;
    expect(entries.filter((e) => e.type === 'rejected' || e.outcome === 'rejected')).toEqual([]);
    expect(entries.filter((e) => e.op !== undefined && e.op !== 'read' && e.channel)).toEqual([]);
  });

  it('does not read when its read needs args the schema gives no default for: it says so, and nothing reaches the driver or the audit', async () => {
    const hub = hubWith(['--named-read']);
    const session = panel(hub);
    const preview = await session.handlers.previewChannel({ channel: 'notes:todo' });
    expect(preview).toEqual({ error: expect.stringMatching(/^notes:todo's read needs args to preview \(.*line.*\) — hint: run read from the form below$/) });
    session.close();
    expect(hub.queryAudit({ limit: 100 }).entries.filter((e) => e.channel)).toEqual([]);
    expect(hub.driverTrace('notes', { method: 'invoke' })).toEqual([]);
  });
});
