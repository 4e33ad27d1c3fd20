/** Driver-call deadlines on one shared timer. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from '../../../src/main/hub/channels/deadlines';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('Deadlines', () => {
  it('fires each deadline once, at its time, whatever order they were added in', () => {
    const d = new Deadlines();
    const fired: string[] = [];
    d.add(300, () => fired.push('300'));
    d.add(100, () => fired.push('100'));
    d.add(200, () => fired.push('200'));
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['100']);
    vi.advanceTimersByTime(200);
    expect(fired).toEqual(['100', '200', '300']);
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual(['100', '200', '300']);
    expect(d.size).toBe(0);
  });

  it('a cancelled deadline never fires; the others still do', () => {
    const d = new Deadlines();
    const fired: string[] = [];
    const cancelA = d.add(100, () => fired.push('a'));
    d.add(150, () => fired.push('b'));
    cancelA();
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual(['b']);
  });

  it('a deadline added later but due sooner fires on time', () => {
    const d = new Deadlines();
    const fired: number[] = [];
    d.add(90_000, () => fired.push(90_000));
    vi.advanceTimersByTime(1000);
    d.add(50, () => fired.push(50));
    vi.advanceTimersByTime(50);
    expect(fired).toEqual([50]);
  });

  it('a throwing handler does not keep the others from firing', () => {
    const d = new Deadlines();
    const fired: string[] = [];
    d.add(10, () => {
      throw new Error('boom');
    });
    d.add(10, () => fired.push('second'));
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['second']);
  });

  it('keeps the process alive only while a deadline is pending', () => {
    vi.useRealTimers();
    const d = new Deadlines();
    const cancel = d.add(60_000, () => undefined);
    const handles = (): number => (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const withPending = handles();
    cancel();
    expect(handles()).toBe(withPending - 1);
  });
});
