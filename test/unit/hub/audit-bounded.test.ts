/** Audit entries within bounds: what is cut, what is left alone (uncopied), and that bounding twice changes nothing. */
import { describe, expect, it } from 'vitest';
import { boundedEntry, recorded } from '../../../src/main/hub/audit/bounded';
import type { AuditEntry } from '../../../src/main/hub';
import type { JsonValue } from '../../../src/main/kernel';

type Entry = Omit<AuditEntry, 'id'>;
const base: Entry = { at: 1, type: 'event', kind: 'succeeded', invocation_id: 'inv-1', channel: 'test:alpha', op: 'noop' };

function nested(depth: number): JsonValue {
  let v: JsonValue = 'leaf';
  for (let i = 0; i < depth; i++) v = { v };
  return v;
}

describe('boundedEntry', () => {
  it('returns an entry within bounds as itself, without serializing or copying it', () => {
    const entry: Entry = { ...base, args: { lines: 50, keys: ['Enter'] }, output: { ok: true, text: 'x'.repeat(2048), n: null } };
    expect(boundedEntry(entry)).toBe(entry);
  });

  it('cuts long text fields and the client identity, and leaves the entry it was given unchanged', () => {
    const entry: Entry = { ...base, message: 'm'.repeat(9000), agent: { kind: 'mcp', agent_id: 'a', name: 'n'.repeat(300) } };
    const out = boundedEntry(entry);
    expect(out).not.toBe(entry);
    expect(out.message).toMatch(/^m{8192}… \(cut, 9000 chars\)$/);
    expect(out.agent!.name).toMatch(/^n{256}… \(cut, 300 chars\)$/);
    expect(entry.message).toHaveLength(9000);
  });

  it('summarizes an output string past 2 KiB, and cuts args or output whose JSON passes 16 KiB', () => {
    const out = boundedEntry({ ...base, output: { png: 'A'.repeat(2049) } });
    expect(out.output).toEqual({ png: `${'A'.repeat(200)}… (2049 chars, not stored)` });
    const wide = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, 'v'.repeat(40)]));
    const cutArgs = boundedEntry({ ...base, args: wide }).args as string;
    expect(cutArgs.startsWith(JSON.stringify(wide).slice(0, 16 * 1024))).toBe(true);
    expect(cutArgs).toMatch(/… \(cut, \d+ chars\)$/);
  });

  it('keeps args whose JSON fits although a worst-case estimate of it would not', () => {
    // 3,000 plain characters: 3 KB of JSON, but 18 KB if every character needed an escape.
    const args = { text: 'a'.repeat(3000) };
    const entry: Entry = { ...base, args };
    expect(boundedEntry(entry).args).toBe(args);
  });

  it('cuts a value of a million items', () => {
    expect(boundedEntry({ ...base, args: new Array<number>(1_000_000).fill(1) }).args).toMatch(/… \(cut, 2000001 chars\)$/);
  });

  it('stores nesting up to 64 levels and replaces deeper nesting', () => {
    expect(boundedEntry({ ...base, args: nested(64) }).args).toEqual(nested(64));
    expect(boundedEntry({ ...base, args: nested(65) }).args).toBe('<not stored: nesting deeper than 64>');
    expect(boundedEntry({ ...base, output: nested(6000) }).output).toBe('<not stored: nesting deeper than 64>');
  });

  it('stores what is not plain JSON as JSON would have it, or says why not', () => {
    expect(boundedEntry({ ...base, output: { when: new Date(0) } as unknown as JsonValue }).output).toEqual({ when: new Date(0) });
    expect(boundedEntry({ ...base, args: { n: 1n } as unknown as JsonValue }).args).toMatch(/^<not stored: /);
  });

  it('changes nothing when an entry is bounded again (a cut text is longer than its limit)', () => {
    const wide = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, 'v'.repeat(40)]));
    const entries: Entry[] = [
      { ...base, message: 'm'.repeat(9000) },
      { ...base, output: wide },
      { ...base, output: { png: 'A'.repeat(1 << 20) } },
      { ...base, args: nested(100) },
      { ...base, args: { text: 'a'.repeat(3000) } },
    ];
    for (const entry of entries) {
      const once = boundedEntry(entry);
      expect(boundedEntry(once)).toBe(once);
    }
  });
});

describe('recorded', () => {
  it('records an agent that has only the record fields as it is: the entry is not copied', () => {
    const entry: Entry = { ...base, agent: { kind: 'mcp', agent_id: 'stdio', name: 'claude', version: '1' } };
    expect(recorded(entry)).toBe(entry);
  });

  it('drops what a live agent carries beyond the record (its session)', () => {
    const agent = { kind: 'mcp', agent_id: 'a', name: 'claude', session: 'sid-secret' } as AuditEntry['agent'];
    const entry: Entry = { ...base, agent };
    const out = recorded(entry);
    expect(out).not.toBe(entry);
    expect(out.agent).toEqual({ kind: 'mcp', agent_id: 'a', name: 'claude' });
    expect(entry.agent).toBe(agent);
  });
});
