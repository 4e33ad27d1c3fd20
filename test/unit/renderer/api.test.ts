// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { takeToken } from '../../../src/renderer/api';

afterEach(() => {
  window.sessionStorage.clear();
  window.history.replaceState(null, '', '/');
});

describe('token handling in the browser panel', () => {
  it('takes the token from the fragment, removes it from the address bar and history, never logs it', () => {
    const log = vi.spyOn(console, 'log');
    const error = vi.spyOn(console, 'error');
    window.history.replaceState(null, '', '/#token=s3cret-token&view=timeline');
    expect(takeToken()).toBe('s3cret-token');
    expect(window.location.href).not.toContain('s3cret');
    expect(window.location.hash).toBe('#view=timeline');
    expect([...log.mock.calls, ...error.mock.calls].flat().join(' ')).not.toContain('s3cret');
  });

  it('keeps the token for a reload of the same tab only (sessionStorage)', () => {
    window.history.replaceState(null, '', '/#token=abc');
    takeToken();
    expect(window.location.hash).toBe('');
    expect(takeToken()).toBe('abc');
    window.sessionStorage.clear();
    expect(takeToken()).toBe('');
  });
});
