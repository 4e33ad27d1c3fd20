// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { signIn, takeCode } from '../../../src/renderer/api';

afterEach(() => {
  window.localStorage.clear();
  window.history.replaceState(null, '', '/');
  vi.unstubAllGlobals();
});

describe('panel sign-in in the browser', () => {
  it('takes the one-time code from the fragment, removes it from the address bar and history, never logs it', () => {
    const log = vi.spyOn(console, 'log');
    const error = vi.spyOn(console, 'error');
    window.history.replaceState(null, '', '/#code=s3cret-code&view=timeline');
    expect(takeCode()).toBe('s3cret-code');
    expect(window.location.href).not.toContain('s3cret');
    expect(window.location.hash).toBe('#view=timeline');
    expect(takeCode()).toBeUndefined();
    expect([...log.mock.calls, ...error.mock.calls].flat().join(' ')).not.toContain('s3cret');
  });

  it('keeps the session key the hub returns, for reloads and other tabs of this origin', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ key: 'k3y' }), { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    expect(await signIn('c0de')).toBeUndefined();
    expect(window.localStorage.getItem('uplink.panel-key')).toBe('k3y');
    expect(fetch).toHaveBeenCalledWith('/panel/session', expect.objectContaining({ method: 'POST', body: JSON.stringify({ code: 'c0de' }) }));
  });

  it("a refused code yields the hub's one-line error and keeps the old key", async () => {
    window.localStorage.setItem('uplink.panel-key', 'old');
    const message = 'uplink error [core:Rejected]: this panel link is unknown, already used or expired — hint: run `uplink panel-url`';
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { message } }), { status: 401 }));
    expect(await signIn('used')).toBe(message);
    expect(window.localStorage.getItem('uplink.panel-key')).toBe('old');
  });
});
