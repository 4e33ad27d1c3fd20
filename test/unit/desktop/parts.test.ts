import { describe, expect, it } from 'vitest';
import type { DriverError } from '../../../src/main/drivers/contract';
import { checkArgs } from '../../../src/main/drivers/desktop/args';
import { DESKTOP_OPS, opSpec } from '../../../src/main/drivers/desktop/ops';
import { parseStartTime } from '../../../src/main/drivers/desktop/proc';

describe('desktop driver parts', () => {
  it('reads field 22 of /proc/<pid>/stat even when the command name holds spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[19] = '987654';
    expect(parseStartTime(`1234 (evil ) (name) ${fields.join(' ')}`)).toBe(987654);
    expect(parseStartTime('garbage')).toBeUndefined();
  });

  it('offers exactly the issue\'s ops with their interaction kinds and mutability', () => {
    expect(DESKTOP_OPS.map((o) => [o.op, o.mutating, o.interactions])).toEqual([
      ['observe', false, ['semantic_ui', 'visual_ui']],
      ['tree', false, ['semantic_ui']],
      ['find', false, ['semantic_ui']],
      ['screenshot', false, ['visual_ui']],
      ['activate', true, ['semantic_ui']],
      ['set-text', true, ['semantic_ui']],
      ['click', true, ['visual_ui']],
      ['type', true, ['semantic_ui', 'visual_ui']],
      ['key', true, ['visual_ui']],
    ]);
  });

  it('turns bad args into Invalid before anything reaches the helper', () => {
    const bad = (op: string, args: unknown): DriverError => {
      try {
        checkArgs(opSpec(op)!, args as never);
      } catch (e) {
        return e as DriverError;
      }
      throw new Error('no error');
    };
    expect(bad('click', { x: 1 }).message).toBe('bad args for click: missing y');
    expect(bad('click', { x: 1.5, y: 2 }).kind).toBe('Invalid');
    expect(bad('click', { x: 1, y: 2, button: 'fourth' }).message).toMatch(/button must be one of/);
    expect(bad('type', { text: '' }).message).toMatch(/too short/);
    expect(bad('key', { chord: 'a', extra: 1 }).message).toMatch(/unknown argument extra/);
    expect(bad('observe', [1]).message).toMatch(/must be an object/);
    expect(checkArgs(opSpec('observe')!, null)).toEqual({});
  });
});
