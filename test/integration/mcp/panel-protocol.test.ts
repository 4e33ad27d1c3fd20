/**
 * docs/panel-protocol.md is enough to write a client: this test follows its steps only — a link
 * from `uplink panel-url --json`, the code traded at `POST /panel/session`, a raw `ws` socket with
 * the subprotocol, Origin and cookie, `hello`, then `listPendingApprovals` and `decide` — against a
 * real `uplink serve` with a real MCP agent waiting on a prompt. Every frame the hub sends is
 * checked against the published schema file, each result against its method's `$defs` entry.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildForTests, ROOT, runCli, startServe, tmpDataDir, waitFor } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';

let b: TestBuild;
const cleanup: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  b = await buildForTests();
});
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const schema = JSON.parse(readFileSync(join(ROOT, 'docs/panel-protocol.schema.json'), 'utf8')) as Record<string, unknown>;
const ajv = new Ajv2020({ strict: true });
ajv.addSchema(schema, 'panel');
const check = (def: string, value: unknown): void => {
  const validate = ajv.getSchema(`panel#/$defs/${def}`)!;
  expect(validate(value), `${def}: ${ajv.errorsText(validate.errors)}`).toBe(true);
};

type Frame = {
  t: string;
  id?: number | null;
  result?: unknown;
  error?: { code: string; message: string };
  event?: string;
  payload?: unknown;
  version?: string;
};

describe('the documented panel protocol, driven by a raw ws client', () => {
  it('signs in, lists a pending approval and approves it; the agent gets its result', async () => {
    const d = tmpDataDir();
    const served: Served = await startServe(b, d);
    cleanup.push(() => served.stop());

    // Signing in, step 1: a one-time link.
    const link = JSON.parse((await runCli(b, d, ['panel-url', '--json'])).stdout) as unknown;
    check('http.panelCode.response', link);
    const url = new URL((link as { panel_url: string }).panel_url);
    const code = url.hash.slice('#code='.length);
    // Step 2: the code for a session.
    const res = await fetch(new URL('/panel/session', url.origin), {
      method: 'POST',
      headers: { origin: url.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { key: string };
    check('http.panelSession.response', body);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toMatch(new RegExp(`^uplink_panel_${url.port}=`));
    // The code was good once.
    const again = await fetch(new URL('/panel/session', url.origin), {
      method: 'POST',
      headers: { origin: url.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(again.status).toBe(401);

    // Step 3: the socket; step 4: hello.
    const ws = new WebSocket(`ws://${url.host}/panel/ws`, 'uplink-panel.v1', { origin: url.origin, headers: { cookie } });
    cleanup.push(async () => ws.close());
    const frames: Frame[] = [];
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      check('ServerFrame', frame);
      frames.push(frame);
    });
    await new Promise<void>((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const send = (frame: unknown): void => {
      check('ClientFrame', frame);
      ws.send(JSON.stringify(frame));
    };
    const answer = (id: number): Promise<Frame> =>
      waitFor(() => frames.find((f) => (f.t === 'result' || f.t === 'error') && f.id === id), 20_000, `answer ${id}`);
    send({ t: 'hello', key: body.key });
    expect(await waitFor(() => frames.find((f) => f.t === 'ready'))).toMatchObject({ t: 'ready', version: expect.any(String) });

    // An agent asks for a mutating op while this panel is attached: a prompt waits.
    const agent = new Client({ name: 'script-test', version: '1.0.0' });
    const token = readFileSync(join(d, 'token'), 'utf8').trim();
    await agent.connect(new StreamableHTTPClientTransport(new URL(served.mcp_url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    cleanup.push(() => agent.close());
    const call = agent.callTool({ name: 'channel_act', arguments: { channel: 'test:alpha', op: 'write', args: { text: 'scripted' } } });
    const added = await waitFor(() => frames.find((f) => f.t === 'event' && f.event === 'approvalAdded'));
    check('event.approvalAdded', added.payload);

    send({ t: 'call', id: 1, method: 'listPendingApprovals', params: {} });
    const listed = await answer(1);
    expect(listed.t).toBe('result');
    check('call.listPendingApprovals.result', listed.result);
    const [prompt] = listed.result as Array<{ approval_id: string; op: string; channel: string }>;
    expect(prompt).toMatchObject({ op: 'write', channel: 'test:alpha', approval_id: (added.payload as { approval_id: string }).approval_id });

    send({ t: 'call', id: 2, method: 'decide', params: { approval_id: prompt!.approval_id, decision: 'once' } });
    const decided = await answer(2);
    check('call.decide.result', decided.result);
    expect(decided.result).toEqual({ accepted: true, granted: true });
    const resolved = await waitFor(() => frames.find((f) => f.t === 'event' && f.event === 'approvalResolved'));
    check('event.approvalResolved', resolved.payload);
    expect(resolved.payload).toMatchObject({
      approval_id: prompt!.approval_id,
      granted: true,
      decision: 'once',
      by: expect.stringMatching(/ via panel-session:/),
    });
    const result = (await call) as { isError?: boolean };
    expect(result.isError).toBeFalsy();

    // The first decision is final: a second one is answered, not accepted.
    send({ t: 'call', id: 3, method: 'decide', params: { approval_id: prompt!.approval_id, decision: 'deny' } });
    expect((await answer(3)).result).toMatchObject({ accepted: false, message: expect.stringContaining('already decided') });
    // Params the declaration refuses, and an unknown method: invalid_request errors for that id.
    send({ t: 'call', id: 4, method: 'decide', params: { approval_id: prompt!.approval_id, decision: 'yes' } });
    expect(await answer(4)).toMatchObject({ t: 'error', error: { code: 'invalid_request' } });
    ws.send(JSON.stringify({ t: 'call', id: 5, method: 'shutdown', params: {} }));
    expect(await answer(5)).toMatchObject({ t: 'error', error: { code: 'invalid_request', message: expect.stringContaining('unknown panel method') } });
  });

  it('refuses what the doc says it refuses: no subprotocol, a foreign Origin or Host, no cookie, a wrong key', async () => {
    const d = tmpDataDir();
    const served = await startServe(b, d);
    cleanup.push(() => served.stop());
    const origin = served.url;
    const host = new URL(origin).host;
    const status = (protocols: string[], headers: Record<string, string>): Promise<number> =>
      new Promise((resolve) => {
        const ws = new WebSocket(`ws://${host}/panel/ws`, protocols, { headers });
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('open', () => (ws.close(), resolve(101)));
        ws.once('error', () => resolve(-1));
      });
    expect(await status([], { origin })).toBe(400);
    expect(await status(['uplink-panel.v1'], {})).toBe(403);
    // A foreign Origin or Host (another site, DNS rebinding) is dropped before any answer.
    expect(await status(['uplink-panel.v1'], { origin: 'http://evil.example' })).toBe(-1);
    expect(await status(['uplink-panel.v1'], { origin, host: 'evil.example' })).toBe(-1);
    // The MCP token is not a session: the socket is closed with 4401.
    const token = readFileSync(join(d, 'token'), 'utf8').trim();
    const closed = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://${host}/panel/ws`, 'uplink-panel.v1', { origin, headers: { cookie: `uplink_panel_${new URL(origin).port}=${token}` } });
      ws.once('open', () => ws.send(JSON.stringify({ t: 'hello', key: token })));
      ws.once('close', (code) => resolve(code));
    });
    expect(closed).toBe(4401);
  });
});
