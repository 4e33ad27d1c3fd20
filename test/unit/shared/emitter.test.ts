/** The one emitter: every listener hears, a throwing one included, and a disposed one hears nothing. */
import { describe, expect, it, vi } from 'vitest';
import { Emitter } from '../../../src/shared/emitter';

describe('Emitter', () => {
  it('a throwing listener keeps no other from hearing, nor reaches the emitter', () => {
    const errors: unknown[] = [];
    const e = new Emitter<number>({ onError: (error) => errors.push(error) });
    const heard: string[] = [];
    e.on((v) => heard.push(`a${v}`));
    e.on(() => {
      throw new Error('boom');
    });
    e.on((v) => heard.push(`c${v}`));
    expect(() => e.emit(1)).not.toThrow();
    expect(heard).toEqual(['a1', 'c1']);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('a throwing error report does not stop the others either', () => {
    const e = new Emitter<number>({
      onError: () => {
        throw new Error('report failed');
      },
    });
    const last = vi.fn();
    e.on(() => {
      throw new Error('boom');
    });
    e.on(last);
    expect(() => e.emit(2)).not.toThrow();
    expect(last).toHaveBeenCalledWith(2);
  });

  it('a disposed listener hears nothing, the others still do', () => {
    const e = new Emitter<string>();
    const gone = vi.fn();
    const stays = vi.fn();
    const off = e.on(gone);
    e.on(stays);
    off();
    off(); // twice is harmless
    e.emit('x');
    expect(gone).not.toHaveBeenCalled();
    expect(stays).toHaveBeenCalledWith('x');
    expect(e.size).toBe(1);
  });

  it('a listener disposed by an earlier one during an emit is not told', () => {
    const e = new Emitter<void>();
    const later = vi.fn();
    let offLater = (): void => undefined;
    e.on(() => offLater());
    offLater = e.on(later);
    e.emit();
    expect(later).not.toHaveBeenCalled();
  });

  it('each subscription is its own, even of the same function', () => {
    const e = new Emitter<number>();
    const l = vi.fn();
    const off = e.on(l);
    e.on(l);
    off();
    e.emit(3);
    expect(l).toHaveBeenCalledTimes(1);
  });

  it('clear drops every subscription', () => {
    const e = new Emitter<number>();
    const l = vi.fn();
    e.on(l);
    e.clear();
    e.emit(4);
    expect(l).not.toHaveBeenCalled();
    expect(e.size).toBe(0);
  });
});
