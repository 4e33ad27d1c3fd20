import { describe, expect, it } from 'vitest';
import { launchMode, stdioCommand, userArgs } from '../../../src/main/electron/launch-mode';

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

describe('the stdio command the settings view shows', () => {
  it('a packaged app runs itself with `mcp` (bin/uplink inside the asar cannot run)', () => {
    expect(stdioCommand({ packaged: true, execPath: '/opt/Uplink/uplink', cliPath: '/opt/Uplink/resources/app.asar/bin/uplink' })).toEqual(['/opt/Uplink/uplink', 'mcp']);
  });

  it('an AppImage names the image file, not its temporary mount', () => {
    expect(stdioCommand({ packaged: true, execPath: '/tmp/.mount_UplinkX/uplink', appImage: '/home/a/Apps/Uplink.AppImage' })).toEqual(['/home/a/Apps/Uplink.AppImage', 'mcp']);
  });

  it('from a checkout it is bin/uplink mcp', () => {
    expect(stdioCommand({ packaged: false, execPath: '/x/electron', cliPath: '/src/uplink/bin/uplink' })).toEqual(['/src/uplink/bin/uplink', 'mcp']);
    expect(stdioCommand({ packaged: false, execPath: '/x/electron' })).toEqual(['uplink', 'mcp']);
  });
});
