/**
 * Where the CLI may print a live secret (a one-time sign-in link, a new agent token): not into a
 * pane of a tmux server the hub's tmux driver serves, whose screen any agent may read (the
 * observer tier's `read`). This process is in such a pane when its `$TMUX` names that server, or
 * when a terminal its standard streams write to is one of that server's panes (`#{pane_tty}`).
 *
 * The served server: `tmux.socket` in config.json (or its last good copy) when set, as the driver
 * reads it; otherwise, as the driver falls back, the server the running hub was started in
 * (hub.json's `tmux_socket`), the one this command runs in (a hub started from here would serve
 * it) and tmux's default server — all three, since which one a hub started later serves depends on
 * where it starts.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { isatty } from 'node:tty';
import { join, resolve } from 'node:path';
import { dataPaths, HubError } from '../../hub';
import { readAnnouncement } from '../http/hub-json';

/** A served tmux pane this process runs in or writes to. */
export interface ServedPane {
  /** The server's socket path. */
  socket: string;
  /** The pane's id (`%3`), when known. */
  pane?: string;
}

/** How long one `tmux list-panes` may take. */
const TMUX_TIMEOUT_MS = 3000;

/** tmux's default socket: `$TMUX_TMPDIR` (else /tmp), `tmux-<uid>/default`. */
function defaultSocket(env: NodeJS.ProcessEnv): string {
  return join(env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, 'default');
}

/** A path as the file system names it (symlinks resolved), for comparing sockets. */
function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** `tmux.socket` of a config file, if it sets one. */
function configuredSocket(path: string): string | undefined {
  try {
    const socket = (JSON.parse(readFileSync(path, 'utf8')) as { tmux?: { socket?: unknown } }).tmux?.socket;
    return typeof socket === 'string' && socket !== '' ? socket : undefined;
  } catch {
    return undefined;
  }
}

/** The sockets of the tmux servers the hub of `dataDir` serves or would serve (see the file comment). */
export function servedSockets(dataDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const config = dataPaths(dataDir).config;
  const configured = [configuredSocket(config), configuredSocket(config.replace(/\.json$/, '.last-good.json'))];
  const fallback = [readAnnouncement(dataDir)?.tmux_socket, env.TMUX?.split(',')[0], defaultSocket(env)];
  const sockets = configured.some(Boolean) ? configured : fallback;
  return [...new Set(sockets.filter((s): s is string => !!s).map(canonical))];
}

/** The terminals this process's standard streams are (e.g. /dev/pts/3). */
async function ownTerminals(): Promise<string[]> {
  const fds = [0, 1, 2].filter((fd) => isatty(fd));
  if (fds.length === 0) return [];
  if (process.platform === 'linux') {
    const ttys = fds.flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return [];
      }
    });
    if (ttys.length) return [...new Set(ttys)];
  }
  // Elsewhere: the controlling terminal, as ps names it (ttys003 → /dev/ttys003).
  const name = await run('ps', ['-o', 'tty=', '-p', String(process.pid)], process.env).catch(() => '');
  const tty = name.trim();
  return tty && tty !== '?' && tty !== '??' ? [tty.startsWith('/') ? tty : `/dev/${tty}`] : [];
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile(command, args, { env, timeout: TMUX_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout) => (error ? reject(error) : resolveRun(stdout)));
  });
}

/** The panes of the server at `socket` with their terminals (none when it does not run or tmux is missing). */
async function panesOf(socket: string, env: NodeJS.ProcessEnv): Promise<Array<{ tty: string; pane: string }>> {
  const clean = { ...env };
  delete clean.TMUX;
  delete clean.TMUX_PANE;
  const out = await run('tmux', ['-S', socket, 'list-panes', '-a', '-F', '#{pane_tty} #{pane_id}'], clean).catch(() => '');
  return out
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter(([tty, pane]) => tty && pane)
    .map(([tty, pane]) => ({ tty: tty!, pane: pane! }));
}

/** The served tmux pane this process is in or writes to, if any (see the file comment). */
export async function servedPane(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<ServedPane | undefined> {
  const sockets = servedSockets(dataDir, env);
  const own = env.TMUX?.split(',')[0];
  if (own && sockets.includes(canonical(own))) return { socket: canonical(own), ...(env.TMUX_PANE ? { pane: env.TMUX_PANE } : {}) };
  const ttys = await ownTerminals();
  if (ttys.length === 0) return undefined;
  for (const socket of sockets) {
    const hit = (await panesOf(socket, env)).find((p) => ttys.includes(p.tty));
    if (hit) return { socket, pane: hit.pane };
  }
  return undefined;
}

/** How a refusal names the pane: `tmux pane %3 (server /tmp/tmux-1000/default)`. */
export function paneName(p: ServedPane): string {
  return `tmux pane ${p.pane ?? '(unknown)'} (server ${p.socket})`;
}

/** Why a sign-in link or a token is not printed here, as one error line with what to do instead. */
export function withheld(what: string, pane: ServedPane, instead: string): HubError {
  return new HubError('core', 'Rejected', `${what} is not printed into ${paneName(pane)}: any agent may read that pane`, { hint: instead });
}
