import { describe, expect, it } from 'vitest';
import { ATTACH_ENV, attachRequest, checkAttachUrl, launchMode, stdioCommand, userArgs } from '../../../src/main/electron/launch-mode';

describe('launch mode from argv', () => {
  it('a packaged app started as `Uplink mcp` serves MCP on stdio', () => {
    expect(launchMode(['/opt/Uplink/uplink', 'mcp'], false)).toBe('mcp');
  });

  it('an unpackaged app (`electron . mcp`) skips the app path', () => {
    expect(launchMode(['/x/electron', '.', 'mcp'], true)).toBe('mcp');
    expect(launchMode(['/x/electron', 'mcp'], true)).toBe('panel');
  });

  it('Chromium switches before the command do not hide it', () => {
    expect(launchMode(['/opt/Uplink/uplink', '--no-sandbox', '--enable-logging', 'mcp'], false)).toBe('mcp');
    expect(userArgs(['/opt/Uplink/uplink', '--no-sandbox', 'mcp', 'extra'], false)).toEqual(['mcp', 'extra']);
  });

  it('no command, another command, or `mcp` not first opens the panel', () => {
    expect(launchMode(['/opt/Uplink/uplink'], false)).toBe('panel');
    expect(launchMode(['/opt/Uplink/uplink', 'serve'], false)).toBe('panel');
    expect(launchMode(['/opt/Uplink/uplink', 'open', 'mcp'], false)).toBe('panel');
    expect(launchMode(['/opt/Uplink/uplink', '--mcp'], false)).toBe('panel');
  });
});

describe("attach mode: a window on a running hub's panel", () => {
  const URL_ = 'http://127.0.0.1:7420/#code=s3cret';

  it('`--attach <url>`, `--attach=<url>` or the environment variable attach', () => {
    expect(launchMode(['/x/electron', '.', '--attach', URL_], true)).toBe('attach');
    expect(attachRequest(['/x/electron', '.', '--attach', URL_])).toBe(URL_);
    expect(launchMode(['/opt/Uplink/uplink', `--attach=${URL_}`], false)).toBe('attach');
    expect(attachRequest(['/opt/Uplink/uplink', `--attach=${URL_}`])).toBe(URL_);
    expect(launchMode(['/x/electron', '.'], true, { [ATTACH_ENV]: URL_ })).toBe('attach');
    expect(attachRequest(['/x/electron', '.'], { [ATTACH_ENV]: URL_ })).toBe(URL_);
  });

  it('argv wins over the environment; an empty variable is no request', () => {
    expect(attachRequest(['/x/electron', '.', '--attach', 'http://localhost:1/'], { [ATTACH_ENV]: URL_ })).toBe('http://localhost:1/');
    expect(launchMode(['/x/electron', '.'], true, { [ATTACH_ENV]: '' })).toBe('panel');
  });

  it('`mcp` still serves MCP; the attach URL is not mistaken for a command', () => {
    expect(launchMode(['/opt/Uplink/uplink', 'mcp'], false, { [ATTACH_ENV]: URL_ })).toBe('mcp');
    expect(launchMode(['/x/electron', '.', '--attach', 'mcp'], true)).toBe('attach');
  });

  it('accepts http(s) on 127.0.0.1, [::1] and localhost', () => {
    expect(checkAttachUrl(URL_)).toEqual({ url: URL_, origin: 'http://127.0.0.1:7420' });
    expect(checkAttachUrl('http://[::1]:7420/#code=x')).toMatchObject({ origin: 'http://[::1]:7420' });
    expect(checkAttachUrl('https://localhost:7420/')).toMatchObject({ origin: 'https://localhost:7420' });
  });

  it('refuses any other host, scheme, credentials or garbage in one line that never repeats the code', () => {
    for (const bad of [
      'http://example.com/#code=s3cret',
      'http://192.168.1.5:7420/#code=s3cret',
      'http://127.0.0.1.nip.io:7420/#code=s3cret',
      'file:///etc/passwd#code=s3cret',
      'javascript:alert(1)//s3cret',
      'ws://127.0.0.1:7420/#code=s3cret',
      'http://user:s3cret@127.0.0.1:7420/',
      'not a url s3cret',
      '',
    ]) {
      const got = checkAttachUrl(bad);
      expect(got).toHaveProperty('error');
      const error = (got as { error: string }).error;
      expect(error).toMatch(/^uplink error \[core:Invalid\]: .* — hint: /);
      expect(error).not.toContain('\n');
      expect(error).not.toContain('s3cret');
    }
  });
});

describe('the stdio command the settings view shows', () => {
  it('a packaged app runs itself with `mcp` (bin/uplink inside the asar cannot run)', () => {
    expect(stdioCommand({ packaged: true, execPath: '/opt/Uplink/uplink', cliPath: '/opt/Uplink/resources/app.asar/bin/uplink' })).toEqual([
      '/opt/Uplink/uplink',
      'mcp',
    ]);
  });

  it('an AppImage names the image file, not its temporary mount', () => {
    expect(stdioCommand({ packaged: true, execPath: '/tmp/.mount_UplinkX/uplink', appImage: '/home/a/Apps/Uplink.AppImage' })).toEqual([
      '/home/a/Apps/Uplink.AppImage',
      'mcp',
    ]);
  });

  it('from a checkout it is bin/uplink mcp', () => {
    expect(stdioCommand({ packaged: false, execPath: '/x/electron', cliPath: '/src/uplink/bin/uplink' })).toEqual(['/src/uplink/bin/uplink', 'mcp']);
    expect(stdioCommand({ packaged: false, execPath: '/x/electron' })).toEqual(['uplink', 'mcp']);
  });
});
