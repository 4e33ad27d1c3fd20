/**
 * JSON-RPC 2.0 errors exactly, on both transports, against the real binary: `uplink mcp` over
 * stdio (every line it cannot process is answered; a malformed notification is not) and
 * `uplink serve` over Streamable HTTP (the same codes, HTTP 400, the request's id when readable).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildForTests, cliEnv, startServe, tmpDataDir, waitFor, ROOT } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;

beforeAll(async () => {
  b = await buildForTests();
});

interface Reply {
  jsonrpc: string;
  id: number | string | null;
  result?: unknown;
  error?: { code: number; message: string };
}

/** What each malformed message must be answered with: the code and the id (undefined: no reply on stdio). */
const CASES: Array<{ what: string; body: string; code: number; id: number | string | null }> = [
  { what: 'truncated JSON', body: '{"jsonrpc":"2.0","id":7,"method":"tools/li', code: -32700, id: null },
  { what: 'an id without a method', body: '{"jsonrpc":"2.0","id":8}', code: -32600, id: 8 },
  { what: 'jsonrpc "1.0"', body: '{"jsonrpc":"1.0","id":9,"method":"tools/list"}', code: -32600, id: 9 },
  { what: 'no jsonrpc member', body: '{"id":"s10","method":"tools/list"}', code: -32600, id: 's10' },
  { what: 'params 5', body: '{"jsonrpc":"2.0","id":11,"method":"tools/list","params":5}', code: -32600, id: 11 },
  { what: 'params as an array', body: '{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1]}', code: -32602, id: 12 },
  { what: 'an id that is an object', body: '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', code: -32600, id: null },
  { what: 'a method that is a number', body: '{"jsonrpc":"2.0","id":13,"method":5}', code: -32600, id: 13 },
  { what: 'an unknown member', body: '{"jsonrpc":"2.0","id":14,"method":"tools/list","extra":1}', code: -32600, id: 14 },
  { what: 'a JSON scalar', body: '42', code: -32600, id: null },
  { what: 'an empty batch', body: '[]', code: -32600, id: null },
];

const initialize = (id: number): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-wire', version: '1' } },
  });

describe('uplink mcp (stdio): every line it cannot process is answered', () => {
  let child: ChildProcessWithoutNullStreams;
  const replies: Reply[] = [];

  beforeAll(async () => {
    child = spawn(process.execPath, [b.launcher, 'mcp'], {
      env: cliEnv(b, tmpDataDir()) as Record<string, string>,
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        replies.push(JSON.parse(buf.slice(0, i)) as Reply);
        buf = buf.slice(i + 1);
      }
    });
    child.stdin.write(`${initialize(1)}\n`);
    await waitFor(() => replies.find((r) => r.id === 1), 15_000, 'initialize');
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  });

  afterAll(() => {
    child?.stdin.end();
  });

  /** Sends `line`, then a tools/list with `probe` as id: the answers before the probe's are the line's. */
  const answersTo = async (line: string, probe: number): Promise<Reply[]> => {
    const from = replies.length;
    child.stdin.write(`${line}\n${JSON.stringify({ jsonrpc: '2.0', id: probe, method: 'tools/list' })}\n`);
    await waitFor(() => replies.slice(from).find((r) => r.id === probe), 15_000, `probe ${probe}`);
    return replies.slice(from).filter((r) => r.id !== probe);
  };

  it.each(CASES)('$what → $code with id $id, and the server keeps serving', async ({ body, code, id }) => {
    const answers = await answersTo(body, 1000 + CASES.findIndex((c) => c.body === body));
    expect(answers).toEqual([{ jsonrpc: '2.0', id, error: { code, message: expect.stringMatching(/^uplink error \[core:Invalid\]: .* — hint: /) } }]);
  });

  it('an unknown method is -32601 with its id', async () => {
    const answers = await answersTo('{"jsonrpc":"2.0","id":20,"method":"no/such"}', 2000);
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 20, error: expect.objectContaining({ code: -32601 }) }]);
  });

  it('tools/call without a name is -32602 (invalid params); a tool argument failing its schema is a tool error (isError)', async () => {
    const noName = await answersTo('{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"arguments":{}}}', 2001);
    expect(noName).toEqual([{ jsonrpc: '2.0', id: 21, error: expect.objectContaining({ code: -32602 }) }]);
    const badArgs = await answersTo('{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"channel_recv","arguments":{"cursor":-1}}}', 2002);
    expect(badArgs).toEqual([{ jsonrpc: '2.0', id: 22, result: expect.objectContaining({ isError: true }) }]);
  });

  it('a malformed notification gets no reply; a batch with a bad member is refused with an error per bad member', async () => {
    expect(await answersTo('{"jsonrpc":"1.0","method":"notifications/cancelled"}', 2003)).toEqual([]);
    expect(await answersTo('{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}', 2004)).toEqual([]);
    const batch = await answersTo('[{"jsonrpc":"2.0","id":30,"method":"tools/list"},{"jsonrpc":"2.0","id":31}]', 2005);
    // The batch's answer is one array line; its good request did not run.
    expect(batch).toEqual([[{ jsonrpc: '2.0', id: 31, error: expect.objectContaining({ code: -32600 }) }]]);
    expect(replies.some((r) => r.id === 30)).toBe(false);
  });

  it('a truncated last line before stdin closes is answered with -32700, then it exits', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const from = replies.length;
    child.stdin.end('{"jsonrpc":"2.0","id":40,"method":"tools/');
    expect(await exited).toBe(0);
    expect(replies.slice(from)).toEqual([{ jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32700 }) }]);
  });
});

