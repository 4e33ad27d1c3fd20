/**
 * The CLI's fast path: when a hub runs for the data directory, the command goes to its `POST /cli`
 * with the operator key (`<data dir>/operator.key`, which no agent is given) and the answer comes
 * back as JSON lines — `{"entry"}` for log lines, then one `{"result"}` or `{"error"}`. This module
 * and what it imports stay small: no hub, no drivers, no SQLite.
 *
 * Falling back to an embedded hub is safe only when the hub cannot have seen the call: no live hub
 * announced, or the connection refused. Once the request may have reached the hub, a broken
 * connection is an error, never a second run.
 */
import { request as httpRequest } from 'node:http';
import { DRIVER_ERROR_KINDS, HubError, pidAlive } from '../../hub';
import type { DriverErrorKind } from '../../hub';
import { readAnnouncement } from '../http/hub-json';
import { osUser } from './execute';
import { readOperatorKey } from './operator-key';
import { present, printEntry, printProgress } from './present';
import type { CliBody, CliCaller, CliRequest } from './request';

/** The route the hub serves CLI calls on. */
export const CLI_PATH = '/cli';

/** One line of the hub's answer. */
export interface CliAnswerLine {
  entry?: unknown;
  /** A step of a long command (`drivers restart`), before its result. */
  progress?: unknown;
  result?: unknown;
  error?: { driver?: unknown; kind?: unknown; message?: unknown; hint?: unknown };
}

/** The HubError a `{"error"}` line carries (anything malformed becomes a generic line). */
export function errorFromWire(e: CliAnswerLine['error'], fallback: () => HubError): HubError {
  if (!e || typeof e.message !== 'string' || typeof e.driver !== 'string' || !(DRIVER_ERROR_KINDS as readonly unknown[]).includes(e.kind)) return fallback();
  return new HubError(e.driver, e.kind as DriverErrorKind, e.message, typeof e.hint === 'string' ? { hint: e.hint } : {});
}

/** Where this CLI runs, as the hub's drivers need it (an embedded hub reads the same variables). */
function callerEnv(): CliCaller | undefined {
  const caller: CliCaller = {};
  if (process.env.TMUX) caller.tmux = process.env.TMUX;
  if (process.env.TMUX_PANE) caller.tmux_pane = process.env.TMUX_PANE;
  return Object.keys(caller).length ? caller : undefined;
}

/**
 * Runs the request in the running hub and prints its answer; resolves with the exit code, or with
 * undefined when no hub runs (the caller then embeds one). Ctrl-C closes the connection, which
 * cancels the call in the hub. `show` replaces the printing when a command reads an answer itself.
 */
export async function forward(dataDir: string, request: CliRequest, json: boolean, show: typeof present = present): Promise<number | undefined> {
  const hub = readAnnouncement(dataDir);
  if (!hub || !pidAlive(hub.pid)) return undefined;
  const key = readOperatorKey(dataDir, hub.pid);
  const caller = callerEnv();
  const body: CliBody = { command: request.command, args: request.args, user: osUser(), ...(caller ? { caller } : {}) };
  const payload = JSON.stringify(body);
  const url = new URL(CLI_PATH, hub.url);
  const lost = (why: string): HubError =>
    new HubError('core', 'Unavailable', `the hub at ${url.origin} stopped answering before ${request.command} finished (${why})`, {
      hint: 'the call may have run: check `uplink log`; restart `uplink serve` or the desktop app',
    });

  return new Promise<number | undefined>((resolve, reject) => {
    let connected = false;
    let settled = false;
    const finish = (outcome: { code?: number; error?: unknown }): void => {
      if (settled) return;
      settled = true;
      process.removeListener('SIGINT', interrupt);
      process.removeListener('SIGTERM', interrupt);
      if (outcome.error !== undefined) reject(outcome.error);
      else resolve(outcome.code);
    };
    function interrupt(signal: NodeJS.Signals): void {
      req.destroy();
      // Stopping `log --follow` is how it ends; anything else was cut short.
      finish({ code: request.command === 'log' ? 0 : signal === 'SIGINT' ? 130 : 143 });
    }
    process.on('SIGINT', interrupt);
    process.on('SIGTERM', interrupt);

    const req = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Operator ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      // Refused before a byte went out: the hub is gone and nothing ran.
      if (!connected && e.code === 'ECONNREFUSED') finish({ code: undefined });
      else finish({ error: lost(e.code ?? e.message) });
    });
    req.on('response', (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      const refused = (): HubError =>
        new HubError('core', res.statusCode === 404 ? 'Unavailable' : 'Rejected', `the hub at ${url.origin} refused the call (HTTP ${res.statusCode})`, {
          hint: res.statusCode === 404 ? 'it is an older Uplink: restart it with this version' : 'run uplink as the user that runs the hub',
        });
      const line = (text: string): void => {
        let msg: CliAnswerLine;
        try {
          msg = JSON.parse(text) as CliAnswerLine;
        } catch {
          return finish({ error: res.statusCode === 200 ? lost('an unreadable answer') : refused() });
        }
        if (msg.entry !== undefined && res.statusCode === 200) printEntry(msg.entry as Parameters<typeof printEntry>[0], json);
        else if (typeof msg.progress === 'string' && res.statusCode === 200) printProgress(msg.progress, json);
        else if (msg.error !== undefined) finish({ error: errorFromWire(msg.error, refused) });
        else if ('result' in msg && res.statusCode === 200) {
          try {
            finish({ code: show(request, msg.result, json) });
          } catch (e) {
            finish({ error: e });
          }
        } else finish({ error: refused() });
      };
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0 && !settled; nl = buffer.indexOf('\n')) {
          const text = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (text.trim()) line(text);
        }
      });
      res.on('end', () => {
        if (!settled && buffer.trim()) line(buffer);
        if (!settled) finish({ error: res.statusCode === 200 ? lost('the answer ended early') : refused() });
      });
      res.on('error', () => finish({ error: lost('connection reset') }));
      res.on('close', () => finish({ error: lost('connection closed') }));
    });
    req.end(payload);
  });
}
