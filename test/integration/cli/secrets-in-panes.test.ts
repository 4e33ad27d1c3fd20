/**
 * The attack replayed: an agent with only its MCP token reads every pane of the tmux server the hub
 * serves (the observer tier's `read`), looking for a one-time sign-in link or a token someone's
 * `uplink` printed there. `uplink serve` runs in a pane of a private tmux server named in
 * config.json; the operator's shell is another pane. Inside a served pane no command prints a live
 * secret (it refuses with a hint, opens the browser, or writes a 0600 file), and a secret that gets
 * into a pane anyway is masked in what the agent reads, in the audit and in the panel's timeline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { auditFiles, runCli, tmpDataDir, waitFor, type TestBuild } from '../../fixtures/hub-build';
import { eventually, TmuxTestServer } from '../../fixtures/tmux-server';
import { buildTmuxHub, writeConfig } from '../tmux/hub-helpers';
import { findRunningHub } from '../../../src/main/edges/http/hub-json';
import { SECRET_MARKER } from '../../../src/main/hub/credentials';
import { PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import type { ServerFrame } from '../../../src/shared/panel-ws';

let b: TestBuild;
const cleanup: Array<() => unknown> = [];
beforeEach(async () => {
  b = await buildTmuxHub();
}, 120_000);
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A live one-time code anywhere in a text. */
const CODE_LINK = /#code=[\w-]{20,}/;

interface Stage {
  server: TmuxTestServer;
  dataDir: string;
  hubPane: string;
  shell: string;
  url: string;
  /** Runs `uplink <args>` typed into the operator's shell pane; resolves with its exit code. */
  inShell(args: string, env?: string): Promise<number>;
  /** Runs `uplink <args>` outside tmux (pipes, no $TMUX): how an operator's other terminal gets a link. */
  outside(...args: string[]): ReturnType<typeof runCli>;
}

/**
 * A private tmux server (no display in its panes) whose socket config.json names; `uplink serve`
 * typed into its first pane, an operator shell in a second.
 */
async function stage(): Promise<Stage> {
  const env = TmuxTestServer.cleanEnv();
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const server = TmuxTestServer.start('sh', env);
  cleanup.push(() => server.stop());
  const dataDir = tmpDataDir('uplink-secrets-');
  writeConfig(dataDir, { tmux: { socket: server.socket } });
  const hubPane = server.firstPane;
  const vars = `UPLINK_DATA_DIR='${dataDir}' UPLINK_TEST_TMUX_SOCKET='${server.socket}'`;
  server.typeLine(hubPane, `${vars} '${process.execPath}' '${b.launcher}' serve --port 0`);
  const running = await waitFor(() => findRunningHub(dataDir), 30_000, 'uplink serve in a pane');
  cleanup.push(async () => {
    server.tmux('send-keys', '-t', hubPane, 'C-c');
    await waitFor(() => !existsSync(join(dataDir, 'hub.json')) || undefined, 10_000, 'serve to stop').catch(() => undefined);
  });
  const shell = server.split('sh');
  let runs = 0;
  const inShell = async (args: string, extra = ''): Promise<number> => {
    const mark = `exit-${++runs}=`;
    server.typeLine(shell, `${extra} ${vars} '${process.execPath}' '${b.launcher}' ${args}; echo "${mark}$?"`);
    const line = await eventually(() => new RegExp(`^${mark}(\\d+)$`, 'm').exec(server.capture(shell, 500)), 30_000, `uplink ${args} in the shell pane`);
    return Number(line[1]);
  };
  return { server, dataDir, hubPane, shell, url: running.url, inShell, outside: (...args) => runCli(b, dataDir, args) };
}

