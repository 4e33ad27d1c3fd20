/**
 * The hub's memory follows its need: once a call's result is delivered, nothing in the hub (the
 * kernel's record, the call's facts, the timeline's queue) keeps the output.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../../src/main/kernel/types';
import { createTestDriver } from '../../fixtures/test-driver';
import { closeHubs, openHub } from './helpers';

afterEach(closeHubs);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heldBytes(): number {
  for (let i = 0; i < 4; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

const MB = 1024 * 1024;

describe('hub memory', () => {
  it('holds none of the outputs it has delivered (200 calls of 1 MB each)', async () => {
    let serial = 0;
    const driver = Object.assign(createTestDriver(), {
      invoke: async (): Promise<JsonValue> => ({ text: `${++serial}`.padEnd(MB, 'x') }),
    });
    const { hub } = openHub({ driver });
    const agent = { kind: 'mcp' as const, name: 'memory-test' };
    await hub.invoke('test:alpha', 'echo', { text: 'warm' }, { agent });
    const idle = heldBytes();
    for (let i = 0; i < 200; i++) {
      const out = (await hub.invoke('test:alpha', 'echo', { text: 'x' }, { agent })) as { text: string };
      expect(out.text.length).toBe(MB);
    }
    // Kept outputs would be 200 MiB; what is left is the hub's own bookkeeping.
    expect((heldBytes() - idle) / MB).toBeLessThan(16);
    // The audit still says what each call returned, summarized.
    const [last] = hub.queryAudit({ state: 'succeeded', limit: 1 }).entries;
    expect(JSON.stringify(last!.output)).toContain('chars, not stored');
  });
});
