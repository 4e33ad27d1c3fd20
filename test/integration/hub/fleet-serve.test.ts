/**
 * The fleet as an operator runs it: a real `nats-server -js`, three `uplink serve` processes (own
 * data directories, own tmux servers), an agent on hub a speaking MCP over HTTP, and the operator
 * at hub c's panel (a real panel session over the WebSocket). The agent reads a pane of hub b and,
 * once c's operator approves, types into it; NATS goes away and comes back; hub b is killed -9
 * in the middle of a call.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runCli, startServe, tmpDataDir } from '../../fixtures/hub-build';
import type { Served, TestBuild } from '../../fixtures/hub-build';
import { freePort, NATS_SERVER, startNatsServer, stopNatsServer, until } from '../../fixtures/nats-server';
import { TmuxTestServer } from '../../fixtures/tmux-server';
import { prerequisite } from '../../fixtures/prerequisite';
import { PANEL_WS_PROTOCOL } from '../../../src/shared/panel-ws';
import type { ServerFrame } from '../../../src/shared/panel-ws';
import type { FleetTimelinePage, FleetView, PendingApproval } from '../../../src/shared/panel-types';
import { buildTmuxHub, writeConfig } from '../tmux/hub-helpers';

const TOKEN = 'fleet-serve-token-81d2';
const natsServer = prerequisite(
  `nats-server (${NATS_SERVER})`,
  existsSync(NATS_SERVER),
  'apt-get install nats-server (or bash scripts/install-system-deps.sh)',
);

interface Member {
  name: string;
  dir: string;
  tmux: TmuxTestServer;
  pane: string;
  served: Served;
}

/** An operator's panel session on a served hub: sign in with the one-time code, then calls over the socket. */
async function operatorPanel(
  served: Served,
): Promise<{ call<T>(method: string, params?: unknown): Promise<T>; events: Array<{ event: string; payload: unknown }>; close(): void }> {
  const origin = served.url;
  const code = new URL(served.panel_url).hash.replace(/^#code=/, '');
  const res = await fetch(`${served.url}/panel/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ code }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const { key } = (await res.json()) as { key: string };
  const ws = new WebSocket(`${served.url.replace('http', 'ws')}/panel/ws`, PANEL_WS_PROTOCOL, { origin, headers: { cookie } });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const events: Array<{ event: string; payload: unknown }> = [];
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  ws.on('open', () => ws.send(JSON.stringify({ t: 'hello', key })));
  ws.on('message', (d) => {
    const f = JSON.parse(d.toString()) as ServerFrame;
    if (f.t === 'ready') ready();
    else if (f.t === 'event') events.push({ event: f.event, payload: f.payload });
    else if (f.t === 'result') waiting.get(f.id)?.resolve(f.result);
    else if (f.t === 'error' && f.id !== null) waiting.get(f.id)?.reject(new Error(f.error.message));
  });
  await isReady;
  let next = 1;
  return {
    call<T>(method: string, params: unknown = {}): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ t: 'call', id, method, params }));
      });
    },
    events,
    close: () => ws.close(),
  };
}

/** An agent on a served hub: the MCP SDK client with that hub's bearer token. */
async function agentOn(m: Member): Promise<Client> {
  const token = readFileSync(join(m.dir, 'token'), 'utf8').trim();
  const client = new Client({ name: 'fleet-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(m.served.mcp_url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (r: unknown): string => (r as ToolResult).content.map((c) => c.text ?? '').join('\n');

describe.skipIf(natsServer.skip)('three uplink serve hubs in a fleet, with real tmux panes', () => {
  let build: TestBuild;
  let port = 0;
  let nats: ChildProcess | undefined;
  const natsDir = tmpDataDir('uplink-nats-serve-');
  const members: Record<string, Member> = {};
  let agent: Client;
  let panelC: Awaited<ReturnType<typeof operatorPanel>>;

  const startMember = async (name: string, tmux: TmuxTestServer, dir: string): Promise<Served> => {
    const extra = { UPLINK_TEST_TMUX_SOCKET: tmux.socket, UPLINK_TEST_TMUX_PANE: tmux.firstPane };
    return startServe(build, dir, extra);
  };

  beforeAll(natsServer.check);
  beforeAll(async () => {
    build = await buildTmuxHub();
    port = await freePort();
    nats = await startNatsServer(port, ['-js', '-sd', natsDir, '--auth', TOKEN]);
    for (const name of ['a', 'b', 'c']) {
      const tmux = TmuxTestServer.start('sh');
      const pane = tmux.split('cat');
      tmux.setOption(pane, '@name', 'work');
      const dir = tmpDataDir(`uplink-fleet-serve-${name}-`);
      writeFileSync(join(dir, 'fleet.token'), `${TOKEN}\n`, { mode: 0o600 });
      writeConfig(dir, {
        fleet: { url: `nats://127.0.0.1:${port}`, name, token_file: 'fleet.token' },
        tmux: { write_allow: [{ pattern: 'work', tier: 'operator' }] },
      });
      members[name] = { name, dir, tmux, pane, served: await startMember(name, tmux, dir) };
    }
    agent = await agentOn(members.a!);
    panelC = await operatorPanel(members.c!.served);
    await until(
      'c to see a and b',
      async () => {
        const view = await panelC.call<FleetView>('fleetStatus');
        return ['a', 'b'].every((h) => view.members.some((m) => m.hub === h && m.state === 'connected'));
      },
      15_000,
    );
  }, 60_000);

  afterAll(async () => {
    panelC?.close();
    await agent?.close().catch(() => undefined);
    // Hub b was killed -9 on purpose: only the others are stopped.
    await Promise.all(
      Object.values(members)
        .filter((m) => m.served.child.signalCode === null)
        .map((m) => m.served.stop()),
    );
    for (const m of Object.values(members)) m.tmux.stop();
    await stopNatsServer(nats);
  });

  it('an agent on hub a reads a pane of hub b, and types into it once the operator approves on hub c’s panel', async () => {
    const b = members.b!;
    const channel = `b/tmux:${b.pane}`;
    b.tmux.typeLine(b.pane, 'marker-on-hub-b');
    const listed = textOf(await agent.callTool({ name: 'channel_list', arguments: {} }));
    expect(listed).toContain(channel);
    await until('the read to show the marker', async () =>
      textOf(await agent.callTool({ name: 'channel_observe', arguments: { channel, op: 'read', args: { lines: 20 } } })).includes('marker-on-hub-b'),
    );

    const typed = agent.callTool({ name: 'channel_act', arguments: { channel, op: 'type', args: { text: 'typed-from-hub-a' } } }, undefined, {
      timeout: 30_000,
    });
    const prompt = await until('hub c’s panel to show hub b’s prompt', async () =>
      (await panelC.call<PendingApproval[]>('listPendingApprovals')).find((p) => p.hub === 'b' && p.op === 'type'),
    );
    expect(prompt).toMatchObject({ channel, agent: { kind: 'mcp', agent_id: 'a/default' } });
    expect(await panelC.call('decide', { approval_id: prompt.approval_id, decision: 'once' })).toMatchObject({ accepted: true, granted: true });
    const result = await typed;
    expect(result.isError ?? false).toBe(false);
    await until('the text to reach hub b’s pane', () => b.tmux.capture(b.pane).includes('typed-from-hub-a'));
    // Hub b recorded the decision as made on hub c's panel, before the text went in.
    const log = await runCli(build, b.dir, ['log', '--json', '--limit', '50'], { UPLINK_TEST_TMUX_SOCKET: b.tmux.socket });
    const decision = log.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.type === 'decision' && e.op === 'type');
    expect(decision).toMatchObject({ granted: true, by: expect.stringMatching(/ on hub c$/), agent: { agent_id: 'a/default' } });
  });

  it('shows hub b’s records in the merged timeline of every panel', async () => {
    for (const m of ['a', 'c']) {
      const panel = m === 'c' ? panelC : await operatorPanel(members[m]!.served);
      await until(
        `hub ${m}’s merged timeline to show b’s approved type`,
        async () => {
          const page = await panel.call<FleetTimelinePage>('fleetTimeline', { hub: 'b' });
          return page.entries.some((e) => e.event.op === 'type' && e.event.outcome === 'succeeded');
        },
        15_000,
      );
      if (panel !== panelC) panel.close();
    }
  });

  it('killing NATS leaves each hub working alone, and restarting it heals the fleet', async () => {
    const a = members.a!;
    await stopNatsServer(nats);
    const local = `tmux:${a.pane}`;
    a.tmux.typeLine(a.pane, 'alone-on-a');
    await until('a local read on hub a', async () =>
      textOf(await agent.callTool({ name: 'channel_observe', arguments: { channel: local, op: 'read', args: { lines: 20 } } })).includes('alone-on-a'),
    );
    const remote = await until('the remote read to fail at once', async () => {
      const r = (await agent.callTool({ name: 'channel_observe', arguments: { channel: `b/tmux:${members.b!.pane}`, op: 'read', args: {} } })) as ToolResult;
      return r.isError && textOf(r);
    });
    expect(remote).toMatch(/\[fleet:Unavailable\].* — hint: /);
    const view = await until('c’s panel to show the others unreachable', async () => {
      const v = await panelC.call<FleetView>('fleetStatus');
      return !v.connected && v.members.some((m) => m.hub === 'b' && m.state === 'unreachable') && v;
    });
    expect(view.problem).toMatch(/unreachable since/);

    nats = await startNatsServer(port, ['-js', '-sd', natsDir, '--auth', TOKEN]);
    await until(
      'c to see a and b again',
      async () => {
        const v = await panelC.call<FleetView>('fleetStatus');
        return v.connected && ['a', 'b'].every((h) => v.members.some((m) => m.hub === h && m.state === 'connected'));
      },
      20_000,
    );
    await until(
      'a remote read to work again',
      async () =>
        !((await agent.callTool({ name: 'channel_observe', arguments: { channel: `b/tmux:${members.b!.pane}`, op: 'read', args: {} } })) as ToolResult).isError,
      20_000,
    );
    // What hub a recorded alone reaches hub c's merged timeline, with no gap in a's sequence.
    const page = await until(
      'c’s merged timeline to catch up with a',
      async () => {
        const p = await panelC.call<FleetTimelinePage>('fleetTimeline', { hub: 'a', limit: 5000 });
        return p.entries.some((e) => e.event.kind === 'rejected' && e.event.channel?.startsWith('b/') && e.event.error_kind === 'Unavailable') && p;
      },
      20_000,
    );
    const seqs = page.entries.map((e) => e.seq).sort((x, y) => x - y);
    expect(seqs.every((s, i) => i === 0 || s === seqs[i - 1]! + 1)).toBe(true);
  });

  it('a call to a hub killed -9 mid-call fails with [fleet:Unavailable] once that hub is missed', async () => {
    const b = members.b!;
    // The type waits for an operator on hub b; then hub b dies without a word.
    const typed = agent.callTool({ name: 'channel_act', arguments: { channel: `b/tmux:${b.pane}`, op: 'type', args: { text: 'never' } } }, undefined, {
      timeout: 30_000,
    });
    await until('the prompt on c', async () =>
      (await panelC.call<PendingApproval[]>('listPendingApprovals')).some((p) => p.hub === 'b' && (p.args as { text?: string }).text === 'never'),
    );
    const killed = Date.now();
    b.served.child.kill('SIGKILL');
    const result = (await typed) as ToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /\[fleet:Unavailable\]: hub b has not been heard from for \d+ s, during a call to it; whether the call ran there is unknown — hint: /,
    );
    expect(Date.now() - killed).toBeLessThan(12_000);
    await until('c’s panel to withdraw b’s prompt', async () => !(await panelC.call<PendingApproval[]>('listPendingApprovals')).some((p) => p.hub === 'b'));
    expect(b.tmux.capture(b.pane)).not.toContain('never');
  });
});
