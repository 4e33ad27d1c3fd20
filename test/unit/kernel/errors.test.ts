import { describe, expect, it } from 'vitest';
import { SoftwareUseError } from '../../../src/main/kernel';

describe('SoftwareUseError', () => {
  it('is an Error carrying code, message and retryable', () => {
    const e = new SoftwareUseError('policy_denied', 'denied — hint: ask');
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('SoftwareUseError');
    expect(e.code).toBe('policy_denied');
    expect(e.retryable).toBe(false);
    expect(e.toWire()).toEqual({ code: 'policy_denied', message: 'denied — hint: ask', retryable: false });
  });

  it('resource_exhausted is retryable by default', () => {
    expect(new SoftwareUseError('resource_exhausted', 'full').retryable).toBe(true);
  });

  it('round-trips through the wire form', () => {
    const wire = { code: 'internal' as const, message: 'x', retryable: true };
    expect(SoftwareUseError.fromWire(wire).toWire()).toEqual(wire);
  });

  it('the wire form is plain JSON without a stack', () => {
    const wire = new SoftwareUseError('internal', 'x').toWire();
    expect(JSON.parse(JSON.stringify(wire))).toEqual(wire);
    expect(Object.keys(wire).sort()).toEqual(['code', 'message', 'retryable']);
  });
});