describe('uplink serve (Streamable HTTP): the same codes with HTTP 400', () => {
  let served: Served;
  let token: string;
  let session: string;
  const headers = (): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2025-06-18',
    ...(session ? { 'mcp-session-id': session } : {}),
  });
  const post = (body: string): Promise<Response> => fetch(served.mcp_url, { method: 'POST', headers: headers(), body });

  beforeAll(async () => {
    const dir = tmpDataDir();
    served = await startServe(b, dir);
    token = readFileSync(join(dir, 'token'), 'utf8').trim();
    const init = await post(initialize(1));
    session = init.headers.get('mcp-session-id')!;
    await init.body?.cancel();
    expect(session).toBeTruthy();
    const ack = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(ack.status).toBe(202);
  });

  afterAll(async () => {
    await served?.stop();
  });

  it.each(CASES)('$what → HTTP 400, $code with id $id', async ({ body, code, id }) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id, error: { code, message: expect.stringMatching(/^uplink error \[core:Invalid\]: .* — hint: /) } });
  });

  it('before a session exists too: the envelope is checked first, with the id', async () => {
    const saved = session;
    session = '';
    try {
      const res = await post('{"jsonrpc":"2.0","id":1}');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ id: 1, error: { code: -32600 } });
    } finally {
      session = saved;
    }
  });

  it('a malformed notification is HTTP 400 with an error without id; a bad batch gets the errors of its bad members', async () => {
    const note = await post('{"jsonrpc":"1.0","method":"notifications/cancelled"}');
    expect(note.status).toBe(400);
    expect(await note.json()).toMatchObject({ id: null, error: { code: -32600 } });
    const batch = await post('[{"jsonrpc":"2.0","id":30,"method":"tools/list"},{"jsonrpc":"2.0","id":31}]');
    expect(batch.status).toBe(400);
    expect(await batch.json()).toEqual([{ jsonrpc: '2.0', id: 31, error: expect.objectContaining({ code: -32600 }) }]);
  });

  it('an unknown method is -32601 with its id (the request itself was valid: HTTP 200)', async () => {
    const res = await post('{"jsonrpc":"2.0","id":20,"method":"no/such"}');
    expect(res.status).toBe(200);
    const text = await res.text();
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:') && l.length > 6)
      .map((l) => JSON.parse(l.slice(5)) as Reply);
    expect(data.find((m) => m.id === 20)).toMatchObject({ error: { code: -32601 } });
  });
});
