/** The hub gives a burst's heap back once it goes quiet: one compacting GC per burst, only when idle. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compactWhenIdle } from '../../../src/main/edges/http/idle-memory';

afterEach(() => vi.useRealTimers());

function run(shares: number[], back: (n: number) => boolean = () => true): number {
  vi.useFakeTimers();
  let compactions = 0;
  const queue = [...shares];
  const stop = compactWhenIdle({ periodMs: 1000, utilization: () => queue.shift() ?? 0, compact: () => back(++compactions) });
  vi.advanceTimersByTime(shares.length * 1000);
  stop();
  return compactions;
}

describe('compactWhenIdle', () => {
  it('compacts once, in the second quiet period in a row after a busy one', () => {
    expect(run([0.5, 0.6, 0.1, 0.01, 0.0, 0.0])).toBe(1);
    expect(run([0.5, 0.01, 0.0])).toBe(1);
  });

  it('does not compact in one quiet period between busy ones (the burst still holds its connections)', () => {
    expect(run([0.9, 0.0, 0.9, 0.0, 0.9])).toBe(0);
  });

  it('never compacts a hub that was never busy, nor while it stays half busy', () => {
    expect(run([0.0, 0.01, 0.1, 0.0])).toBe(0);
    expect(run([0.5, 0.1, 0.1, 0.1])).toBe(0);
  });

  it('tries again each quiet period until the heap is back, at most five times a burst', () => {
    expect(run([0.9, 0, 0, 0, 0, 0, 0], (n) => n === 3)).toBe(3);
    expect(run([0.9, 0, 0, 0, 0, 0, 0, 0, 0, 0], () => false)).toBe(5);
  });

  it("does not count a compaction's own time as load: the retry comes the next period", () => {
    // The clock stays real: each compaction takes 100 ms of a 1 s period, 10% busy were it counted.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let compactions = 0;
    const shares = [0.9, 0, 0, 0.1, 0.1, 0];
    const stop = compactWhenIdle({
      periodMs: 1000,
      utilization: () => shares.shift() ?? 0,
      compact: () => {
        compactions++;
        const until = performance.now() + 100;
        while (performance.now() < until);
        return compactions === 3;
      },
    });
    vi.advanceTimersByTime(6000);
    stop();
    expect(compactions).toBe(3);
  });

  it('compacts again after the next burst', () => {
    expect(run([0.9, 0.0, 0.0, 0.9, 0.01, 0.0])).toBe(2);
  });

  it("V8's own compaction runs in this process and gives a sparse heap back", () => {
    // A heap of which one object in 20 survives: what a burst of calls leaves in old space.
    const kept: object[] = [];
    let all: object[] | null = [];
    for (let i = 0; i < 400_000; i++) {
      const o = { i, s: `x${i}` };
      all.push(o);
      if (i % 20 === 0) kept.push(o);
    }
    all = null;
    const before = process.memoryUsage().heapTotal;
    vi.useFakeTimers();
    const shares = [0.9, 0, 0];
    const stop = compactWhenIdle({ periodMs: 1000, utilization: () => shares.shift() ?? 0 });
    vi.advanceTimersByTime(3000);
    stop();
    expect(process.memoryUsage().heapTotal).toBeLessThan(before);
    expect(kept).toHaveLength(20_000);
  });
});
