/**
 * Which tmux servers the CLI treats as served (it prints no secret into their panes), and how it
 * would open a browser instead: never through a shell.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { servedPane, servedSockets } from '../../../src/main/edges/cli/served-pane';
import { browserOpener } from '../../../src/main/edges/cli/open-browser';

const dataDir = (config?: object, hub?: object): string => {
  const dir = mkdtempSync(join(tmpdir(), 'uplink-served-'));
  if (config) writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  if (hub) writeFileSync(join(dir, 'hub.json'), JSON.stringify(hub));
  return dir;
};

describe('served tmux servers', () => {
  it('a configured socket is the only one served', () => {
    expect(servedSockets(dataDir({ tmux: { socket: '/tmp/x/sock' } }), { TMUX: '/tmp/other,1,0' })).toEqual(['/tmp/x/sock']);
  });

  it('without one: the server of the running hub, of this command and the default one', () => {
    const dir = dataDir({}, { url: 'http://127.0.0.1:1', pid: 1, started_at: '', tmux_socket: '/tmp/hub/sock' });
    expect(servedSockets(dir, { TMUX: '/tmp/mine/sock,1,0', TMUX_TMPDIR: '/tmp/td' })).toEqual([
      '/tmp/hub/sock',
      '/tmp/mine/sock',
      `/tmp/td/tmux-${process.getuid!()}/default`,
    ]);
  });

  it('$TMUX naming a served server is a served pane; one naming another server is not', async () => {
    const dir = dataDir({ tmux: { socket: '/tmp/served/sock' } });
    expect(await servedPane(dir, { TMUX: '/tmp/served/sock,42,0', TMUX_PANE: '%7' })).toEqual({ socket: '/tmp/served/sock', pane: '%7' });
    // Not served, and (under the test runner) no standard stream is a terminal to look up.
    expect(await servedPane(dir, { TMUX: '/tmp/private/sock,42,0', TMUX_PANE: '%7' })).toBeUndefined();
  });
});

describe('the browser opener', () => {
  it('xdg-open with a display, open on macOS, rundll32 on Windows — a program and arguments, no shell', () => {
    expect(browserOpener({ DISPLAY: ':0' }, 'linux')).toEqual({ command: 'xdg-open', args: [] });
    expect(browserOpener({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toEqual({ command: 'xdg-open', args: [] });
    expect(browserOpener({}, 'linux')).toEqual({ why: expect.stringContaining('no display') });
    expect(browserOpener({}, 'darwin')).toEqual({ command: 'open', args: [] });
    expect(browserOpener({}, 'win32')).toEqual({ command: 'rundll32', args: ['url.dll,FileProtocolHandler'] });
  });
});
