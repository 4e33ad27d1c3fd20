/**
 * The operator looking at a window (the Channels view's live frames, several a second) is not an
 * action: the frame comes from the driver's preview, like an approval prompt's picture, and no
 * audit row is written per frame. Running an op from the panel still is recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHub } from '../../../src/main/hub/hub-core';
import type { Driver, OpSpec } from '../../../src/main/drivers';
import type { JsonValue } from '../../../src/main/kernel';
import type { Hub } from '../../../src/main/hub';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import { createTestDriver, TEST_OPS } from '../../fixtures/test-driver';
import { tmpDataDir } from '../../fixtures/hub-build';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const SHOT: OpSpec = { op: 'screenshot', summary: 'A picture', mutating: false, params_schema: { type: 'object' }, result_schema: { type: 'object' } };
const open: Hub[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

/** A window-like driver: a read-only screenshot, no read; its preview shows the window. */
function windowDriver(): Driver & { shots: number } {
  const base = createTestDriver();
  const d = {
    ...base,
    shots: 0,
    ops: () => [...TEST_OPS.filter((o) => o.op !== 'read'), SHOT],
    invoke: async (addr: string, op: string, args: JsonValue, ...rest: unknown[]): Promise<JsonValue> => {
      if (op === 'screenshot') {
        d.shots++;
        return { png_base64: PNG };
      }
      return (base.invoke as (...a: unknown[]) => Promise<JsonValue>)(addr, op, args, ...rest);
    },
    preview: async (_addr: string, op: string) => ({ text: `${op} preview`, image_png: PNG, warnings: ['covered by 0x2'] }),
  };
  return d;
}

describe('live frames of a window', () => {
  it('come from the driver preview, with its warnings, and write no audit row', async () => {
    const driver = windowDriver();
    const hub = createHub({ dataDir: tmpDataDir(), drivers: [driver], watchConfig: false });
    open.push(hub);
    const session = openPanelSession(hub, { version: '0', user: 'alice' }, createBroadcast(), () => undefined, Date.now());
    const before = hub.queryAudit({ limit: 1000 }).entries.length;
    for (let i = 0; i < 5; i++) {
      expect(await session.handlers.previewChannel({ channel: 'test:alpha' })).toMatchObject({ image_png: PNG, warnings: ['covered by 0x2'] });
    }
    expect(hub.queryAudit({ limit: 1000 }).entries.length).toBe(before);
    expect(driver.shots).toBe(0);
    session.close();
  });
});
