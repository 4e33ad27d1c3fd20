/** `outcomeOf`: how a call ended, in one word, from the record that ends it or its invocation's records. */
import { describe, expect, it } from 'vitest';
import { OUTCOMES, outcomeOf } from '../../../src/shared/audit-record';

describe('outcomeOf', () => {
  it('names seven outcomes', () => {
    expect(OUTCOMES).toEqual(['succeeded', 'failed', 'denied', 'timed_out', 'cancelled', 'lost', 'rejected']);
  });

  it('reads the outcome the hub stored on the record', () => {
    expect(outcomeOf({ type: 'event', state: 'failed', error_code: 'policy_denied', outcome: 'timed_out' })).toBe('timed_out');
  });

  it('derives it for records stored without one', () => {
    expect(outcomeOf({ type: 'event', state: 'succeeded' })).toBe('succeeded');
    expect(outcomeOf({ type: 'event', state: 'cancelled' })).toBe('cancelled');
    expect(outcomeOf({ type: 'event', state: 'failed', error_code: 'provider_failed', error_kind: 'Upstream' })).toBe('failed');
    expect(outcomeOf({ type: 'event', state: 'failed', error_code: 'provider_failed', error_kind: 'Timeout' })).toBe('timed_out');
    expect(outcomeOf({ type: 'event', state: 'failed', error_code: 'policy_denied', error_kind: 'Rejected' })).toBe('denied');
    expect(outcomeOf({ type: 'rejected', state: 'rejected', error_code: 'policy_denied' })).toBe('denied');
    expect(outcomeOf({ type: 'rejected', state: 'rejected', error_code: 'input_schema_violation', error_kind: 'Invalid' })).toBe('rejected');
  });

  it('is undefined for records that do not end a call', () => {
    expect(outcomeOf({ type: 'event', state: 'running' })).toBeUndefined();
    expect(outcomeOf({ type: 'decision', authorized: 'operator' })).toBeUndefined();
    expect(outcomeOf([])).toBeUndefined();
    expect(
      outcomeOf([
        { type: 'event', state: 'accepted' },
        { type: 'event', state: 'running' },
      ]),
    ).toBeUndefined();
  });

  it("of an invocation's records: the one that ends it, a timed-out prompt's decision making a refusal timed_out", () => {
    const asked = [
      { type: 'event', state: 'accepted' },
      { type: 'decision', authorized: 'timeout' },
    ] as const;
    expect(outcomeOf([...asked, { type: 'event', state: 'failed', error_code: 'policy_denied' }])).toBe('timed_out');
    expect(
      outcomeOf([
        { type: 'event', state: 'accepted' },
        { type: 'decision', authorized: 'operator' },
        { type: 'event', state: 'failed', error_code: 'policy_denied' },
      ]),
    ).toBe('denied');
    // A decision recorded after the call ended (a prompt withdrawn on cancel) changes nothing.
    expect(
      outcomeOf([
        { type: 'event', state: 'cancelled' },
        { type: 'decision', authorized: 'cancelled' },
      ]),
    ).toBe('cancelled');
  });
});
