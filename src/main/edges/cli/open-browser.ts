/**
 * Opens a URL in the user's browser without printing it: `xdg-open` (with a display), `open`
 * (macOS) or `rundll32 url.dll,FileProtocolHandler` (Windows), each run with an argument vector,
 * never through a shell, detached from this terminal.
 */
import { spawn } from 'node:child_process';

/** How long an opener may take to fail before it counts as having opened the page. */
const SETTLE_MS = 5000;

/** The program and arguments that open a URL here, or why there is none. */
export function browserOpener(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): { command: string; args: string[] } | { why: string } {
  if (platform === 'darwin') return { command: 'open', args: [] };
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler'] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { why: 'no display to open a browser on ($DISPLAY and $WAYLAND_DISPLAY are unset)' };
  return { command: 'xdg-open', args: [] };
}

/** Opens `url` in the browser; resolves with why it could not, or undefined once it did. */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const opener = browserOpener(env);
  if ('why' in opener) return Promise.resolve(opener.why);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (why: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.unref();
      resolve(why);
    };
    const child = spawn(opener.command, [...opener.args, url], { stdio: 'ignore', detached: true, shell: false, env });
    // Still running after a while: a browser started in the foreground, which is an open page.
    const timer = setTimeout(() => settle(undefined), SETTLE_MS);
    child.once('error', (e: NodeJS.ErrnoException) =>
      settle(e.code === 'ENOENT' ? `${opener.command} is not installed` : `${opener.command} failed (${e.message})`),
    );
    child.once('exit', (code, signal) => settle(code === 0 ? undefined : `${opener.command} could not open a browser (${signal ?? `exit ${code}`})`));
  });
}
