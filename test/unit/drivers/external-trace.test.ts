/** A driver's protocol trace: its last 1000 messages, oldest first, summaries written when read. */
import { describe, expect, it } from 'vitest';
import { Trace } from '../../../src/main/drivers/external/trace';

describe('Trace', () => {
  it('keeps the last 1000 messages oldest first as it turns, filters them, and writes a deferred summary once', () => {
    const trace = new Trace();
    let written = 0;
    for (let i = 1; i <= 2500; i++)
      trace.record({
        dir: 'out',
        type: 'request',
        method: i % 2 ? 'invoke' : 'ping',
        id: i,
        bytes: 10,
        summary: i % 3 ? `m${i}` : () => (written++, `lazy ${i}`),
      });
    // Nothing written for the messages recorded (most traces are never read).
    expect(written).toBe(0);
    const all = trace.list();
    expect(all).toHaveLength(1000);
    expect(all[0]!.id).toBe(1501);
    expect(all.at(-1)!.id).toBe(2500);
    expect(all.map((t) => t.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => 1501 + i));
    expect(all.find((t) => t.id === 1503)!.summary).toBe('lazy 1503');
    expect(written).toBe(333);
    trace.list();
    expect(written).toBe(333);
    expect(trace.list({ method: 'ping', after: 2490 }).map((t) => t.id)).toEqual([2492, 2494, 2496, 2498, 2500]);
    expect(trace.list({ limit: 2 }).map((t) => t.id)).toEqual([2499, 2500]);
    expect(trace.list({ id: 2000 })).toHaveLength(1);
  });
});
