/**
 * The driver `load.bench.ts` hands `uplink serve` (through the test launcher): one channel whose
 * `read` answers like a 50-line screen, fresh text per call, and keeps nothing (the test fixture
 * driver records every call for its assertions, which a long load run would count as the hub's).
 */
import type { Driver } from '../src/main/drivers/contract';
import type { JsonValue } from '../src/main/kernel/types';

const obj = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

let serial = 0;
/** About 4 KB: 50 lines of 80 columns, numbered so no two answers are the same string. */
function screen(): string {
  const n = ++serial;
  return Array.from({ length: 50 }, (_, i) => `${String(n).padStart(8, '0')} line ${String(i).padStart(2, '0')}: ${'x'.repeat(62)}`).join('\n');
}

export function createDrivers(): Driver[] {
  return [
    {
      info: () => ({ id: 'load', kind: 'both', summary: 'load benchmark driver' }),
      channels: async () => [{ channel: 'load:screen', labels: [], detail: {} }],
      ops: () => [
        {
          op: 'read',
          summary: 'A screen read',
          mutating: false,
          params_schema: obj({ lines: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } }),
          result_schema: obj({ text: { type: 'string' } }, ['text']),
        },
      ],
      send: async () => ({ delivered: true, correlation_id: 'c', injected_at: new Date().toISOString() }),
      invoke: async (): Promise<JsonValue> => ({ text: screen() }),
      recv: async () => ({ items: [], next_cursor: 0 }),
      doctor: async () => ({ driver: 'load', ok: true, lines: [] }),
    },
  ];
}