/** An agent holding only the MCP token (`token`, default the data dir's). */
async function agent(s: Stage, token = readFileSync(join(s.dataDir, 'token'), 'utf8').trim()) {
  const client = new Client({ name: 'curious-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', s.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  cleanup.push(() => client.close());
  /** A tool's answer: its text and its structured content, as the agent gets both. */
  const call = async (name: string, args: Record<string, unknown>): Promise<string> => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return [(r.content[0] as { text: string }).text, JSON.stringify(r.structuredContent ?? null)].join('\n');
  };
  const text = async (name: string, args: Record<string, unknown>): Promise<string> =>
    ((await client.callTool({ name, arguments: args })) as CallToolResult).content.map((c) => (c as { text: string }).text).join('\n');
  return {
    text,
    /** What it sees of every pane: channel_list, then a `read` of each. */
    async readEveryPane(): Promise<string> {
      const listed = ((await client.callTool({ name: 'channel_list', arguments: {} })) as CallToolResult).structuredContent as {
        channels: Array<{ channel: string }>;
      };
      const channels = listed.channels;
      const texts = [await call('channel_list', {})];
      for (const { channel } of channels.filter((c) => c.channel.startsWith('tmux:')))
        texts.push(await call('channel_observe', { channel, op: 'read', args: { lines: 500 } }));
      expect(texts.length).toBeGreaterThan(2);
      return texts.join('\n');
    },
  };
}

/** Signs in to the panel with a one-time code and calls one panel method over its WebSocket. */
async function panelCall(url: string, code: string, method: string, params: unknown): Promise<unknown> {
  const res = await fetch(`${url}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ code }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { key } = (await res.json()) as { key: string };
  const ws = new WebSocket(`${url.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin: url, headers: { cookie } });
  try {
    return await new Promise((resolve, reject) => {
      ws.on('open', () => {
        ws.send(JSON.stringify({ t: 'hello', key }));
        ws.send(JSON.stringify({ t: 'call', id: 1, method, params }));
      });
      ws.on('message', (d) => {
        const f = JSON.parse(d.toString()) as ServerFrame;
        if (f.t === 'result' && f.id === 1) resolve(f.result);
        if (f.t === 'error') reject(new Error(JSON.stringify(f.error)));
      });
      ws.on('close', (c) => reject(new Error(`panel socket closed ${c}`)));
    });
  } finally {
    ws.close();
  }
}

describe('no live secret in a pane an agent can read', () => {
  it('serve, panel-url and agents create print no secret into a served pane; an agent reading every pane finds none', async () => {
    const s = await stage();
    // The serve banner in its pane names the panel but not its sign-in link.
    expect(await eventually(() => /panel: .+not shown in tmux pane/.exec(s.server.capture(s.hubPane)), 10_000, 'the serve banner')).toBeTruthy();

    // (a) panel-url refuses in a pane, with a hint, and prints no link.
    expect(await s.inShell('panel-url')).toBe(1);
    const shown = s.server.capture(s.shell, 500);
    expect(shown).toMatch(
      /uplink error \[core:Rejected\]: a panel sign-in link is not printed into tmux pane %\d+ .*any agent may read that pane — hint: run `uplink panel-url` from a terminal outside that tmux server/,
    );
    expect(shown).not.toMatch(CODE_LINK);

    // (c) agents create refuses before the agent exists; with --out the token goes to a 0600 file.
    expect(await s.inShell('agents create claude-pane')).toBe(1);
    expect(s.server.capture(s.shell, 500)).toMatch(/a new agent token is not printed into tmux pane %\d+ .* — hint: pass --out FILE/);
    expect((await s.outside('agents', '--json')).stdout).not.toContain('claude-pane');
    const outDir = mkdtempSync(join(tmpdir(), 'uplink-token-'));
    const tokenFile = join(outDir, 'claude.token');
    expect(await s.inShell(`agents create claude-pane --out '${tokenFile}'`)).toBe(0);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const agentToken = readFileSync(tokenFile, 'utf8').trim();
    expect(agentToken).toMatch(/^[\w-]{43}$/);
    expect(s.server.capture(s.shell, 500)).toContain(`agent claude-pane created. Its token is in ${tokenFile} (mode 0600`);

    // Outside tmux nothing changed: the link is printed.
    const outside = await s.outside('panel-url');
    expect(outside.code).toBe(0);
    expect(outside.stdout).toMatch(new RegExp(`^${s.url}/#code=[\\w-]+\\n$`));

    // The agent (here with the token just written) reads every pane and finds nothing to use.
    const seen = await (await agent(s, agentToken)).readEveryPane();
    expect(seen).toContain('uplink panel-url');
    expect(seen).not.toMatch(CODE_LINK);
    for (const secret of [agentToken, readFileSync(join(s.dataDir, 'token'), 'utf8').trim(), readFileSync(join(s.dataDir, 'operator.key'), 'utf8').trim()])
      expect(seen).not.toContain(secret);
  });

  it('in a served pane with a display, panel-url opens the browser with the link as one argument and does not print it', async () => {
    const s = await stage();
    const bin = mkdtempSync(join(tmpdir(), 'uplink-opener-'));
    const argvFile = join(bin, 'argv.json');
    // A stand-in xdg-open: records its argument vector.
    writeFileSync(
      join(bin, 'xdg-open'),
      `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));\n`,
    );
    chmodSync(join(bin, 'xdg-open'), 0o755);
    expect(await s.inShell('panel-url', `DISPLAY=:99 PATH='${bin}':"$PATH"`)).toBe(0);
    const argv = JSON.parse(readFileSync(argvFile, 'utf8')) as string[];
    expect(argv).toEqual([expect.stringMatching(new RegExp(`^${s.url}/#code=[\\w-]+$`))]);
    const shown = s.server.capture(s.shell, 500);
    expect(shown).toContain('opened the panel in your browser');
    expect(shown).not.toMatch(CODE_LINK);
    // The link it opened is live.
    const code = new URL(argv[0]!).hash.replace('#code=', '');
    const res = await fetch(`${s.url}/panel/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: s.url },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(200);
  });

  it('a secret typed into a pane is masked for the agent, in the audit and in the panel timeline', async () => {
    const s = await stage();
    const token = readFileSync(join(s.dataDir, 'token'), 'utf8').trim();
    const link = (await s.outside('panel-url')).stdout.trim();
    const code = new URL(link).hash.replace('#code=', '');
    // (b) The secrets get into a pane anyway: typed into `cat`, shown twice (echo and output).
    const peer = s.server.split('cat');
    s.server.typeLine(peer, `token ${token} link ${link}`);
    await eventually(() => s.server.capture(peer).split(token).length > 2, 10_000, 'the typed secrets');

    const a = await agent(s);
    const read = JSON.parse(await a.text('channel_observe', { channel: `tmux:${peer}`, op: 'read', args: { lines: 20 } })) as { text: string };
    expect(read.text).toContain(`token ${SECRET_MARKER} link ${s.url}/#code=${SECRET_MARKER}`);
    for (const secret of [token, code]) expect(read.text).not.toContain(secret);
    const seen = await a.readEveryPane();
    for (const secret of [token, code]) expect(seen).not.toContain(secret);

    // The audit: the rows `uplink log` shows, and every audit file's bytes.
    const log = await s.outside('log', '--json', '--limit', '1000');
    const rows = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { op?: string; channel?: string; kind?: string; invocation_id?: string; output?: unknown });
    const readRow = rows.find((r) => r.op === 'read' && r.channel === `tmux:${peer}` && r.kind === 'succeeded');
    expect(JSON.stringify(readRow?.output)).toContain(SECRET_MARKER);
    for (const secret of [token, code]) expect(log.stdout).not.toContain(secret);
    for (const { file, bytes } of auditFiles(s.dataDir)) for (const secret of [token, code]) expect(bytes.includes(secret), file).toBe(false);

    // The panel: its timeline and the read's detail (which carries the output).
    const panelCode = () => s.outside('panel-url').then((r) => new URL(r.stdout.trim()).hash.replace('#code=', ''));
    const timeline = await panelCall(s.url, await panelCode(), 'queryTimeline', { filter: {} });
    const detail = await panelCall(s.url, await panelCode(), 'getInvocation', { invocation_id: readRow!.invocation_id });
    expect(JSON.stringify(detail)).toContain(SECRET_MARKER);
    for (const secret of [token, code]) expect(JSON.stringify([timeline, detail])).not.toContain(secret);
  });
});
