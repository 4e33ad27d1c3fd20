/** Panel payload checks: the first failure named by pointer, keyword and property, never by value. */
import { describe, expect, it } from 'vitest';
import { checkRequest } from '../../../src/main/edges/panel/validate';

describe('panel payload checks', () => {
  it('name the missing or unexpected property, and never echo a value', () => {
    expect(checkRequest('decide', { decision: 'once' })).toEqual({
      ok: false,
      message: 'invalid params for decide: / lacks the property "approval_id" (required) — hint: see PANEL_CALLS.decide.request',
    });
    const pasted = { approval_id: 'a1', decision: 'once', password: 'hunter2-secret' };
    const extra = checkRequest('decide', pasted);
    expect(extra).toEqual({
      ok: false,
      message: 'invalid params for decide: / has the property "password", which is not allowed (additionalProperties) — hint: see PANEL_CALLS.decide.request',
    });
    expect(checkRequest('decide', { approval_id: 'a1', decision: 'hunter2-secret' })).toMatchObject({
      ok: false,
      message: expect.not.stringContaining('hunter2'),
    });
    expect(checkRequest('decide', { approval_id: 'a1', decision: 'once' })).toMatchObject({ ok: true });
  });
});
