import { describe, expect, it } from 'vitest';
import { DESKTOP_OPS } from '../../../src/main/drivers/desktop/ops';
import { parseStartTime } from '../../../src/main/drivers/desktop/proc';

describe('desktop driver parts', () => {
  it('reads field 22 of /proc/<pid>/stat even when the command name holds spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[19] = '987654';
    expect(parseStartTime(`1234 (evil ) (name) ${fields.join(' ')}`)).toBe(987654);
    expect(parseStartTime('garbage')).toBeUndefined();
  });

  it("offers exactly the issue's ops with their interaction kinds and mutability", () => {
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
});
