/**
 * A fleet history message: what leaves a hub (no output, no detail, the agent as recorded, never
 * over 64 KiB — a big record loses its args, not its place) and what a reader accepts.
 */
import { headers } from 'nats';
import { describe, expect, it } from 'vitest';
import { MAX_HISTORY_BYTES, ackFailure, decodeFleetRecord, encodeFleetRecord } from '../../../src/main/hub/fleet/history';
import type { AuditEntry } from '../../../src/main/hub/types';

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: 7,
  at: 1_700_000_000_000,
  type: 'event',
  kind: 'succeeded',
  invocation_id: 'inv-1',
  channel: 'tmux:%1',
  op: 'read',
  agent: { kind: 'mcp', name: 'claude-code', agent_id: 'claude', session: 's1', caller: 'x' } as AuditEntry['agent'],
  state: 'succeeded',
  detail: 'provider said something only the operator may read',
  args: { lines: 20 },
  output: { text: 'the screen' },
  outcome: 'succeeded',
  ...over,
});
const bytes = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('fleet history messages', () => {
  it('carry the record without its output, its detail or the live identity’s extra fields', () => {
    const r = decodeFleetRecord(encodeFleetRecord('a', 5, entry()))!;
    expect(r).toMatchObject({
      hub: 'a',
      seq: 7,
      prev: 5,
      record: { id: 7, op: 'read', args: { lines: 20 }, agent: { kind: 'mcp', name: 'claude-code', agent_id: 'claude' } },
    });
    expect(r.record).not.toHaveProperty('output');
    expect(r.record).not.toHaveProperty('detail');
    expect(r.record.agent).toEqual({ kind: 'mcp', name: 'claude-code', agent_id: 'claude' });
  });

  it('replace the args of a record too big for a message with a note, and keep the record', () => {
    const data = encodeFleetRecord('a', 0, entry({ args: { text: 'x'.repeat(200_000) }, message: 'm'.repeat(100_000) }));
    expect(data.byteLength).toBeLessThanOrEqual(MAX_HISTORY_BYTES);
    const r = decodeFleetRecord(data)!;
    expect(r.record.args).toMatch(/^args left out of the fleet history: the record is \d+ bytes, over 65536; the full record is in hub a's audit$/);
    expect(r.record).toMatchObject({ id: 7, op: 'read', outcome: 'succeeded' });
    expect(r.record.message!.length).toBeLessThan(2000);
  });

  it('are refused when invalid, oversized, or when seq is not the record’s id or prev not before it', () => {
    const good = decodeFleetRecord(encodeFleetRecord('a', 5, entry()))!;
    expect(decodeFleetRecord(bytes(good))).toBeDefined();
    expect(decodeFleetRecord(bytes({ ...good, seq: 8 }))).toBeUndefined();
    expect(decodeFleetRecord(bytes({ ...good, prev: 7 }))).toBeUndefined();
    expect(decodeFleetRecord(bytes({ ...good, hub: 'Not A Name' }))).toBeUndefined();
    expect(decodeFleetRecord(bytes({ ...good, extra: 1 }))).toBeUndefined();
    expect(decodeFleetRecord(bytes({ ...good, record: { ...good.record, kind: 'exploded' } }))).toBeUndefined();
    expect(decodeFleetRecord(bytes({ ...good, record: { ...good.record, args: 'y'.repeat(MAX_HISTORY_BYTES) } }))).toBeUndefined();
    expect(decodeFleetRecord(new Uint8Array([0xff, 0xfe]))).toBeUndefined();
    // A newer hub's extra record fields are dropped, not a reason to refuse the record.
    expect(decodeFleetRecord(bytes({ ...good, record: { ...good.record, shiny: true } }))?.record).not.toHaveProperty('shiny');
  });

  it('count as published only when the history stream’s ack says it stored them (or had them already)', () => {
    const ack = (v: unknown) => ({ data: bytes(v), headers: undefined });
    expect(ackFailure(ack({ stream: 'UPLINK_HISTORY', seq: 12 }))).toBeUndefined();
    expect(ackFailure(ack({ stream: 'UPLINK_HISTORY', seq: 12, duplicate: true }))).toBeUndefined();
    expect(ackFailure(ack({ error: { code: 503, err_code: 10077, description: 'maximum messages exceeded' } }))).toBe(
      'JetStream refused the record: maximum messages exceeded (503)',
    );
    expect(ackFailure(ack({ stream: 'OTHER', seq: 1 }))).toBe('the ack names stream OTHER, not UPLINK_HISTORY');
    expect(ackFailure({ data: new Uint8Array(0), headers: headers(503, 'No Responders') })).toBe('no JetStream answered the publish (503)');
    expect(ackFailure({ data: new Uint8Array(0), headers: undefined })).toBe('an empty ack');
    expect(ackFailure({ data: new TextEncoder().encode('+OK'), headers: undefined })).toBe('an ack that is not JSON');
  });
});
