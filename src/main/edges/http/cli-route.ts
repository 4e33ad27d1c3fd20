/**
 * `POST /cli`: the `uplink` CLI's commands, run in this hub. A person at a terminal is the
 * operator, so the route takes only `Authorization: Operator <operator.key>` (the key file is the
 * OS account's; neither the MCP token nor an agent's token opens it), only from this machine, and
 * never from a browser (any Origin is refused). The answer is JSON lines: `{"entry"}` for each log
 * entry, then one `{"result"}` or `{"error"}`; the status is 200 once the call was accepted, so a
 * connection that ends without a last line means the hub went away mid-call. Closing the connection
 * cancels the call.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HubError, isDriverError, toHubError } from '../../hub';
import type { CallerEnvironment, Hub } from '../../hub';
import { cliAgent, executeCli } from '../cli/execute';
import { MAX_CLI_BODY_BYTES, parseCliBody } from '../cli/request';
import type { CliRequest } from '../cli/request';
import { isLoopbackPeer } from './loopback';
import { connectionOwner } from './peer-process';

/** What the route needs from the server. */
export interface CliRouteOptions {
  hub: Hub;
  /** Constant-time check of the operator key. */
  keyMatches(candidate: string | undefined): boolean;
  /** The operator credential of an `Authorization` header, if it uses that scheme. */
  operatorCredential(header: string | undefined): string | undefined;
  /** Records a refused request in the audit (rate-limited by the server). */
  audit(message: string, err: HubError): void;
}

/** The error as one wire line (the CLI renders it the way the embedded hub would have). */
function errorLine(err: HubError): string {
  return `${JSON.stringify({ error: { driver: err.driver, kind: err.kind, message: err.message, ...(err.hint ? { hint: err.hint } : {}) } })}\n`;
}

function refuse(res: ServerResponse, status: number, err: HubError, headers: Record<string, string> = {}): HubError {
  res.writeHead(status, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', ...headers });
  res.end(errorLine(err));
  return err;
}

/** Reads a JSON body of at most `limit` bytes. */
async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HubError('core', 'Invalid', `request body over ${limit} bytes`, { hint: 'shorten the message or args' });
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HubError('core', 'Invalid', 'request body is not valid JSON', { hint: 'send {"command", "args", "user"} as `uplink` does' });
  }
}

/** The handler for `/cli`. */
export function createCliRoute(options: CliRouteOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    if (!isLoopbackPeer(req.socket.remoteAddress)) {
      return void refuse(
        res,
        403,
        new HubError('core', 'Rejected', 'CLI calls are taken from this machine only', { hint: 'run uplink on the machine that runs the hub' }),
      );
    }
    if (req.headers.origin !== undefined) {
      const err = refuse(res, 403, new HubError('core', 'Rejected', 'CLI calls are not taken from web pages', { hint: 'run `uplink` in a terminal' }));
      options.audit(`HTTP 403 on /cli: a request with Origin ${String(req.headers.origin).slice(0, 200)}`, err);
      return;
    }
    if (!options.keyMatches(options.operatorCredential(req.headers.authorization))) {
      const err = refuse(
        res,
        401,
        new HubError('core', 'Rejected', 'missing or wrong operator key', {
          hint: 'run uplink as the user that runs the hub; if the hub was restarted, try again',
        }),
        { 'www-authenticate': 'Operator' },
      );
      options.audit('HTTP 401 on /cli: no or a wrong operator key', err);
      return;
    }
    let body;
    try {
      body = parseCliBody(await readJson(req, MAX_CLI_BODY_BYTES));
    } catch (e) {
      const err = e instanceof HubError ? e : new HubError('core', 'Invalid', 'unreadable request body', { hint: 'retry' });
      return void refuse(res, err.message.startsWith('request body over') ? 413 : 400, err);
    }
    const request = { command: body.command, args: body.args } as CliRequest;
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    res.flushHeaders();
    const write = (line: string): void => {
      if (!res.destroyed) res.write(line);
    };
    // The CLI's `$TMUX_PANE` is a claim, like an agent's: the pane is found from the process that
    // holds this connection (searched for, as the CLI names no pid), or stays unknown.
    const pid = body.caller ? await connectionOwner(req.socket).catch(() => undefined) : undefined;
    const caller: CallerEnvironment = pid === undefined ? {} : { pid };
    try {
      const result = await executeCli(options.hub, request, {
        agent: { ...cliAgent(body.user), caller },
        signal: abort.signal,
        onEntry: (entry) => write(`${JSON.stringify({ entry })}\n`),
        onProgress: (progress) => write(`${JSON.stringify({ progress })}\n`),
      });
      write(`${JSON.stringify({ result: result ?? null })}\n`);
    } catch (e) {
      // The CLI user is the operator: an unexpected failure may show its own message.
      write(
        errorLine(
          isDriverError(e)
            ? toHubError(undefined, e)
            : new HubError('core', 'Upstream', e instanceof Error ? e.message : String(e), { hint: 'run `uplink doctor`' }),
        ),
      );
    }
    if (!res.destroyed) res.end();
  };
}
