#!/usr/bin/env node
// `npm start`: build, then launch the Electron app (hub + MCP over HTTP + panel). Where Electron
// cannot start — no binary, no display — say why in one line and run the browser panel instead
// (`uplink serve`), which prints its one-time URL, except into a tmux pane the hub's tmux driver
// serves: any agent may read that pane, so there it opens the URL in the browser or says how to get it.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronBinary } from './electron-binary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// UPLINK_START_SKIP_BUILD=1: the e2e test starts from the build it already has.
if (process.env.UPLINK_START_SKIP_BUILD !== '1') {
  const built = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

function hasDisplay() {
  if (process.platform === 'win32' || process.platform === 'darwin') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

const electron = electronBinary();
const why = electron.bin ? (hasDisplay() ? undefined : 'no display server ($DISPLAY and $WAYLAND_DISPLAY are unset)') : electron.why;

const passthrough = (child) => {
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
};

if (!why) {
  passthrough(spawn(electron.bin, [root], { cwd: root, stdio: 'inherit' }));
} else {
  console.log(`uplink: not starting the Electron app: ${why} — starting the browser panel instead (\`uplink serve\` below says how to open it).`);
  const args = [join(root, 'bin/uplink'), 'serve', ...process.argv.slice(2)];
  passthrough(spawn(process.execPath, args, { cwd: root, stdio: 'inherit' }));
}
