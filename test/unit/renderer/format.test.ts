/** Times in the panel: local, 24-hour, the date and the clock from the same time zone. */
import { afterEach, describe, expect, it } from 'vitest';
import { formatClock, formatDateTime } from '../../../src/renderer/format';

// Node's environment: changing TZ re-zones Date in this process (the renderer's types know no process).
declare const process: { env: Record<string, string | undefined> };

const tz = process.env.TZ;
afterEach(() => {
  if (tz === undefined) delete process.env.TZ;
  else process.env.TZ = tz;
});

describe('formatDateTime', () => {
  it('takes the date from the local day, like the clock (03:00 UTC is the evening before in Los Angeles)', () => {
    process.env.TZ = 'America/Los_Angeles';
    const at = Date.UTC(2026, 11, 2, 3, 0, 5);
    expect(formatDateTime(at)).toBe('2026-12-01 19:00:05');
  });

  it('uses a 24-hour clock', () => {
    process.env.TZ = 'UTC';
    expect(formatClock(Date.UTC(2026, 11, 2, 15, 4, 5, 60))).toBe('15:04:05.060');
  });
});
